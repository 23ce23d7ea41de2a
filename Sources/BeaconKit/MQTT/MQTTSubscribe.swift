// SUBSCRIBE (MQTT 3.1.1 section 3.8), SUBACK (3.9) and UNSUBSCRIBE (3.10): each initializer
// checks what the decoder checks, then the body encoder and decoder. UNSUBACK carries only a
// packet identifier and is a case of `MQTTPacket`.

/// One topic filter of a SUBSCRIBE and the most QoS we want its messages at (3.8.3).
public struct MQTTSubscription: Equatable, Sendable {
    public var topicFilter: String
    public var qos: MQTTQoS

    /// Checked when it becomes part of an `MQTTSubscribe`.
    public init(_ topicFilter: String, qos: MQTTQoS = .atMostOnce) {
        self.topicFilter = topicFilter
        self.qos = qos
    }
}

/// The Remaining Length of a packet identifier and `filters` (each a 2-byte length and its
/// bytes, plus `extra` bytes each), checked against the maximum.
private func checkListLength(_ filters: [String], extra: Int) throws(MQTTWireError) {
    var length = 2
    for f in filters { length += 2 + f.utf8.count + extra }
    guard length <= MQTTRemainingLength.maximum else { throw .tooLarge(length) }
}

/// SUBSCRIBE (fixed header flags 0010).
public struct MQTTSubscribe: Equatable, Sendable {
    public let packetID: UInt16
    public let subscriptions: [MQTTSubscription]

    /// Throws for a packet identifier of 0, no subscriptions (MQTT-3.8.3-3), a filter that is
    /// not a valid topic filter, or a packet past the Remaining Length's maximum.
    public init(packetID: UInt16, subscriptions: [MQTTSubscription]) throws(MQTTWireError) {
        guard packetID != 0 else { throw .badPacketID }
        guard !subscriptions.isEmpty else { throw .noTopicFilters }
        for s in subscriptions { try MQTTTopic.validateFilter(s.topicFilter) }
        try checkListLength(subscriptions.map(\.topicFilter), extra: 1)
        self.packetID = packetID
        self.subscriptions = subscriptions
    }

    func encodeBody(_ e: inout MQTTEncoder) {
        e.appendUInt16(packetID)
        for s in subscriptions {
            e.appendString(s.topicFilter)
            e.append(s.qos.rawValue)
        }
    }

    static func decodeBody(_ d: inout MQTTDecoder) throws(MQTTWireError) -> MQTTSubscribe {
        let packetID = try d.readPacketID()
        var subscriptions: [MQTTSubscription] = []
        while !d.isAtEnd {
            let filter = try d.readString()
            // The upper 6 bits of the Requested QoS byte are reserved (MQTT-3-8.3-4).
            let qos = try MQTTQoS(checking: try d.readByte())
            subscriptions.append(MQTTSubscription(filter, qos: qos))
        }
        return try MQTTSubscribe(packetID: packetID, subscriptions: subscriptions)
    }
}

/// One return code of a SUBACK (3.9.3): the QoS granted, or 0x80 for a refused filter.
public enum MQTTSubAckReturnCode: Equatable, Sendable {
    case granted(MQTTQoS)
    case failure

    public var rawValue: UInt8 {
        switch self {
        case .granted(let q): return q.rawValue
        case .failure: return 0x80
        }
    }

    /// Nil for the reserved values (MQTT-3.9.3-2).
    public init?(rawValue: UInt8) {
        if rawValue == 0x80 { self = .failure; return }
        guard let q = MQTTQoS(rawValue: rawValue) else { return nil }
        self = .granted(q)
    }
}

/// SUBACK: one return code for each filter of the SUBSCRIBE, in order (MQTT-3.8.4-5).
public struct MQTTSubAck: Equatable, Sendable {
    public let packetID: UInt16
    public let returnCodes: [MQTTSubAckReturnCode]

    /// Throws for a packet identifier of 0, or no return codes (a SUBSCRIBE has a filter at least).
    public init(packetID: UInt16, returnCodes: [MQTTSubAckReturnCode]) throws(MQTTWireError) {
        guard packetID != 0 else { throw .badPacketID }
        guard !returnCodes.isEmpty else { throw .noTopicFilters }
        guard 2 + returnCodes.count <= MQTTRemainingLength.maximum else { throw .tooLarge(2 + returnCodes.count) }
        self.packetID = packetID
        self.returnCodes = returnCodes
    }

    func encodeBody(_ e: inout MQTTEncoder) {
        e.appendUInt16(packetID)
        for c in returnCodes { e.append(c.rawValue) }
    }

    static func decodeBody(_ d: inout MQTTDecoder) throws(MQTTWireError) -> MQTTSubAck {
        let packetID = try d.readPacketID()
        var codes: [MQTTSubAckReturnCode] = []
        while !d.isAtEnd {
            let raw = try d.readByte()
            guard let code = MQTTSubAckReturnCode(rawValue: raw) else { throw .badReturnCode(raw) }
            codes.append(code)
        }
        return try MQTTSubAck(packetID: packetID, returnCodes: codes)
    }
}

/// UNSUBSCRIBE (fixed header flags 0010).
public struct MQTTUnsubscribe: Equatable, Sendable {
    public let packetID: UInt16
    public let topicFilters: [String]

    /// Throws for a packet identifier of 0, no filters (MQTT-3.10.3-2), a filter that is not a
    /// valid topic filter, or a packet past the Remaining Length's maximum.
    public init(packetID: UInt16, topicFilters: [String]) throws(MQTTWireError) {
        guard packetID != 0 else { throw .badPacketID }
        guard !topicFilters.isEmpty else { throw .noTopicFilters }
        for f in topicFilters { try MQTTTopic.validateFilter(f) }
        try checkListLength(topicFilters, extra: 0)
        self.packetID = packetID
        self.topicFilters = topicFilters
    }

    func encodeBody(_ e: inout MQTTEncoder) {
        e.appendUInt16(packetID)
        for f in topicFilters { e.appendString(f) }
    }

    static func decodeBody(_ d: inout MQTTDecoder) throws(MQTTWireError) -> MQTTUnsubscribe {
        let packetID = try d.readPacketID()
        var filters: [String] = []
        while !d.isAtEnd { filters.append(try d.readString()) }
        return try MQTTUnsubscribe(packetID: packetID, topicFilters: filters)
    }
}
