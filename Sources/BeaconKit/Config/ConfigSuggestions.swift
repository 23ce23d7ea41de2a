// Unknown keys and tables, with a "did you mean" from edit distance.

extension ConfigValidator {
    /// An entry the schema does not know. `table` is nil for entries of the root table.
    mutating func reportUnknown(table: String?, entry e: TOMLTable.Entry) {
        let isTable: Bool
        if case .table = e.value { isTable = true } else { isTable = false }
        let name = displayKey((table.map { [$0] } ?? []) + [e.key])
        let what = isTable ? "unknown table [\(name)]" : "unknown key `\(name)`"
        if let s = suggestion(table: table, key: e.key, isTable: isTable) {
            report("\(what); did you mean \(s)?", at: e.keyPosition)
        } else if let table, let keys = ConfigSchema.keys(of: table) {
            report("\(what); [\(table)] takes \(keys.joined(separator: ", "))", at: e.keyPosition)
        } else {
            report("\(what); the tables are \(ConfigSchema.tables.map { "[\($0.name)]" }.joined(separator: ", "))", at: e.keyPosition)
        }
    }

    private func suggestion(table: String?, key: String, isTable: Bool) -> String? {
        if table == nil, isTable {
            return closest(key, among: ConfigSchema.tables.map(\.name)).map { "[\($0)]" }
        }
        // Same table first, then a key of that name (or close to it) in another table.
        if let table, let keys = ConfigSchema.keys(of: table), let k = closest(key, among: keys) {
            return "`\(table).\(k)`"
        }
        let everywhere = ConfigSchema.allKeys
        if let exact = everywhere.first(where: { $0.hasSuffix("." + key) }) { return "`\(exact)`" }
        let lastParts = everywhere.map { String($0.split(separator: ".").last ?? "") }
        if let k = closest(key, among: lastParts), let full = everywhere.first(where: { $0.hasSuffix("." + k) }) {
            return "`\(full)`"
        }
        if table == nil, let t = closest(key, among: ConfigSchema.tables.map(\.name)) { return "[\(t)]" }
        return nil
    }
}

/// The candidate nearest to `word`, if near enough to be a likely typo.
func closest(_ word: String, among candidates: [String]) -> String? {
    let w = word.lowercased()
    var best: (String, Int)?
    for c in candidates {
        let d = editDistance(w, c)
        if d < (best?.1 ?? Int.max) { best = (c, d) }
    }
    guard let (c, d) = best else { return nil }
    let limit = max(2, min(w.count, c.count) / 2)
    if d <= limit { return c }
    if w.count >= 3, c.hasPrefix(w) || w.hasPrefix(c) { return c }
    return nil
}

/// Levenshtein distance over Unicode scalars; inputs longer than 64 scalars are not compared
/// (keys that long are no typo of ours), so the cost stays bounded.
func editDistance(_ a: String, _ b: String) -> Int {
    let x = Array(a.unicodeScalars), y = Array(b.unicodeScalars)
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
