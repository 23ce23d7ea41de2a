/// The generic layer: TOML (the supported subset) to a table tree, with positions.
public enum TOML {
    /// Inputs larger than this are refused (the config file is a few hundred bytes).
    public static let maxInputBytes = 64 * 1024
    /// Tables nested deeper than this are refused.
    public static let maxDepth = 32

    /// How many errors one run reports at most (`altbeacond check`).
    public static let maxErrors = 20

    public static func parse(_ bytes: [UInt8], path: String) -> Result<TOMLTable, ConfigDiagnostic> {
        let (table, _, errors) = parseSource(bytes, path: path)
        if let first = errors.first { return .failure(first) }
        return .success(table)
    }

    /// Parses and also hands back the source, so later stages can point into it, and every
    /// error found (at most `limit`, sorted by position; empty when the document is good).
    static func parseSource(_ bytes: [UInt8], path: String, limit: Int = maxErrors) -> (table: TOMLTable, source: SourceText, errors: [ConfigDiagnostic]) {
        if bytes.count > maxInputBytes {
            let source = SourceText(bytes: Array(bytes.prefix(256)), path: path)
            return (TOMLTable(), source, [source.diagnostic("the file is too large (\(bytes.count) bytes; the limit is \(maxInputBytes))", at: .start)])
        }
        var body = bytes
        if body.count >= 3, body[0] == 0xEF, body[1] == 0xBB, body[2] == 0xBF { body.removeFirst(3) }
        let source = SourceText(bytes: body, path: path)
        if let hint = utf16Hint(body) {
            return (TOMLTable(), source, [source.diagnostic(hint, at: .start)])
        }
        if let bad = firstInvalidUTF8Offset(body) {
            let d = source.diagnostic("invalid UTF-8 (byte 0x\(hexString(CollectionOfOne(body[bad]))))",
                                      at: source.position(ofOffset: bad))
            return (TOMLTable(), source, [d])
        }
        var errors: [ConfigDiagnostic] = []
        let tokens = TOMLLexer.tokenize(source, errors: &errors, limit: limit)
        var builder = TOMLTreeBuilder(source: source)
        if errors.count < limit { builder.build(tokens, errors: &errors, limit: limit) }
        errors.sort { ($0.line, $0.column) < ($1.line, $1.column) }
        return (builder.finish(), source, Array(errors.prefix(limit)))
    }
}

/// Gives meaning to the token stream, with TOML's rules on defining tables: a table is defined
/// once, by a `[header]` or by dotted keys; headers may reopen tables that were only created
/// implicitly as a header's parents; dotted keys only extend tables they created themselves.
struct TOMLTreeBuilder {
    enum Origin { case root, header, implicitByHeader, dottedKeys }
    enum Slot { case scalar(TOMLValue), table(Int) }
    struct Entry { var key: String; var keyPosition: SourcePosition; var slot: Slot; var valuePosition: SourcePosition }
    struct Node {
        var parent: Int
        var key: String
        var origin: Origin
        var position: SourcePosition
        var depth: Int
        var entries: [Entry] = []
        /// By UTF-8 bytes, never by String: keys are equal only when their scalars are.
        var index: [[UInt8]: Int] = [:]
    }

    let source: SourceText
    private var nodes: [Node]

    init(source: SourceText) {
        self.source = source
        nodes = [Node(parent: -1, key: "", origin: .root, position: .start, depth: 0)]
    }

    /// Builds from the lexer's statements; each statement that breaks a rule adds a diagnostic
    /// and is skipped. After a refused `[header]` the keys under it are skipped too (they have
    /// no table to go in, and reporting them would only echo the first mistake).
    mutating func build(_ tokens: [TOMLToken], errors: inout [ConfigDiagnostic], limit: Int) {
        var current: Int? = 0
        var i = 0
        while i < tokens.count, errors.count < limit {
            do throws(ConfigDiagnostic) {
                if tokens[i].kind == .tableOpen {
                    let open = tokens[i].position
                    i += 1
                    current = nil
                    let path = try readKey(tokens, &i, until: .tableClose)
                    current = try openHeader(path, at: open)
                } else {
                    let path = try readKey(tokens, &i, until: .equals)
                    guard i < tokens.count else { throw internalError(at: tokens.last?.position ?? .start) }
                    let valueToken = tokens[i]
                    i += 1
                    let value: TOMLValue
                    switch valueToken.kind {
                    case .string(let s): value = .string(s)
                    case .integer(let n): value = .integer(n)
                    case .bool(let b): value = .bool(b)
                    default: throw internalError(at: valueToken.position)
                    }
                    if let current { try assign(path, value, at: valueToken.position, in: current) }
                }
            } catch {
                errors.append(error)
                if error.message.hasPrefix("internal error") { return }
            }
        }
    }

    /// `key (. key)*` then `terminator`, which is consumed.
    private func readKey(_ tokens: [TOMLToken], _ i: inout Int, until terminator: TOMLToken.Kind) throws(ConfigDiagnostic) -> [(String, SourcePosition)] {
        var path: [(String, SourcePosition)] = []
        while i < tokens.count {
            let t = tokens[i]
            i += 1
            switch t.kind {
            case .key(let k): path.append((k, t.position))
            case .dot: continue
            case terminator where !path.isEmpty: return path
            default: throw internalError(at: t.position)
            }
        }
        throw internalError(at: tokens.last?.position ?? .start)
    }

    private func internalError(at p: SourcePosition) -> ConfigDiagnostic {
        source.diagnostic("internal error: unexpected token", at: p)
    }

    func pathOf(_ node: Int) -> [String] {
        var parts: [String] = []
        var n = node
        while n > 0 {
            parts.append(nodes[n].key)
            n = nodes[n].parent
        }
        return parts.reversed()
    }

    private mutating func newTable(in parent: Int, key: String, keyPosition: SourcePosition,
                                   origin: Origin, position: SourcePosition) throws(ConfigDiagnostic) -> Int {
        let depth = nodes[parent].depth + 1
        if depth > TOML.maxDepth {
            throw source.diagnostic("tables are nested too deeply (the limit is \(TOML.maxDepth) levels)", at: keyPosition)
        }
        let id = nodes.count
        nodes.append(Node(parent: parent, key: key, origin: origin, position: position, depth: depth))
        nodes[parent].index[Array(key.utf8)] = nodes[parent].entries.count
        nodes[parent].entries.append(Entry(key: key, keyPosition: keyPosition, slot: .table(id), valuePosition: position))
        return id
    }

    private func notATable(_ node: Int, _ key: String, _ entry: Entry, at p: SourcePosition) -> ConfigDiagnostic {
        let name = displayKey(pathOf(node) + [key])
        return source.diagnostic("`\(name)` is already a value (line \(entry.keyPosition.line)), so it cannot be a table", at: p)
    }

    mutating func openHeader(_ path: [(String, SourcePosition)], at open: SourcePosition) throws(ConfigDiagnostic) -> Int {
        var t = 0
        for (n, (key, kp)) in path.enumerated() {
            let last = n == path.count - 1
            guard let k = nodes[t].index[Array(key.utf8)] else {
                t = try newTable(in: t, key: key, keyPosition: kp,
                                 origin: last ? .header : .implicitByHeader, position: last ? open : kp)
                continue
            }
            let entry = nodes[t].entries[k]
            guard case .table(let child) = entry.slot else { throw notATable(t, key, entry, at: kp) }
            if last {
                let name = displayKey(pathOf(child))
                switch nodes[child].origin {
                case .implicitByHeader:
                    nodes[child].origin = .header
                    nodes[child].position = open
                case .header, .root:
                    throw source.diagnostic("table [\(name)] is defined twice (first on line \(nodes[child].position.line))", at: open)
                case .dottedKeys:
                    throw source.diagnostic("table [\(name)] was already defined with dotted keys (line \(nodes[child].position.line))", at: open)
                }
            }
            t = child
        }
        return t
    }

    mutating func assign(_ path: [(String, SourcePosition)], _ value: TOMLValue, at vp: SourcePosition, in table: Int) throws(ConfigDiagnostic) {
        var t = table
        for (key, kp) in path.dropLast() {
            guard let k = nodes[t].index[Array(key.utf8)] else {
                t = try newTable(in: t, key: key, keyPosition: kp, origin: .dottedKeys, position: kp)
                continue
            }
            let entry = nodes[t].entries[k]
            guard case .table(let child) = entry.slot else { throw notATable(t, key, entry, at: kp) }
            guard nodes[child].origin == .dottedKeys else {
                let name = displayKey(pathOf(child))
                throw source.diagnostic("dotted keys cannot add to table [\(name)], which is defined by a [table] header (line \(nodes[child].position.line))", at: kp)
            }
            t = child
        }
        guard let (key, kp) = path.last else { throw internalError(at: vp) }
        if let k = nodes[t].index[Array(key.utf8)] {
            let name = displayKey(pathOf(t) + [key])
            throw source.diagnostic("duplicate key `\(name)` (first defined on line \(nodes[t].entries[k].keyPosition.line))", at: kp)
        }
        nodes[t].index[Array(key.utf8)] = nodes[t].entries.count
        nodes[t].entries.append(Entry(key: key, keyPosition: kp, slot: .scalar(value), valuePosition: vp))
    }

    /// The finished tree (depth is capped, so the recursion is bounded).
    func finish() -> TOMLTable { table(0) }

    private func table(_ id: Int) -> TOMLTable {
        var out = TOMLTable(position: nodes[id].position)
        for e in nodes[id].entries {
            switch e.slot {
            case .scalar(let v):
                out.insert(e.key, v, keyPosition: e.keyPosition, valuePosition: e.valuePosition)
            case .table(let child):
                out.insert(e.key, .table(table(child)), keyPosition: e.keyPosition, valuePosition: nodes[child].position)
            }
        }
        return out
    }
}
