/// A value of the supported TOML subset.
public enum TOMLValue: Equatable, Sendable {
    case string(String)
    case integer(Int64)
    case bool(Bool)
    case table(TOMLTable)

    /// "a string", "an integer", "a boolean", "a table": for messages.
    public var typeDescription: String {
        switch self {
        case .string: return "a string"
        case .integer: return "an integer"
        case .bool: return "a boolean"
        case .table: return "a table"
        }
    }
}

/// A TOML table: keys in the order they first appear, each with the source positions of
/// its key and its value (for a table, where it was defined).
public struct TOMLTable: Equatable, Sendable {
    public struct Entry: Equatable, Sendable {
        public var key: String
        public var keyPosition: SourcePosition
        public var value: TOMLValue
        public var valuePosition: SourcePosition
    }

    /// Where the table was defined: its `[header]`, or the first key that created it.
    /// The root table is at 1:1.
    public var position: SourcePosition
    public private(set) var entries: [Entry] = []
    /// Keyed by UTF-8 bytes: TOML keys are equal only when their scalars are (String's `==` and
    /// hashing use canonical equivalence, and normalizing costs superlinear time on long runs of
    /// combining marks).
    private var index: [[UInt8]: Int] = [:]

    public init(position: SourcePosition = .start) {
        self.position = position
    }

    public var count: Int { entries.count }
    public var isEmpty: Bool { entries.isEmpty }
    public var keys: [String] { entries.map(\.key) }

    public func entry(_ key: String) -> Entry? {
        guard let k = index[Array(key.utf8)] else { return nil }
        return entries[k]
    }

    public subscript(key: String) -> TOMLValue? { entry(key)?.value }

    /// Adds a key; returns false (and changes nothing) when the key is already there.
    @discardableResult
    public mutating func insert(_ key: String, _ value: TOMLValue,
                                keyPosition: SourcePosition, valuePosition: SourcePosition) -> Bool {
        let bytes = Array(key.utf8)
        guard index[bytes] == nil else { return false }
        index[bytes] = entries.count
        entries.append(Entry(key: key, keyPosition: keyPosition, value: value, valuePosition: valuePosition))
        return true
    }
}

/// Displays a key path as TOML would write it: bare parts as is, others quoted.
func displayKey(_ parts: [String]) -> String {
    parts.map { part -> String in
        if !part.isEmpty, part.utf8.allSatisfy(isBareKeyByte) { return part }
        var s = "\""
        for u in part.unicodeScalars {
            switch u {
            case "\"": s += "\\\""
            case "\\": s += "\\\\"
            default:
                if u.value < 0x20 || u.value == 0x7F { s += "\\u" + String(scalarName(u.value).dropFirst(2)) } else { s.unicodeScalars.append(u) }
            }
        }
        return s + "\""
    }.joined(separator: ".")
}
