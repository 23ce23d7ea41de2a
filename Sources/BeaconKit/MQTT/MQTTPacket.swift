// One MQTT 3.1.1 control packet (section 3), either way, and the reader that splits the bytes
// from the broker into packets. In the manner of Eclipse Paho's embedded MQTTPacket: one small
// encoder and decoder for each type (in MQTTConnect.swift, MQTTPublish.swift and
// MQTTSubscribe.swift), no I/O. Every packet type decodes, whoever would send it: what a client
// may receive (CONNACK, PUBLISH, the acknowledgements, SUBACK, UNSUBACK, PINGRESP) is for the
// client to decide.

public enum MQTTPacket: Equatable, Sendable {
    case connect(MQTTConnect)
    case connAck(MQTTConnAck)
    case publish(MQTTPublish)
    /// The acknowledgements carry the identifier of the packet they answer, never 0 on the wire.
    case pubAck(packetID: UInt16)
    case pubRec(packetID: UInt16)
    case pubRel(packetID: UInt16)
    case pubComp(packetID: UInt16)
    case subscribe(MQTTSubscribe)
    case subAck(MQTTSubAck)
    case unsubscribe(MQTTUnsubscribe)
    case unsubAck(packetID: UInt16)
    case pingReq
    case pingResp
    case disconnect

    /// The most bytes one packet can take: a fixed header of 5 bytes and the largest Remaining Length.
    public static let maximumSize = 5 + MQTTRemainingLength.maximum

    public var type: MQTTPacketType {
        switch self {
        case .connect: return .connect
        case .connAck: return .connAck
        case .publish: return .publish
        case .pubAck: return .pubAck
        case .pubRec: return .pubRec
        case .pubRel: return .pubRel
        case .pubComp: return .pubComp
        case .subscribe: return .subscribe
        case .subAck: return .subAck
        case .unsubscribe: return .unsubscribe
        case .unsubAck: return .unsubAck
        case .pingReq: return .pingReq
        case .pingResp: return .pingResp
        case .disconnect: return .disconnect
        }
    }

    /// The packet on the wire: fixed header (type, flags, Remaining Length), variable header,
    /// payload. (An acknowledgement with packet identifier 0 encodes, and decodes as an error.)
    public func encoded() -> [UInt8] {
        var e = MQTTEncoder()
        var flags = type.fixedFlags ?? 0
        switch self {
        case .connect(let p): p.encodeBody(&e)
        case .connAck(let p): p.encodeBody(&e)
        case .publish(let p):
            flags = p.flags
            p.encodeBody(&e)
        case .pubAck(let id), .pubRec(let id), .pubRel(let id), .pubComp(let id), .unsubAck(let id):
            e.appendUInt16(id)
        case .subscribe(let p): p.encodeBody(&e)
        case .subAck(let p): p.encodeBody(&e)
        case .unsubscribe(let p): p.encodeBody(&e)
        case .pingReq, .pingResp, .disconnect: break
        }
        return [type.rawValue << 4 | flags] + MQTTRemainingLength.encode(e.bytes.count) + e.bytes
    }

    /// How many bytes the packet at the start of `bytes` takes, once its fixed header is there
    /// (nil before that). Throws as soon as the first byte is no packet's (a reserved type, flags
    /// the type does not allow), the Remaining Length takes a 5th byte, or the packet would be
    /// larger than `maximum` bytes in all.
    public static func frameLength(_ bytes: ArraySlice<UInt8>, maximum: Int = maximumSize) throws(MQTTWireError) -> Int? {
        try fixedHeader(bytes, maximum: maximum)?.total
    }

    /// The fixed header at the start of `bytes`: the type, the length of the header, the length
    /// of the whole packet; nil until all of the header is there.
    private static func fixedHeader(_ bytes: ArraySlice<UInt8>, maximum: Int) throws(MQTTWireError)
        -> (type: MQTTPacketType, headerLength: Int, total: Int)? {
        guard let first = bytes.first else { return nil }
        let type = try MQTTPacketType(checking: first)
        guard let (remaining, count) = try MQTTRemainingLength.decode(bytes.dropFirst()) else { return nil }
        let total = 1 + count + remaining
        guard total <= maximum else { throw .tooLarge(total) }
        return (type, 1 + count, total)
    }

    /// Decodes exactly one whole packet: `bytes` must be as long as its fixed header says.
    public static func decode(_ bytes: ArraySlice<UInt8>) throws(MQTTWireError) -> MQTTPacket {
        guard let header = try fixedHeader(bytes, maximum: maximumSize), bytes.count >= header.total else { throw .truncated }
        guard bytes.count == header.total else { throw .trailingBytes(bytes.count - header.total) }
        var d = MQTTDecoder(bytes.dropFirst(header.headerLength))
        let packet = try decodeBody(header.type, flags: bytes[bytes.startIndex] & 0x0f, &d)
        guard d.isAtEnd else { throw .trailingBytes(d.remaining) }
        return packet
    }

    public static func decode(_ bytes: [UInt8]) throws(MQTTWireError) -> MQTTPacket {
        try decode(bytes[...])
    }

    /// One decoder for each type; the fixed header's flags are already checked.
    private static func decodeBody(_ type: MQTTPacketType, flags: UInt8, _ d: inout MQTTDecoder) throws(MQTTWireError) -> MQTTPacket {
        switch type {
        case .connect: return .connect(try MQTTConnect.decodeBody(&d))
        case .connAck: return .connAck(try MQTTConnAck.decodeBody(&d))
        case .publish: return .publish(try MQTTPublish.decodeBody(flags: flags, &d))
        case .pubAck: return .pubAck(packetID: try d.readPacketID())
        case .pubRec: return .pubRec(packetID: try d.readPacketID())
        case .pubRel: return .pubRel(packetID: try d.readPacketID())
        case .pubComp: return .pubComp(packetID: try d.readPacketID())
        case .subscribe: return .subscribe(try MQTTSubscribe.decodeBody(&d))
        case .subAck: return .subAck(try MQTTSubAck.decodeBody(&d))
        case .unsubscribe: return .unsubscribe(try MQTTUnsubscribe.decodeBody(&d))
        case .unsubAck: return .unsubAck(packetID: try d.readPacketID())
        case .pingReq: return .pingReq
        case .pingResp: return .pingResp
        case .disconnect: return .disconnect
        }
    }
}

/// Splits the byte stream from the broker into packets (a `StreamFramer` cut by the fixed
/// header's length). A fixed header announcing more than `maximumPacketSize` is an error before
/// any of its body is kept, so a broker cannot make us allocate without bound.
public struct MQTTPacketReader: Sendable {
    /// 256 KiB: far above what a beacon's observer exchanges with its broker.
    public static let defaultMaximumPacketSize = 256 * 1024

    private var framer: StreamFramer
    /// Once the stream is out of step, every later call gives the same error.
    public private(set) var failure: MQTTWireError?

    public init(maximumPacketSize: Int = MQTTPacketReader.defaultMaximumPacketSize) {
        framer = StreamFramer(maximumFrameSize: maximumPacketSize)
    }

    public var maximumPacketSize: Int { framer.maximumFrameSize }

    /// Bytes received and not yet part of a packet returned.
    public var bufferedCount: Int { framer.bufferedCount }

    /// Adds bytes as they were read (nothing, once the reader has failed).
    public mutating func append<S: Sequence>(_ bytes: S) where S.Element == UInt8 {
        guard failure == nil else { return }
        framer.append(Array(bytes))
    }

    /// The next whole packet, or nil until more bytes arrive. Throws (and the connection should
    /// end) on bytes that are not a packet, or a packet over the maximum.
    public mutating func next() throws(MQTTWireError) -> MQTTPacket? {
        if let failure { throw failure }
        do throws(MQTTWireError) {
            let maximum = framer.maximumFrameSize
            guard let frame = try framer.next(frameLength: { (b) throws(MQTTWireError) in try MQTTPacket.frameLength(b, maximum: maximum) },
                                              tooLarge: MQTTWireError.tooLarge) else { return nil }
            return try MQTTPacket.decode(frame)
        } catch {
            failure = error
            framer.reset()
            throw error
        }
    }

    /// Adds bytes and returns every whole packet now in the buffer. On an error the packets of
    /// this call before it are lost; use `append` and `next` to act on each before the error.
    public mutating func feed<S: Sequence>(_ bytes: S) throws(MQTTWireError) -> [MQTTPacket] where S.Element == UInt8 {
        append(bytes)
        var out: [MQTTPacket] = []
        while let p = try next() { out.append(p) }
        return out
    }
}
