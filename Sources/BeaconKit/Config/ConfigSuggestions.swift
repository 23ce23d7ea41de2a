// Unknown keys and tables, with a "did you mean" from edit distance. Keys are compared as
// TOML says, scalar for scalar (byte for byte in UTF-8), never with String's `==`, `hasPrefix`
// or `hasSuffix`: those use canonical equivalence, which is not TOML's equality, and whose
// normalization takes superlinear time on long runs of combining marks.

/// TOML key equality: the same sequence of Unicode scalars.
func sameKey(_ a: String, _ b: String) -> Bool { a.utf8.elementsEqual(b.utf8) }

extension ConfigValidator {
    /// What an unknown name was probably meant to be: `text` for the message, `key` the
    /// schema name ("beacon.major", or "beacon" for a table), `misplaced` when the name is
    /// right but the table is not.
    struct Suggestion {
        var text: String
        var key: String
        var misplaced = false
    }

    /// An entry the schema does not know. `table` is nil for entries of the root table.
    mutating func reportUnknown(table: String?, entry e: TOMLTable.Entry) {
        let isTable: Bool
        if case .table = e.value { isTable = true } else { isTable = false }
        let name = displayKey((table.map { [$0] } ?? []) + [e.key])
        let what = isTable ? "unknown table [\(name)]" : "unknown key `\(name)`"
        if let s = suggestion(table: table, key: e.key, isTable: isTable) {
            if s.misplaced {
                let here = table.map { "in [\($0)]" } ?? "at the top level"
                report("\(what): \(displayKey([e.key])) belongs in \(s.text), not \(here)", at: e.keyPosition, key: s.key)
            } else {
                report("\(what); did you mean \(s.text)?", at: e.keyPosition, key: s.key)
            }
        } else if let table, let keys = ConfigSchema.keys(of: table) {
            report("\(what); [\(table)] takes \(keys.joined(separator: ", "))", at: e.keyPosition)
        } else {
            report("\(what); the tables are \(ConfigSchema.tables.map { "[\($0.name)]" }.joined(separator: ", "))", at: e.keyPosition)
        }
    }

    private func suggestion(table: String?, key: String, isTable: Bool) -> Suggestion? {
        if table == nil, isTable {
            return closest(key, among: ConfigSchema.tables.map(\.name)).map { Suggestion(text: "[\($0)]", key: $0) }
        }
        // `enabled` is each frame table's switch; the whole beacon's is `advertising`.
        if let table, sameKey(table, "beacon"), sameKey(key, "enabled") {
            return Suggestion(text: "`beacon.advertising` (the whole beacon on or off air)", key: "beacon.advertising")
        }
        // A key of exactly this name in another table: it is in the wrong place.
        for t in ConfigSchema.tables where !(table.map { sameKey($0, t.name) } ?? false) {
            if let k = t.keys.first(where: { sameKey($0, key) }) {
                return Suggestion(text: "[\(t.name)]", key: "\(t.name).\(k)", misplaced: true)
            }
        }
        // A typo of a key of the same table, then of a key elsewhere.
        if let table, let keys = ConfigSchema.keys(of: table), let k = closest(key, among: keys) {
            return Suggestion(text: "`\(table).\(k)`", key: "\(table).\(k)")
        }
        let lastParts = ConfigSchema.tables.flatMap(\.keys)
        if let k = closest(key, among: lastParts), let t = ConfigSchema.tables.first(where: { $0.keys.contains(k) }) {
            return Suggestion(text: "`\(t.name).\(k)`", key: "\(t.name).\(k)")
        }
        if table == nil, let t = closest(key, among: ConfigSchema.tables.map(\.name)) { return Suggestion(text: "[\(t)]", key: t) }
        return nil
    }
}

/// Scalars with ASCII letters folded to lower case (the schema's names are ASCII).
private func foldedScalars(_ s: String) -> [Unicode.Scalar] {
    s.unicodeScalars.map { $0.value >= 0x41 && $0.value <= 0x5A ? Unicode.Scalar($0.value + 0x20)! : $0 }
}

/// The candidate nearest to `word`, if near enough to be a likely typo. Linear in `word`.
func closest(_ word: String, among candidates: [String]) -> String? {
    let w = foldedScalars(word)
    var best: (String, [Unicode.Scalar], Int)?
    for c in candidates {
        let cs = Array(c.unicodeScalars)
        let d = editDistance(w, cs)
        if d < (best?.2 ?? Int.max) { best = (c, cs, d) }
    }
    guard let (c, cs, d) = best else { return nil }
    let limit = max(2, min(w.count, cs.count) / 2)
    if d <= limit { return c }
    if w.count >= 3, cs.starts(with: w) || w.starts(with: cs) { return c }
    return nil
}

func editDistance(_ a: String, _ b: String) -> Int {
    editDistance(Array(a.unicodeScalars), Array(b.unicodeScalars))
}

/// Levenshtein distance over Unicode scalars; inputs longer than 64 scalars are not compared
/// (keys that long are no typo of ours), so the cost stays bounded.
func editDistance(_ x: [Unicode.Scalar], _ y: [Unicode.Scalar]) -> Int {
    if x.count > 64 || y.count > 64 { return Int.max / 2 }
    if x.isEmpty { return y.count }
    if y.isEmpty { return x.count }
    var prev = Array(0...y.count)
    var cur = [Int](repeating: 0, count: y.count + 1)
    for i in 1...x.count {
        cur[0] = i
        for j in 1...y.count {
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (x[i - 1] == y[j - 1] ? 0 : 1))
        }
        swap(&prev, &cur)
    }
    return prev[y.count]
}
