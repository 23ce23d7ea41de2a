// Issue 32: a setting changed from afar becomes the config file, as if a person had edited it.
// The edit is made on the file's text, not by writing a table tree back out: the comments, blank
// lines, key order, line ends and BOM are the person's and stay as they are. Only the value's
// bytes change, or one line (or one table) is added. The positions come from the real parser,
// so whatever it accepts can be edited; anything else is refused, never guessed at.

/// Why `ConfigTextEdit.setting` made no edit.
public enum ConfigTextEditError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The file is not valid TOML of the supported subset (the parser's own diagnostic says where).
    case doesNotParse
    /// The new value is not one single-line TOML string, integer or boolean.
    case badLiteral(String)
    /// `table` exists as a value, not as a table ("beacon = 1").
    case notATable(String)
    /// `table.key` exists as a table, not as a value.
    case notAValue(String)
    /// The edit could not be made safely (the file is left alone).
    case cannotEdit(String)

    public var description: String {
        switch self {
        case .doesNotParse: "the config file does not parse, so it cannot be edited"
        case .badLiteral(let s): "\(s) is not a single-line TOML string, integer or boolean"
        case .notATable(let t): "\(t) in the config file is a value, not a table"
        case .notAValue(let k): "\(k) in the config file is a table, not a value"
        case .cannotEdit(let why): "the config file cannot be edited safely: \(why)"
        }
    }
}

public enum ConfigTextEdit {
    /// `source` (a config file's bytes) with `table.key` set to `literal` (TOML text such as
    /// `-40`, `true` or `"hci1"`, as `RemoteSetting.literal` gives), nothing else changed:
    /// - a defined key (under `[table]`, as a dotted `table.key` at the top level, or quoted):
    ///   its value's bytes are replaced; a trailing comment stays;
    /// - a table without the key: `key = literal` goes on the line after the table's last
    ///   key/value line (so before any comments and blank lines that end its section), indented
    ///   as that line; for a table made of dotted keys, `table.key = literal` after the last of them;
    /// - no such table (or one only implied by a `[table.sub]` header): `[table]` and the key are
    ///   appended after one blank line.
    /// Line ends follow the file's first one (LF or CRLF); a missing final newline is added when
    /// the edit goes after the last line. The result is parsed again before it is handed back.
    public static func setting(table: String, key: String, literal: String, in source: [UInt8]) -> Result<[UInt8], ConfigTextEditError> {
        let name = displayKey([table, key])
        let lit = Array(literal.utf8)
        guard let wanted = scalarValue(of: lit) else { return .failure(.badLiteral(literal)) }
        let (root, text, errors) = TOML.parseSource(source, path: "config.toml")
        guard errors.isEmpty else { return .failure(.doesNotParse) }
        let body = text.bytes
        let bom = Array(source.prefix(source.count - body.count))   // the BOM parseSource skipped, or nothing
        let lines = LineIndex(body)
        var out: [UInt8]
        switch root.entry(table)?.value {
        case nil:
            out = appendingTable(table, key, lit, to: body, lines)
        case .table(let t)?:
            if let e = t.entry(key) {
                guard !isTable(e.value) else { return .failure(.notAValue(name)) }
                let start = lines.offset(of: e.valuePosition)
                guard let end = valueEnd(body, from: start) else { return .failure(.cannotEdit("the value of \(name) is not a single-line value")) }
                out = Array(body[..<start]) + lit + Array(body[end...])
            } else {
                out = inserting(table, key, lit, into: t, body, lines)
            }
        case .some:
            return .failure(.notATable(displayKey([table])))
        }
        out = bom + out
        // The safety net: what is handed back must parse, with the new value where it belongs.
        let (again, _, errs) = TOML.parseSource(out, path: "config.toml")
        guard errs.isEmpty, case .table(let t)? = again[table], t[key] == wanted else {
            return .failure(.cannotEdit("the edited file would not read \(name) back"))
        }
        return .success(out)
    }

    /// The value `literal` stands for, when it is exactly one single-line string, integer or
    /// boolean (no comment, no surrounding space, no line end).
    static func scalarValue(of literal: [UInt8]) -> TOMLValue? {
        guard !literal.isEmpty, !literal.contains(0x0A), !literal.contains(0x0D),
              valueEnd(literal, from: 0) == literal.count,
              case .success(let t) = TOML.parse(Array("v = ".utf8) + literal + [0x0A], path: "literal"),
              let v = t["v"], !isTable(v) else { return nil }
        return v
    }

    /// The offset just past the single-line value starting at `start`, or nil when there is none.
    /// Only called on text the lexer accepted (or checks it afterwards), so this stays simple.
    static func valueEnd(_ b: [UInt8], from start: Int) -> Int? {
        guard start < b.count else { return nil }
        var i = start + 1
        switch b[start] {
        case UInt8(ascii: "\""):
            while i < b.count, b[i] != 0x0A {
                if b[i] == UInt8(ascii: "\\") { i += 2; continue }
                if b[i] == UInt8(ascii: "\"") { return i + 1 }
                i += 1
            }
            return nil
        case UInt8(ascii: "'"):
            while i < b.count, b[i] != 0x0A {
                if b[i] == UInt8(ascii: "'") { return i + 1 }
                i += 1
            }
            return nil
        case let c where isValueRunByte(c):
            while i < b.count, isValueRunByte(b[i]) { i += 1 }
            return i
        default:
            return nil
        }
    }

    private static func isTable(_ v: TOMLValue) -> Bool {
        if case .table = v { return true }
        return false
    }

    /// `[table]` with the key, after one blank line (none when the file is empty or already ends
    /// with a blank line).
    private static func appendingTable(_ table: String, _ key: String, _ lit: [UInt8], to body: [UInt8], _ lines: LineIndex) -> [UInt8] {
        let eol = lines.lineEnd
        var out = body
        if let last = out.last, last != 0x0A { out += eol }
        if !out.isEmpty, !lastLineBlank(out) { out += eol }
        out += Array("[\(displayKey([table]))]".utf8) + eol + Array("\(displayKey([key])) = ".utf8) + lit + eol
        return out
    }

    /// Whether `text` (not empty, ending in a line end) ends with an empty or whitespace-only line.
    private static func lastLineBlank(_ text: [UInt8]) -> Bool {
        var i = text.count - 2          // before the final LF
        if i >= 0, text[i] == 0x0D { i -= 1 }
        while i >= 0, text[i] == 0x20 || text[i] == 0x09 { i -= 1 }
        return i < 0 || text[i] == 0x0A
    }

    /// The key into a table that exists: see `setting`.
    private static func inserting(_ table: String, _ key: String, _ lit: [UInt8], into t: TOMLTable, _ body: [UInt8], _ lines: LineIndex) -> [UInt8] {
        let defined = lines.offset(of: t.position)
        let line = t.position.line
        let anchor: Int
        let keyText: String
        if body[defined] == UInt8(ascii: "[") {
            // Defined by its header: the section runs to the next header.
            var last = line
            var n = line + 1
            while n <= lines.count, !lines.isHeader(n) {
                if lines.isKeyValue(n) { last = n }
                n += 1
            }
            anchor = last
            keyText = displayKey([key])
        } else if lines.isHeader(line) {
            // Only implied by a `[table.sub]` header: a `[table]` header may still define it.
            return appendingTable(table, key, lit, to: body, lines)
        } else {
            // Made of dotted keys at the top level: after the last of them before the first header.
            let firstHeader = (1...max(1, lines.count)).first(where: lines.isHeader) ?? Int.max
            anchor = lastLine(of: t, before: firstHeader)
            keyText = displayKey([table, key])
        }
        var added = lines.isKeyValue(anchor) ? lines.indent(anchor, in: body) : []
        added += Array("\(keyText) = ".utf8) + lit + lines.lineEnd
        var at = lines.end(ofLine: anchor)
        if at == body.count, body.last != 0x0A {
            added = lines.lineEnd + added
            at = body.count
        }
        return Array(body[..<at]) + added + Array(body[at...])
    }

    /// The last line, before `limit`, holding a key of `t` or of a table under it (depth is capped
    /// by the parser, so the recursion is bounded; each entry is visited once).
    private static func lastLine(of t: TOMLTable, before limit: Int) -> Int {
        var last = t.position.line
        for e in t.entries where e.keyPosition.line < limit {
            last = max(last, e.keyPosition.line)
            if case .table(let sub) = e.value { last = max(last, lastLine(of: sub, before: limit)) }
        }
        return last
    }
}

/// Where each line of a text starts, and what kind of line it is. In the supported subset every
/// statement fits on one line (no multi-line strings or arrays), so on text that parsed, a
/// line's first byte other than space or tab tells its kind.
struct LineIndex {
    private let bytes: [UInt8]
    private var starts: [Int] = [0]
    /// The file's own line end: that of its first line, LF when it has none.
    let lineEnd: [UInt8]

    init(_ bytes: [UInt8]) {
        self.bytes = bytes
        for (i, c) in bytes.enumerated() where c == 0x0A { starts.append(i + 1) }
        if starts.count > 1, starts[1] >= 2, bytes[starts[1] - 2] == 0x0D { lineEnd = [0x0D, 0x0A] } else { lineEnd = [0x0A] }
        if starts.last == bytes.count, starts.count > 1 { starts.removeLast() }   // no empty line after a final LF
        if bytes.isEmpty { starts = [] }
    }

    var count: Int { starts.count }

    /// The offset just past line `n`'s line end (or the end of the text).
    func end(ofLine n: Int) -> Int { n < starts.count ? starts[n] : bytes.count }

    /// The byte offset of a position (its column counts scalars: continuation bytes do not count).
    func offset(of p: SourcePosition) -> Int {
        var i = starts[p.line - 1]
        var column = 1
        while column < p.column, i < bytes.count {
            i += 1
            if i >= bytes.count || bytes[i] & 0xC0 != 0x80 { column += 1 }
        }
        return i
    }

    private func firstByte(_ n: Int) -> UInt8? {
        var i = starts[n - 1]
        while i < bytes.count, bytes[i] == 0x20 || bytes[i] == 0x09 { i += 1 }
        return i < bytes.count ? bytes[i] : nil
    }

    func isHeader(_ n: Int) -> Bool { n >= 1 && n <= count && firstByte(n) == UInt8(ascii: "[") }

    /// Neither blank, nor a comment, nor a header.
    func isKeyValue(_ n: Int) -> Bool {
        guard n >= 1, n <= count, let c = firstByte(n) else { return false }
        return c != 0x0A && c != 0x0D && c != UInt8(ascii: "#") && c != UInt8(ascii: "[")
    }

    /// The spaces and tabs that start line `n`.
    func indent(_ n: Int, in b: [UInt8]) -> [UInt8] {
        var i = starts[n - 1]
        var out: [UInt8] = []
        while i < b.count, b[i] == 0x20 || b[i] == 0x09 { out.append(b[i]); i += 1 }
        return out
    }
}
