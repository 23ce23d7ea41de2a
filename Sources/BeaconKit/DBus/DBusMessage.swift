/// One D-Bus message (specification, "Message Protocol"): a fixed 12-byte start, the header
/// fields as `a(yv)`, padding to 8, the body. Encoded little-endian; decoded in either order,
/// every length checked, capped at `maximumLength` (far above anything bluetoothd sends us; a
/// longer one is dropped by `DBusMessageReader`).
public struct DBusMessage: Equatable, Sendable {
    public enum Kind: UInt8, Sendable {
        case methodCall = 1, methodReturn = 2, error = 3, signal = 4
    }

    /// NO_REPLY_EXPECTED.
    public static let noReplyExpected: UInt8 = 0x1
    /// What one message from the bus may take; a larger one ends the connection.
    public static let maximumLength = 1 << 20
    /// The specification's limit (128 MiB): a longer length is not a message at all.
    public static let specificationMaximum = 1 << 27

    public var kind: Kind
    public var flags: UInt8 = 0
    public var serial: UInt32 = 0
    public var path: String?
    public var interface: String?
    public var member: String?
    public var errorName: String?
    public var replySerial: UInt32?
    public var destination: String?
    public var sender: String?
    public var body: [DBusValue] = []
    /// Decoded from its header alone: `body` is empty whatever was sent (`DBusMessageReader`).
    public var bodySkipped = false

    public init(kind: Kind, flags: UInt8 = 0, serial: UInt32 = 0, path: String? = nil, interface: String? = nil,
                member: String? = nil, errorName: String? = nil, replySerial: UInt32? = nil,
                destination: String? = nil, sender: String? = nil, body: [DBusValue] = []) {
        self.kind = kind; self.flags = flags; self.serial = serial; self.path = path
        self.interface = interface; self.member = member; self.errorName = errorName
        self.replySerial = replySerial; self.destination = destination; self.sender = sender; self.body = body
    }

    public static func methodCall(serial: UInt32, destination: String, path: String, interface: String,
                                  member: String, body: [DBusValue] = []) -> DBusMessage {
        DBusMessage(kind: .methodCall, serial: serial, path: path, interface: interface, member: member,
                    destination: destination, body: body)
    }

    /// The answer to `call`.
    public static func methodReturn(serial: UInt32, to call: DBusMessage, body: [DBusValue] = []) -> DBusMessage {
        DBusMessage(kind: .methodReturn, serial: serial, replySerial: call.serial, destination: call.sender, body: body)
    }

    /// An error answer to `call`, with the human-readable text as its one string argument.
    public static func error(serial: UInt32, to call: DBusMessage, name: String, text: String) -> DBusMessage {
        DBusMessage(kind: .error, serial: serial, errorName: name, replySerial: call.serial,
                    destination: call.sender, body: [.string(text)])
    }

    public var signature: String { body.map { $0.type.signature }.joined() }

    /// The first argument as text (an error's message, a string reply).
    public var firstString: String? { body.first?.stringValue }

    public var expectsReply: Bool { kind == .methodCall && flags & Self.noReplyExpected == 0 }

    // MARK: wire format

    public func encoded() -> [UInt8] {
        var fields: [DBusValue] = []
        func field(_ code: UInt8, _ v: DBusValue?) {
            if let v { fields.append(.structure([.byte(code), .variant(v)])) }
        }
        field(1, path.map { .objectPath($0) })
        field(2, interface.map { .string($0) })
        field(3, member.map { .string($0) })
        field(4, errorName.map { .string($0) })
        field(5, replySerial.map { .uint32($0) })
        field(6, destination.map { .string($0) })
        field(7, sender.map { .string($0) })
        if !body.isEmpty { field(8, .signature(signature)) }
        var e = DBusEncoder()
        e.bytes = [UInt8(ascii: "l"), kind.rawValue, flags, 1]
        e.appendInteger(UInt32(0))   // body length, below
        e.appendInteger(serial)
        e.append(.array(.structure([.byte, .variant]), fields))
        e.pad(to: 8)
        let bodyStart = e.bytes.count
        for v in body { e.append(v) }
        let bodyLength = UInt32(e.bytes.count - bodyStart)
        withUnsafeBytes(of: bodyLength.littleEndian) { raw in
            for (i, b) in raw.enumerated() { e.bytes[4 + i] = b }
        }
        return e.bytes
    }

    /// How many bytes the message at the start of `bytes` takes, once its first 16 are there
    /// (nil before that). Throws for a start no message has, or a length over the cap.
    public static func frameLength(_ bytes: ArraySlice<UInt8>) throws(DBusWireError) -> Int? {
        guard bytes.count >= 16 else { return nil }
        let head = Array(bytes.prefix(16))
        let big: Bool
        switch head[0] {
        case UInt8(ascii: "l"): big = false
        case UInt8(ascii: "B"): big = true
        default: throw .badHeader("byte order '\(head[0])'")
        }
        guard head[3] == 1 else { throw .badHeader("protocol version \(head[3])") }
        var d = DBusDecoder(head, bigEndian: big, offset: 4)
        let bodyLength = Int(try d.readInteger(UInt32.self))
        d.offset = 12
        let fieldsLength = Int(try d.readInteger(UInt32.self))
        guard bodyLength <= specificationMaximum, fieldsLength <= specificationMaximum else { throw .tooLarge(max(bodyLength, fieldsLength)) }
        let total = (16 + fieldsLength + 7) / 8 * 8 + bodyLength
        guard total <= specificationMaximum else { throw .tooLarge(total) }
        return total
    }

    /// Decodes exactly one whole message (`frameLength` of it); without `body`, its header only
    /// (the body's length checked, its values not read: `bodySkipped`).
    public static func decode(_ bytes: [UInt8], body: Bool = true) throws(DBusWireError) -> DBusMessage {
        guard let total = try frameLength(bytes[...]) else { throw .truncated }
        guard total <= maximumLength else { throw .tooLarge(total) }
        guard total == bytes.count else { throw .truncated }
        guard let kind = Kind(rawValue: bytes[1]) else { throw .badHeader("message type \(bytes[1])") }
        var d = DBusDecoder(bytes, bigEndian: bytes[0] == UInt8(ascii: "B"), offset: 4)
        let bodyLength = Int(try d.readInteger(UInt32.self))
        var m = DBusMessage(kind: kind, flags: bytes[2], serial: try d.readInteger(UInt32.self))
        guard m.serial != 0 else { throw .badHeader("serial 0") }
        guard case .array(_, let fields) = try d.read(.array(.structure([.byte, .variant]))) else { throw .truncated }
        var signature = ""
        for f in fields {
            guard case .structure(let pair) = f, pair.count == 2, case .byte(let code) = pair[0],
                  case .variant(let v) = pair[1] else { throw .badHeader("header field") }
            switch (code, v) {
            case (1, .objectPath(let s)): m.path = s
            case (2, .string(let s)): m.interface = s
            case (3, .string(let s)): m.member = s
            case (4, .string(let s)): m.errorName = s
            case (5, .uint32(let n)): m.replySerial = n
            case (6, .string(let s)): m.destination = s
            case (7, .string(let s)): m.sender = s
            case (8, .signature(let s)): signature = s
            case (9, .uint32): break   // UNIX_FDS: we pass none and read none
            case (1...9, _): throw .badHeader("header field \(code) of type \(v.type.signature)")
            default: break   // unknown fields are ignored, as the specification says
            }
        }
        switch kind {
        case .methodCall: guard m.path != nil, m.member != nil else { throw .badHeader("method call without path or member") }
        case .signal: guard m.path != nil, m.interface != nil, m.member != nil else { throw .badHeader("signal without path, interface or member") }
        case .error: guard m.errorName != nil, m.replySerial != nil else { throw .badHeader("error without name or reply serial") }
        case .methodReturn: guard m.replySerial != nil else { throw .badHeader("method return without reply serial") }
        }
        try d.align(8)
        guard d.offset + bodyLength == bytes.count else { throw .badHeader("body length") }
        guard body else {
            m.bodySkipped = true
            return m
        }
        for t in try DBusType.parse(signature: signature) { m.body.append(try d.read(t)) }
        guard d.offset == bytes.count else { throw .badValue("body longer than its signature") }
        return m
    }
}

/// Splits a byte stream from the bus into whole messages (a `StreamFramer` cut by the header's
/// lengths). A message longer than `DBusMessage.maximumLength` (none of ours is: any local user
/// may send one) is dropped as it streams in, never kept whole, and the connection goes on.
public struct DBusMessageReader: Sendable {
    private var framer = StreamFramer(maximumFrameSize: DBusMessage.maximumLength)
    /// The lengths of the messages dropped since the last `feed`'s caller looked.
    public private(set) var dropped: [Int] = []
    public init() {}

    /// Adds what was read; returns each whole message in it, its body decoded only when
    /// `wantsBody` says so of its header. Throws (and the connection should end) on bytes that
    /// are not a message.
    public mutating func feed(_ bytes: [UInt8], wantsBody: (DBusMessage) -> Bool = { _ in true }) throws(DBusWireError) -> [DBusMessage] {
        framer.append(bytes)
        dropped = []
        var out: [DBusMessage] = []
        while let item = try framer.next(frameLength: DBusMessage.frameLength, tooLarge: DBusWireError.tooLarge,
                                                skippingUpTo: DBusMessage.specificationMaximum) {
            switch item {
            case .frame(let frame):
                let bytes = Array(frame)
                let header = try DBusMessage.decode(bytes, body: false)
                out.append(wantsBody(header) ? try DBusMessage.decode(bytes) : header)
            case .skipped(let n): dropped.append(n)
            }
        }
        return out
    }
}
