/// A small JSON reader (RFC 8259) for what the project itself wrote: the status file that
/// `altbeacond health` reads back. Whatever the bytes, it returns a value or nil, never traps;
/// nesting is bounded so a hostile file cannot exhaust the stack.
public indirect enum JSONValue: Equatable, Sendable {
    case null
    case bool(Bool)
    /// Kept as written: the status file's numbers are integers, compared as text is enough.
    case number(String)
    case string(String)
    case array([JSONValue])
    case object([(String, JSONValue)])

    public static func == (a: JSONValue, b: JSONValue) -> Bool {
        switch (a, b) {
        case (.null, .null): true
        case (.bool(let x), .bool(let y)): x == y
        case (.number(let x), .number(let y)), (.string(let x), .string(let y)): x == y
        case (.array(let x), .array(let y)): x == y
        case (.object(let x), .object(let y)): x.count == y.count && zip(x, y).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
        default: false
        }
    }

    public subscript(key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members.first { $0.0 == key }?.1
    }

    public var string: String? { if case .string(let s) = self { s } else { nil } }
    public var integer: Int64? { if case .number(let n) = self { Int64(n) } else { nil } }

    /// The one value in `bytes` (whitespace around it allowed); nil for anything else.
    public static func parse(_ bytes: [UInt8]) -> JSONValue? {
        var p = JSONParser(bytes: bytes)
        guard let v = p.value(depth: 0) else { return nil }
        p.skipSpace()
        return p.i == bytes.count ? v : nil
    }
}

/// A JSON string literal (RFC 8259): quotes, backslashes and control characters escaped; DEL
/// and the C1 controls too, so no raw control byte reaches a terminal. The one JSON string
/// escaper: scan, the status file, health, the monitor's exports and MQTT all write with it.
public func jsonString(_ s: String) -> String {
    var out = "\""
    for u in s.unicodeScalars {
        switch u {
        case "\"": out += "\\\""
        case "\\": out += "\\\\"
        case "\n": out += "\\n"
        case "\r": out += "\\r"
        case "\t": out += "\\t"
        case _ where u.isControlCharacter:
            out += "\\u00" + hexString(CollectionOfOne(UInt8(u.value)))
        default: out.unicodeScalars.append(u)
        }
    }
    return out + "\""
}

private struct JSONParser {
    let bytes: [UInt8]
    var i = 0
    static let maximumDepth = 64

    mutating func skipSpace() {
        while i < bytes.count, [0x20, 0x09, 0x0a, 0x0d].contains(bytes[i]) { i += 1 }
    }

    mutating func literal(_ word: String) -> Bool {
        let w = Array(word.utf8)
        guard i + w.count <= bytes.count, Array(bytes[i..<(i + w.count)]) == w else { return false }
        i += w.count
        return true
    }

    mutating func value(depth: Int) -> JSONValue? {
        guard depth < Self.maximumDepth else { return nil }
        skipSpace()
        guard i < bytes.count else { return nil }
        switch bytes[i] {
        case UInt8(ascii: "n"): return literal("null") ? .null : nil
        case UInt8(ascii: "t"): return literal("true") ? .bool(true) : nil
        case UInt8(ascii: "f"): return literal("false") ? .bool(false) : nil
        case UInt8(ascii: "\""): return string().map { .string($0) }
        case UInt8(ascii: "["):
            i += 1
            var items: [JSONValue] = []
            skipSpace()
            if i < bytes.count, bytes[i] == UInt8(ascii: "]") { i += 1; return .array(items) }
            while true {
                guard let v = value(depth: depth + 1) else { return nil }
                items.append(v)
                skipSpace()
                guard i < bytes.count else { return nil }
                i += 1
                if bytes[i - 1] == UInt8(ascii: "]") { return .array(items) }
                guard bytes[i - 1] == UInt8(ascii: ",") else { return nil }
            }
        case UInt8(ascii: "{"):
            i += 1
            var members: [(String, JSONValue)] = []
            skipSpace()
            if i < bytes.count, bytes[i] == UInt8(ascii: "}") { i += 1; return .object(members) }
            while true {
                skipSpace()
                guard i < bytes.count, bytes[i] == UInt8(ascii: "\""), let key = string() else { return nil }
                skipSpace()
                guard i < bytes.count, bytes[i] == UInt8(ascii: ":") else { return nil }
                i += 1
                guard let v = value(depth: depth + 1) else { return nil }
                members.append((key, v))
                skipSpace()
                guard i < bytes.count else { return nil }
                i += 1
                if bytes[i - 1] == UInt8(ascii: "}") { return .object(members) }
                guard bytes[i - 1] == UInt8(ascii: ",") else { return nil }
            }
        default:
            return number()
        }
    }

    mutating func number() -> JSONValue? {
        let start = i
        if i < bytes.count, bytes[i] == UInt8(ascii: "-") { i += 1 }
        var digits = 0
        while i < bytes.count, (bytes[i] >= 0x30 && bytes[i] <= 0x39) || [0x2e, 0x65, 0x45, 0x2b, 0x2d].contains(bytes[i]) {
            if bytes[i] >= 0x30 && bytes[i] <= 0x39 { digits += 1 }
            i += 1
        }
        guard digits > 0 else { return nil }
        return .number(String(decoding: bytes[start..<i], as: UTF8.self))
    }

    /// A string literal at `i` (its opening quote); escapes decoded, surrogate pairs joined.
    mutating func string() -> String? {
        i += 1
        var scalars = String.UnicodeScalarView()
        var run: [UInt8] = []
        func flush() -> Bool {
            guard !run.isEmpty else { return true }
            guard let s = String(validating: run, as: UTF8.self) else { return false }
            scalars.append(contentsOf: s.unicodeScalars)
            run = []
            return true
        }
        while i < bytes.count {
            let c = bytes[i]
            i += 1
            switch c {
            case UInt8(ascii: "\""):
                return flush() ? String(scalars) : nil
            case UInt8(ascii: "\\"):
                guard flush(), i < bytes.count else { return nil }
                let e = bytes[i]
                i += 1
                switch e {
                case UInt8(ascii: "\""): scalars.append("\"")
                case UInt8(ascii: "\\"): scalars.append("\\")
                case UInt8(ascii: "/"): scalars.append("/")
                case UInt8(ascii: "b"): scalars.append("\u{8}")
                case UInt8(ascii: "f"): scalars.append("\u{c}")
                case UInt8(ascii: "n"): scalars.append("\n")
                case UInt8(ascii: "r"): scalars.append("\r")
                case UInt8(ascii: "t"): scalars.append("\t")
                case UInt8(ascii: "u"):
                    guard var u = hex4() else { return nil }
                    if (0xd800..<0xdc00).contains(u) {
                        guard literal("\\u"), let low = hex4(), (0xdc00..<0xe000).contains(low) else { return nil }
                        u = 0x10000 + ((u - 0xd800) << 10) + (low - 0xdc00)
                    }
                    guard let scalar = Unicode.Scalar(u) else { return nil }
                    scalars.append(scalar)
                default: return nil
                }
            case 0..<0x20:
                return nil
            default:
                run.append(c)
            }
        }
        return nil
    }

    mutating func hex4() -> UInt32? {
        guard i + 4 <= bytes.count else { return nil }
        var v: UInt32 = 0
        for b in bytes[i..<(i + 4)] {
            guard let d = hexDigit(b) else { return nil }
            v = v << 4 | UInt32(d)
        }
        i += 4
        return v
    }

    func hexDigit(_ b: UInt8) -> UInt8? {
        switch b {
        case 0x30...0x39: b - 0x30
        case 0x41...0x46: b - 0x41 + 10
        case 0x61...0x66: b - 0x61 + 10
        default: nil
        }
    }
}
