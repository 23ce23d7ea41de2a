// MQTT 3.1.1 (OASIS Standard, 29 October 2014) on the wire: the fixed header (2.2), the Remaining
// Length (2.2.3), the data representations (1.5), and the errors a decoder reports. Pure values,
// no I/O; the packets are in MQTTPacket.swift and the files beside it.

/// Why bytes from the broker were not an MQTT packet, or why a packet could not be built. A peer
/// that breaks the protocol is disconnected (MQTT 4.8), so every error ends the connection.
public enum MQTTWireError: Error, Equatable, Sendable {
    /// The packet, or a field in it (a string, a packet identifier), ends before its length says.
    case truncated
    /// Bytes left after the last field of the packet (the count of them).
    case trailingBytes(Int)
    /// A Remaining Length whose 4th byte has the continuation bit: it would take a 5th (2.2.3).
    case remainingLengthTooLong
    /// A packet of this many bytes in all, over the maximum (the reader's, or the protocol's).
    case tooLarge(Int)
    /// Packet type 0 or 15 (2.2.1).
    case reservedPacketType(UInt8)
    /// The fixed header's first byte has flags its type does not allow (2.2.2, MQTT-3.3.1-2).
    case badFlags(UInt8)
    /// A QoS of 3 (MQTT-3.3.1-4), or a requested QoS byte with reserved bits (MQTT-3-8.3-4).
    case badQoS(UInt8)
    /// A string that is not well-formed UTF-8 (MQTT-1.5.3-1).
    case invalidUTF8
    /// A string with U+0000 in it (MQTT-1.5.3-2).
    case nulCharacter
    /// A string or binary field of this many bytes, over the 65,535 a 2-byte length can say.
    case stringTooLong(Int)
    /// An empty topic name or filter (MQTT-4.7.3-1).
    case emptyTopic
    /// A topic name with '+' or '#' in it (MQTT-3.3.2-2).
    case wildcardInTopicName
    /// A topic filter with '+' or '#' not alone in its level, or '#' not last (4.7.1).
    case badTopicFilter
    /// A packet identifier of 0 (MQTT-2.3.1-1), one missing on a QoS 1 or 2 PUBLISH, or one on QoS 0.
    case badPacketID
    /// A CONNECT whose protocol name is not "MQTT" or whose level is not 4 (3.1.2.1, 3.1.2.2).
    case badProtocol(name: String, level: UInt8)
    /// CONNECT flags the specification forbids (MQTT-3.1.2-3, -11, -13, -14, -15, -22).
    case badConnectFlags(UInt8)
    /// CONNACK acknowledge flags with reserved bits set (3.2.2.1), or Session Present with a
    /// refusal (MQTT-3.2.2-4).
    case badConnAckFlags(UInt8)
    /// A CONNACK or SUBACK return code the specification does not define.
    case badReturnCode(UInt8)
    /// A SUBSCRIBE, SUBACK or UNSUBSCRIBE with no topic filters or return codes (MQTT-3.8.3-3, MQTT-3.10.3-2).
    case noTopicFilters
}

/// Quality of service (4.3).
public enum MQTTQoS: UInt8, Sendable, Comparable {
    case atMostOnce = 0, atLeastOnce = 1, exactlyOnce = 2

    init(checking bits: UInt8) throws(MQTTWireError) {
        guard let q = MQTTQoS(rawValue: bits) else { throw .badQoS(bits) }
        self = q
    }

    public static func < (a: MQTTQoS, b: MQTTQoS) -> Bool { a.rawValue < b.rawValue }
}

/// The control packet types (2.2.1); 0 and 15 are reserved.
public enum MQTTPacketType: UInt8, Sendable, CustomStringConvertible {
    case connect = 1, connAck, publish, pubAck, pubRec, pubRel, pubComp
    case subscribe, subAck, unsubscribe, unsubAck, pingReq, pingResp, disconnect

    /// The flags of the fixed header where the specification fixes them (2.2.2); nil for PUBLISH.
    var fixedFlags: UInt8? {
        switch self {
        case .publish: return nil
        case .pubRel, .subscribe, .unsubscribe: return 0x2
        default: return 0
        }
    }

    /// The name the specification gives it, for log lines.
    public var description: String {
        switch self {
        case .connect: return "CONNECT"
        case .connAck: return "CONNACK"
        case .publish: return "PUBLISH"
        case .pubAck: return "PUBACK"
        case .pubRec: return "PUBREC"
        case .pubRel: return "PUBREL"
        case .pubComp: return "PUBCOMP"
        case .subscribe: return "SUBSCRIBE"
        case .subAck: return "SUBACK"
        case .unsubscribe: return "UNSUBSCRIBE"
        case .unsubAck: return "UNSUBACK"
        case .pingReq: return "PINGREQ"
        case .pingResp: return "PINGRESP"
        case .disconnect: return "DISCONNECT"
        }
    }

    /// The type of a fixed header's first byte, once its flags are checked: fixed ones must be
    /// as the table says; PUBLISH's QoS must not be 3, and DUP must be 0 with QoS 0.
    init(checking byte: UInt8) throws(MQTTWireError) {
        guard let t = MQTTPacketType(rawValue: byte >> 4) else { throw .reservedPacketType(byte >> 4) }
        let flags = byte & 0x0f
        if let fixed = t.fixedFlags {
            guard flags == fixed else { throw .badFlags(byte) }
        } else {
            let qos = (flags >> 1) & 0x3
            guard qos != 3 else { throw .badQoS(qos) }
            guard qos != 0 || flags & 0x8 == 0 else { throw .badFlags(byte) }
        }
        self = t
    }
}

/// The Remaining Length (2.2.3): 7 bits a byte, least significant first, at most 4 bytes.
enum MQTTRemainingLength {
    /// 268,435,455, what 4 bytes can say.
    static let maximum = 0x0FFF_FFFF

    static func encode(_ value: Int) -> [UInt8] {
        var out: [UInt8] = []
        var n = value
        repeat {
            var b = UInt8(n & 0x7f)
            n >>= 7
            if n > 0 { b |= 0x80 }
            out.append(b)
        } while n > 0 && out.count < 4
        return out
    }

    /// The value and how many bytes it took, from the start of `bytes`; nil while its last byte
    /// has not arrived. Throws when a 4th byte has the continuation bit.
    static func decode(_ bytes: ArraySlice<UInt8>) throws(MQTTWireError) -> (value: Int, count: Int)? {
        var value = 0
        var count = 0
        for b in bytes {
            value |= Int(b & 0x7f) << (7 * count)
            count += 1
            if b & 0x80 == 0 { return (value, count) }
            if count == 4 { throw .remainingLengthTooLong }
        }
        return nil
    }
}

/// Checks a string we are about to send: at most 65,535 bytes of UTF-8 and no U+0000 (1.5.3).
/// (A Swift string is always well-formed UTF-8.)
func mqttCheckString(_ s: String) throws(MQTTWireError) {
    let n = s.utf8.count
    guard n <= 0xffff else { throw .stringTooLong(n) }
    guard !s.utf8.contains(0) else { throw .nulCharacter }
}

/// Appends fields in the order a packet has them.
struct MQTTEncoder {
    var bytes: [UInt8] = []

    mutating func append(_ b: UInt8) { bytes.append(b) }

    mutating func appendUInt16(_ v: UInt16) {
        bytes.append(UInt8(v >> 8))
        bytes.append(UInt8(v & 0xff))
    }

    /// A UTF-8 encoded string (1.5.3): a 2-byte length, then the bytes. The packets' initializers
    /// have checked the length.
    mutating func appendString(_ s: String) {
        appendUInt16(UInt16(truncatingIfNeeded: s.utf8.count))
        bytes += s.utf8
    }

    /// Binary data, as the will message and the password are: a 2-byte length, then the bytes.
    mutating func appendBinary(_ b: [UInt8]) {
        appendUInt16(UInt16(truncatingIfNeeded: b.count))
        bytes += b
    }
}

/// Reads one packet's fields after the fixed header, checking every length before reading.
struct MQTTDecoder {
    let bytes: ArraySlice<UInt8>
    private(set) var index: Int

    init(_ bytes: ArraySlice<UInt8>) {
        self.bytes = bytes
        index = bytes.startIndex
    }

    var remaining: Int { bytes.endIndex - index }
    var isAtEnd: Bool { index == bytes.endIndex }

    mutating func readByte() throws(MQTTWireError) -> UInt8 {
        guard remaining >= 1 else { throw .truncated }
        defer { index += 1 }
        return bytes[index]
    }

    mutating func readUInt16() throws(MQTTWireError) -> UInt16 {
        guard remaining >= 2 else { throw .truncated }
        defer { index += 2 }
        return UInt16(bytes[index]) << 8 | UInt16(bytes[index + 1])
    }

    /// A packet identifier: never 0 (MQTT-2.3.1-1).
    mutating func readPacketID() throws(MQTTWireError) -> UInt16 {
        let id = try readUInt16()
        guard id != 0 else { throw .badPacketID }
        return id
    }

    mutating func readBinary() throws(MQTTWireError) -> [UInt8] {
        let n = Int(try readUInt16())
        guard remaining >= n else { throw .truncated }
        defer { index += n }
        return Array(bytes[index..<(index + n)])
    }

    /// A UTF-8 encoded string: well-formed (no overlong forms, surrogates or code points past
    /// U+10FFFF; MQTT-1.5.3-1) and without U+0000 (MQTT-1.5.3-2). A BOM is kept (MQTT-1.5.3-3).
    mutating func readString() throws(MQTTWireError) -> String {
        let raw = try readBinary()
        // Decoding replaces each ill-formed sequence with U+FFFD, so the bytes of the result
        // equal the input exactly when the input was well-formed.
        let s = String(decoding: raw, as: UTF8.self)
        guard s.utf8.elementsEqual(raw) else { throw .invalidUTF8 }
        guard !raw.contains(0) else { throw .nulCharacter }
        return s
    }

    /// What is left of the packet (a PUBLISH's payload).
    mutating func readRest() -> [UInt8] {
        defer { index = bytes.endIndex }
        return Array(bytes[index...])
    }
}
