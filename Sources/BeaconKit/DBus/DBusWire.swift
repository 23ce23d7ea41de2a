/// Why bytes from the bus were not a D-Bus value or message. The connection that sent them is
/// dropped: the specification says a peer that breaks the protocol is disconnected.
public enum DBusWireError: Error, Equatable, Sendable {
    case truncated
    case badSignature(String)
    case badValue(String)
    case badHeader(String)
    case tooLarge(Int)
}

/// Appends values in the D-Bus wire format, little-endian (what we send; 'l' in the header).
/// Alignment is counted from the start of the message, so one encoder writes one message.
struct DBusEncoder {
    var bytes: [UInt8] = []

    mutating func pad(to alignment: Int) {
        while bytes.count % alignment != 0 { bytes.append(0) }
    }

    mutating func appendInteger<T: FixedWidthInteger>(_ v: T) {
        pad(to: MemoryLayout<T>.size)
        withUnsafeBytes(of: v.littleEndian) { bytes.append(contentsOf: $0) }
    }

    mutating func appendString(_ s: String) {
        appendInteger(UInt32(s.utf8.count))
        bytes += s.utf8
        bytes.append(0)
    }

    mutating func appendSignature(_ s: String) {
        bytes.append(UInt8(truncatingIfNeeded: s.utf8.count))
        bytes += s.utf8
        bytes.append(0)
    }

    mutating func append(_ value: DBusValue) {
        switch value {
        case .byte(let v): bytes.append(v)
        case .boolean(let v): appendInteger(UInt32(v ? 1 : 0))
        case .int16(let v): appendInteger(v)
        case .uint16(let v): appendInteger(v)
        case .int32(let v): appendInteger(v)
        case .uint32(let v), .unixFD(let v): appendInteger(v)
        case .int64(let v): appendInteger(v)
        case .uint64(let v), .double(bits: let v): appendInteger(v)
        case .string(let s), .objectPath(let s): appendString(s)
        case .signature(let s): appendSignature(s)
        case .variant(let v):
            appendSignature(v.type.signature)
            append(v)
        case .array(let element, let items):
            appendInteger(UInt32(0))
            let lengthAt = bytes.count - 4
            pad(to: element.alignment)   // padding before the first element is not counted
            let start = bytes.count
            for item in items { append(item) }
            let length = UInt32(bytes.count - start)
            withUnsafeBytes(of: length.littleEndian) { raw in
                for (i, b) in raw.enumerated() { bytes[lengthAt + i] = b }
            }
        case .byteArray(let b):
            appendInteger(UInt32(b.count))
            bytes += b
        case .structure(let fields):
            pad(to: 8)
            for f in fields { append(f) }
        case .dictEntry(let k, let v):
            pad(to: 8)
            append(k)
            append(v)
        }
    }
}

/// Reads values of known types from one message, checking every length before reading.
/// Either byte order: the bus passes messages on in their sender's.
struct DBusDecoder {
    let bytes: [UInt8]
    let bigEndian: Bool
    var offset: Int
    /// Containers (arrays, structures, dict entries, variants) being read: at most 64 in all, as
    /// the specification says. Signatures bound arrays and structures, but variants nest through
    /// values, and without this a small message could recurse thousands of calls deep.
    private var depth = 0
    static let maximumDepth = 64

    private mutating func enter() throws(DBusWireError) {
        guard depth < Self.maximumDepth else { throw .badValue("containers nested more than \(Self.maximumDepth) deep") }
        depth += 1
    }

    init(_ bytes: [UInt8], bigEndian: Bool, offset: Int = 0) {
        self.bytes = bytes; self.bigEndian = bigEndian; self.offset = offset
    }

    mutating func align(_ alignment: Int) throws(DBusWireError) {
        let next = (offset + alignment - 1) / alignment * alignment
        guard next <= bytes.count else { throw .truncated }
        offset = next
    }

    mutating func readInteger<T: FixedWidthInteger>(_: T.Type) throws(DBusWireError) -> T {
        T(truncatingIfNeeded: try readUnsigned(size: MemoryLayout<T>.size))
    }

    /// The unsigned integer of `size` bytes (1 to 8) at the next `size`-aligned offset. Not
    /// generic: the generic loop went unspecialized (typed throws), and every header field of
    /// every message a local flood sends us passes here.
    private mutating func readUnsigned(size n: Int) throws(DBusWireError) -> UInt64 {
        try align(n)
        guard offset + n <= bytes.count else { throw .truncated }
        var v: UInt64 = 0
        for i in 0..<n { v = v << 8 | UInt64(bytes[offset + (bigEndian ? i : n - 1 - i)]) }
        offset += n
        return v
    }

    private mutating func readText(count: Int) throws(DBusWireError) -> String {
        guard count >= 0, offset + count < bytes.count else { throw .truncated }
        let raw = bytes[offset..<(offset + count)]
        guard bytes[offset + count] == 0, !raw.contains(0) else { throw .badValue("a string without its terminating nul") }
        // ASCII (every name and path on the bus) needs no validating, which is generic and slow.
        let ascii = raw.allSatisfy { $0 < 0x80 }
        guard let s = ascii ? String(decoding: raw, as: UTF8.self) : String(validating: raw, as: UTF8.self) else { throw .badValue("a string that is not UTF-8") }
        offset += count + 1
        return s
    }

    mutating func readString() throws(DBusWireError) -> String {
        let n = try readInteger(UInt32.self)
        guard n < 1 << 26 else { throw .tooLarge(Int(n)) }
        return try readText(count: Int(n))
    }

    mutating func readSignature() throws(DBusWireError) -> String {
        guard offset < bytes.count else { throw .truncated }
        let n = Int(bytes[offset])
        offset += 1
        return try readText(count: n)
    }

    mutating func read(_ type: DBusType) throws(DBusWireError) -> DBusValue {
        switch type {
        case .byte:
            guard offset < bytes.count else { throw .truncated }
            offset += 1
            return .byte(bytes[offset - 1])
        case .boolean:
            let v = try readInteger(UInt32.self)
            guard v <= 1 else { throw .badValue("boolean \(v)") }
            return .boolean(v == 1)
        case .int16: return .int16(try readInteger(Int16.self))
        case .uint16: return .uint16(try readInteger(UInt16.self))
        case .int32: return .int32(try readInteger(Int32.self))
        case .uint32: return .uint32(try readInteger(UInt32.self))
        case .unixFD: return .unixFD(try readInteger(UInt32.self))
        case .int64: return .int64(try readInteger(Int64.self))
        case .uint64: return .uint64(try readInteger(UInt64.self))
        case .double: return .double(bits: try readInteger(UInt64.self))
        case .string: return .string(try readString())
        case .objectPath:
            let path = try readString()
            guard DBusNames.isObjectPath(path) else { throw .badValue("object path '\(path)'") }
            return .objectPath(path)
        case .signature:
            let s = try readSignature()
            _ = try DBusType.parse(signature: s)
            return .signature(s)
        case .variant:
            let s = try readSignature()
            let types = try DBusType.parse(signature: s)
            guard types.count == 1 else { throw .badValue("variant signature '\(s)'") }
            try enter()
            defer { depth -= 1 }
            return .variant(try read(types[0]))
        case .array(let element):
            try enter()
            defer { depth -= 1 }
            let length = Int(try readInteger(UInt32.self))
            guard length <= 1 << 26 else { throw .tooLarge(length) }
            try align(element.alignment)
            let end = offset + length
            guard end <= bytes.count else { throw .truncated }
            if element == .byte {
                offset = end
                return .byteArray(Array(bytes[(end - length)..<end]))
            }
            var items: [DBusValue] = []
            while offset < end { items.append(try read(element)) }
            guard offset == end else { throw .badValue("an array element past the array's length") }
            return .array(element, items)
        case .structure(let fields):
            try enter()
            defer { depth -= 1 }
            try align(8)
            var values: [DBusValue] = []
            for f in fields { values.append(try read(f)) }
            return .structure(values)
        case .dictEntry(let k, let v):
            try enter()
            defer { depth -= 1 }
            try align(8)
            let key = try read(k)
            return .dictEntry(key, try read(v))
        }
    }
}

/// Name checks from the specification, for what arrives (object paths) and what we are given.
public enum DBusNames {
    /// "/" or "/a/b_c/D1": elements of [A-Za-z0-9_], no empty element, no trailing slash.
    public static func isObjectPath(_ path: String) -> Bool {
        let b = Array(path.utf8)
        guard b.first == UInt8(ascii: "/") else { return false }
        if b.count == 1 { return true }
        guard b.last != UInt8(ascii: "/") else { return false }
        var previousSlash = false
        for c in b {
            if c == UInt8(ascii: "/") {
                if previousSlash { return false }
                previousSlash = true
                continue
            }
            previousSlash = false
            let ok = (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || c == UInt8(ascii: "_")
            if !ok { return false }
        }
        return true
    }
}
