// Issue 50: the config checker's core, below the frames and the schema: problems collected and
// ranked, and the typed key readers every table's reader (the schema's, each frame type's) uses.

/// Checks a parsed table tree against the schema. Collects every problem; they are ranked so
/// the first names the real mistake: unknown or misplaced keys and bad values (in file order)
/// before missing required keys, and a key reported missing is not reported at all when an
/// unknown key was taken for it ("did you mean"): `mjaor = 1` is about mjaor, not major.
///
/// Size (about 750 lines over 7 files, 3 fields): a reader per table of both config files (SPEC §2,
/// monitor.toml), each reporting into the one list of problems ranked so the first is the real
/// mistake; split, the ranking and the "did you mean" that drops a missing key would span types.
struct ConfigValidator {
    enum Rank: Int, Comparable {
        case unknownOrValue = 0, missing = 1
        static func < (a: Rank, b: Rank) -> Bool { a.rawValue < b.rawValue }
    }
    struct Problem {
        var message: String
        var position: SourcePosition
        var rank: Rank
        /// For a missing key, or the key an unknown one was taken for: "beacon.major".
        var key: String?
    }

    let source: SourceText
    /// Messages and positions; only the first few become diagnostics (finding a line's text
    /// costs a scan of the file, which must not happen per problem).
    private(set) var problems: [Problem] = []
    private var reported: Set<ReportedProblem> = []
    /// The message as UTF-8: String's own hashing and == normalize (NFC), which is quadratic in a
    /// run of combining marks, and an unknown key's message quotes the key whole.
    private struct ReportedProblem: Hashable {
        let position: SourcePosition
        let message: [UInt8]
    }

    init(source: SourceText) { self.source = source }

    /// The problems in rank order, then file order; missing keys an unknown key explains are dropped.
    func diagnostics(limit: Int) -> [ConfigDiagnostic] {
        // (keys as UTF-8: exact scalars, and linear, as ReportedProblem)
        let explained = Set(problems.compactMap { $0.rank == .unknownOrValue ? $0.key.map { Array($0.utf8) } : nil })
        let kept = problems.filter { !($0.rank == .missing && $0.key.map { explained.contains(Array($0.utf8)) } == true) }
        let sorted = kept.enumerated().sorted { a, b in
            (a.element.rank, a.element.position, a.offset) < (b.element.rank, b.element.position, b.offset)
        }
        return sorted.prefix(limit).map { source.diagnostic($0.element.message, at: $0.element.position) }
    }

    mutating func report(_ message: String, at p: SourcePosition, rank: Rank = .unknownOrValue, key: String? = nil) {
        // A key two readers take (`[eddystone] power_0m`, UID's and URL's) is one problem.
        guard reported.insert(ReportedProblem(position: p, message: Array(message.utf8))).inserted else { return }
        problems.append(Problem(message: message, position: p, rank: rank, key: key))
    }

    // MARK: - Typed keys

    mutating func missing(_ t: TOMLTable, _ table: String, _ key: String) {
        report("missing required key `\(table).\(key)` in [\(table)]", at: t.position, rank: .missing, key: "\(table).\(key)")
    }

    mutating func wrongType(_ e: TOMLTable.Entry, _ table: String, expected: String) {
        report("expected \(expected) for \(table).\(e.key), found \(e.value.typeDescription)", at: e.valuePosition)
    }

    mutating func integer(_ t: TOMLTable, _ table: String, _ key: String, _ range: ClosedRange<Int64>,
                          required: Bool = false) -> Int64? {
        guard let e = t.entry(key) else {
            if required { missing(t, table, key) }
            return nil
        }
        guard case .integer(let v) = e.value else {
            wrongType(e, table, expected: "an integer")
            return nil
        }
        guard range.contains(v) else {
            report("\(table).\(key) must be between \(range.lowerBound) and \(range.upperBound), found \(v)", at: e.valuePosition)
            return nil
        }
        return v
    }

    mutating func string(_ t: TOMLTable, _ table: String, _ key: String, required: Bool = false) -> (String, SourcePosition)? {
        guard let e = t.entry(key) else {
            if required { missing(t, table, key) }
            return nil
        }
        guard case .string(let s) = e.value else {
            wrongType(e, table, expected: "a string")
            return nil
        }
        return (s, e.valuePosition)
    }

    mutating func boolean(_ t: TOMLTable, _ table: String, _ key: String) -> Bool? {
        guard let e = t.entry(key) else { return nil }
        guard case .bool(let b) = e.value else {
            wrongType(e, table, expected: "a boolean (true or false)")
            return nil
        }
        return b
    }

    mutating func readUUID(_ t: TOMLTable, table: String = "beacon", required: Bool = true) -> [UInt8]? {
        guard let (s, p) = string(t, table, "uuid", required: required) else { return nil }
        guard let bytes = parseUUID(s) else {
            report("\(table).uuid must be 32 hex digits, plain or grouped 8-4-4-4-12 with hyphens (like \"2f234454-cf6d-4a0f-adf2-f4911ba9ffa6\")", at: p)
            return nil
        }
        return bytes
    }
}

/// 32 hex digits, plain or as 8-4-4-4-12; any case.
func parseUUID(_ s: String) -> [UInt8]? {
    let u = Array(s.utf8)
    var digits: [UInt8]
    if u.count == 32 {
        digits = u
    } else if u.count == 36, [8, 13, 18, 23].allSatisfy({ u[$0] == UInt8(ascii: "-") }) {
        digits = []
        for (i, c) in u.enumerated() where ![8, 13, 18, 23].contains(i) { digits.append(c) }
    } else {
        return nil
    }
    var out: [UInt8] = []
    out.reserveCapacity(16)
    var k = 0
    while k + 1 < digits.count {
        guard let hi = hexValue(digits[k]), let lo = hexValue(digits[k + 1]) else { return nil }
        out.append(hi << 4 | lo)
        k += 2
    }
    return out.count == 16 ? out : nil
}
