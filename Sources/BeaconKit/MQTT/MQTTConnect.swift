// CONNECT (MQTT 3.1.1 section 3.1) and CONNACK (3.2): each with its initializer, which checks
// what the decoder checks (so a packet that exists encodes to bytes that decode back to it), its
// body encoder, and its body decoder.

/// The Will: what the broker publishes for us when the connection ends without a DISCONNECT
/// (3.1.2.5).
public struct MQTTWill: Equatable, Sendable {
    public let topic: String
    public let message: [UInt8]
    public let qos: MQTTQoS
    public let retain: Bool

    /// Throws for a topic that is not a valid topic name, or a message over 65,535 bytes.
    public init(topic: String, message: [UInt8], qos: MQTTQoS = .atMostOnce, retain: Bool = false) throws(MQTTWireError) {
        try MQTTTopic.validateName(topic)
        guard message.count <= 0xffff else { throw .stringTooLong(message.count) }
        self.topic = topic; self.message = message; self.qos = qos; self.retain = retain
    }
}

/// CONNECT: the first packet a client sends (3.1). Protocol name "MQTT", level 4.
public struct MQTTConnect: Equatable, Sendable {
    public let clientID: String
    public let cleanSession: Bool
    /// Seconds; 0 turns the keep-alive mechanism off (3.1.2.10).
    public let keepAlive: UInt16
    public let will: MQTTWill?
    public let username: String?
    public let password: [UInt8]?

    static let protocolName = "MQTT"
    static let protocolLevel: UInt8 = 4

    /// Throws for strings over 65,535 bytes or with U+0000, a password over 65,535 bytes, or a
    /// password without a user name (MQTT-3.1.2-22). An empty client ID asks the broker to
    /// assign one, which it does only with a clean session (MQTT-3.1.3-7).
    public init(clientID: String, cleanSession: Bool = true, keepAlive: UInt16, will: MQTTWill? = nil,
                username: String? = nil, password: [UInt8]? = nil) throws(MQTTWireError) {
        try mqttCheckString(clientID)
        if let username { try mqttCheckString(username) }
        if let password, password.count > 0xffff { throw .stringTooLong(password.count) }
        self.clientID = clientID; self.cleanSession = cleanSession; self.keepAlive = keepAlive
        self.will = will; self.username = username; self.password = password
        guard password == nil || username != nil else { throw .badConnectFlags(flags) }
    }

    /// The Connect Flags byte (3.1.2.3).
    var flags: UInt8 {
        var f: UInt8 = 0
        if username != nil { f |= 0x80 }
        if password != nil { f |= 0x40 }
        if let will {
            f |= 0x04 | will.qos.rawValue << 3
            if will.retain { f |= 0x20 }
        }
        if cleanSession { f |= 0x02 }
        return f
    }

    func encodeBody(_ e: inout MQTTEncoder) {
        e.appendString(Self.protocolName)
        e.append(Self.protocolLevel)
        e.append(flags)
        e.appendUInt16(keepAlive)
        e.appendString(clientID)
        if let will {
            e.appendString(will.topic)
            e.appendBinary(will.message)
        }
        if let username { e.appendString(username) }
        if let password { e.appendBinary(password) }
    }

    static func decodeBody(_ d: inout MQTTDecoder) throws(MQTTWireError) -> MQTTConnect {
        let name = try d.readString()
        let level = try d.readByte()
        guard name == protocolName, level == protocolLevel else { throw .badProtocol(name: name, level: level) }
        let flags = try d.readByte()
        let hasWill = flags & 0x04 != 0
        let willQoS = (flags >> 3) & 0x3
        // Reserved bit 0 (MQTT-3.1.2-3); QoS 3 (MQTT-3.1.2-14); will QoS or retain without a will
        // (MQTT-3.1.2-13, -15); a password without a user name (MQTT-3.1.2-22).
        guard flags & 0x01 == 0, willQoS != 3, hasWill || flags & 0x38 == 0,
              flags & 0xC0 != 0x40 else { throw .badConnectFlags(flags) }
        let keepAlive = try d.readUInt16()
        let clientID = try d.readString()
        var will: MQTTWill? = nil
        if hasWill {
            let topic = try d.readString()
            let message = try d.readBinary()
            will = try MQTTWill(topic: topic, message: message, qos: try MQTTQoS(checking: willQoS), retain: flags & 0x20 != 0)
        }
        var username: String? = nil
        if flags & 0x80 != 0 { username = try d.readString() }
        var password: [UInt8]? = nil
        if flags & 0x40 != 0 { password = try d.readBinary() }
        return try MQTTConnect(clientID: clientID, cleanSession: flags & 0x02 != 0, keepAlive: keepAlive,
                               will: will, username: username, password: password)
    }
}

/// The CONNACK return codes (3.2.2.3, table 3.1); 6 to 255 are reserved.
public enum MQTTConnectReturnCode: UInt8, Sendable, CustomStringConvertible {
    case accepted = 0
    case unacceptableProtocolVersion = 1
    case identifierRejected = 2
    case serverUnavailable = 3
    case badUserNameOrPassword = 4
    case notAuthorized = 5

    /// As the specification words it, for log lines.
    public var description: String {
        switch self {
        case .accepted: return "connection accepted"
        case .unacceptableProtocolVersion: return "unacceptable protocol version"
        case .identifierRejected: return "identifier rejected"
        case .serverUnavailable: return "server unavailable"
        case .badUserNameOrPassword: return "bad user name or password"
        case .notAuthorized: return "not authorized"
        }
    }
}

/// CONNACK: the broker's answer to CONNECT (3.2).
public struct MQTTConnAck: Equatable, Sendable {
    /// Whether the broker kept a session for this client ID (3.2.2.2).
    public let sessionPresent: Bool
    public let returnCode: MQTTConnectReturnCode

    /// Throws for Session Present with a refusal (MQTT-3.2.2-4).
    public init(sessionPresent: Bool = false, returnCode: MQTTConnectReturnCode) throws(MQTTWireError) {
        guard !sessionPresent || returnCode == .accepted else { throw .badConnAckFlags(1) }
        self.sessionPresent = sessionPresent
        self.returnCode = returnCode
    }

    func encodeBody(_ e: inout MQTTEncoder) {
        e.append(sessionPresent ? 1 : 0)
        e.append(returnCode.rawValue)
    }

    static func decodeBody(_ d: inout MQTTDecoder) throws(MQTTWireError) -> MQTTConnAck {
        let flags = try d.readByte()
        guard flags & 0xfe == 0 else { throw .badConnAckFlags(flags) }
        let raw = try d.readByte()
        guard let code = MQTTConnectReturnCode(rawValue: raw) else { throw .badReturnCode(raw) }
        return try MQTTConnAck(sessionPresent: flags == 1, returnCode: code)
    }
}
