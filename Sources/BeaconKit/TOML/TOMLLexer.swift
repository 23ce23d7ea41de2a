/// One token of the TOML subset, with the 1-based line and column where it starts.
struct TOMLToken: Equatable, Sendable {
    enum Kind: Equatable, Sendable {
        case tableOpen            // `[` opening a table header
        case tableClose           // `]` closing it
        case dot                  // between the parts of a dotted key
        case equals
        case key(String)          // one part of a key: bare, or quoted (already unescaped)
        case string(String)
        case integer(Int64)
        case bool(Bool)
    }
    var kind: Kind
    var position: SourcePosition
}

/// A small state machine in the style of BurntSushi/toml's lex.go: each state consumes input,
/// emits tokens and names the next state. TOML's grammar is line-oriented, so the lexer also
/// enforces the shape of each line (`key = value`, or `[table]`), and the parser only has to
/// give the tokens their meaning. Every state either consumes input or ends, so it terminates.
///
/// Size (about 460 lines over 2 files): five states, one function each, read in order as lex.go's
/// are, and the TOML 1.0 scalars they take (strings, escapes, integers) on the same cursor; split,
/// the cursor (i, line, column) would be shared across types.
struct TOMLLexer {
    enum State: Equatable {
        case lineStart
        case keyPart(header: Bool)
        case afterKeyPart(header: Bool)
        case value
        case endOfLine
    }

    let source: SourceText
    private let b: [UInt8]
    private var i = 0
    private var line = 1
    private var column = 1
    private(set) var tokens: [TOMLToken] = []

    init(_ source: SourceText) {
        self.source = source
        self.b = source.bytes
    }

    /// The tokens of every line that lexes; each line that does not adds one diagnostic to
    /// `errors` (its tokens are dropped) and lexing goes on at the next line, so one run can
    /// report several mistakes. Stops after `limit` errors.
    static func tokenize(_ source: SourceText, errors: inout [ConfigDiagnostic], limit: Int) -> [TOMLToken] {
        var lexer = TOMLLexer(source)
        var state: State? = .lineStart
        var statementStart = 0
        while let s = state {
            if s == .lineStart { statementStart = lexer.tokens.count }
            do throws(ConfigDiagnostic) {
                state = try lexer.step(s)
            } catch {
                errors.append(error)
                if errors.count >= limit { break }
                lexer.tokens.removeSubrange(statementStart...)
                lexer.skipPastLineEnd()
                state = .lineStart
            }
        }
        return lexer.tokens
    }

    /// After an error: on to the start of the next line.
    mutating func skipPastLineEnd() {
        while let c = peek() {
            advance()
            if c == 0x0A { return }
        }
    }

    mutating func step(_ state: State) throws(ConfigDiagnostic) -> State? {
        switch state {
        case .lineStart: return try lexLineStart()
        case .keyPart(let header): return try lexKeyPart(header: header)
        case .afterKeyPart(let header): return try lexAfterKeyPart(header: header)
        case .value: return try lexValue()
        case .endOfLine: return try lexEndOfLine()
        }
    }

    // MARK: - Cursor

    var position: SourcePosition { SourcePosition(line: line, column: column) }

    func peek(_ k: Int = 0) -> UInt8? { i + k < b.count ? b[i + k] : nil }

    /// Moves past one byte; the column only moves on the first byte of a UTF-8 sequence.
    mutating func advance() {
        guard i < b.count else { return }
        let c = b[i]
        i += 1
        if c == 0x0A {
            line += 1
            column = 1
        } else if i < b.count, b[i] & 0xC0 == 0x80 {
            // inside a multi-byte scalar: same column
        } else {
            column += 1
        }
    }

    mutating func skipWhitespace() {
        while let c = peek(), c == 0x20 || c == 0x09 { advance() }
    }

    func error(_ message: String, at pos: SourcePosition) -> ConfigDiagnostic {
        source.diagnostic(message, at: pos)
    }

    func loneCR() -> ConfigDiagnostic {
        error("a carriage return must be followed by a line feed", at: position)
    }

    /// "`x`", "end of line", "end of file" or "control character U+0001", for messages.
    func describeCurrent() -> String {
        guard let c = peek() else { return "end of file" }
        if c == 0x0A || (c == 0x0D && peek(1) == 0x0A) { return "end of line" }
        if c < 0x20 || c == 0x7F { return "control character " + scalarName(UInt32(c)) }
        var len = 1
        if c >= 0xF0 { len = 4 } else if c >= 0xE0 { len = 3 } else if c >= 0xC0 { len = 2 }
        let end = min(i + len, b.count)
        let shown = "`" + String(decoding: b[i..<end], as: UTF8.self) + "`"
        if isSmartQuote(b[i..<end]) {
            return shown + " (a typographic “smart” quote: TOML strings and keys take straight quotes, \" or ')"
        }
        return shown
    }

    mutating func emit(_ kind: TOMLToken.Kind, at pos: SourcePosition) {
        tokens.append(TOMLToken(kind: kind, position: pos))
    }

    // MARK: - States

    mutating func lexLineStart() throws(ConfigDiagnostic) -> State? {
        while true {
            skipWhitespace()
            guard let c = peek() else { return nil }
            switch c {
            case UInt8(ascii: "#"):
                try skipComment()
            case 0x0A:
                advance()
            case 0x0D:
                guard peek(1) == 0x0A else { throw loneCR() }
                advance(); advance()
            case UInt8(ascii: "["):
                let p = position
                if peek(1) == UInt8(ascii: "[") {
                    throw error("an array of tables ([[...]]) is not supported in this config file", at: p)
                }
                advance()
                emit(.tableOpen, at: p)
                return .keyPart(header: true)
            default:
                if isBareKeyByte(c) || c == UInt8(ascii: "\"") || c == UInt8(ascii: "'") {
                    return .keyPart(header: false)
                }
                throw error("expected a key or a [table] header, found \(describeCurrent())", at: position)
            }
        }
    }

    mutating func lexKeyPart(header: Bool) throws(ConfigDiagnostic) -> State? {
        skipWhitespace()
        let p = position
        guard let c = peek() else {
            throw error(header ? "expected a table name, found end of file" : "expected a key, found end of file", at: p)
        }
        if isBareKeyByte(c) {
            let start = i
            while let d = peek(), isBareKeyByte(d) { advance() }
            emit(.key(String(decoding: b[start..<i], as: UTF8.self)), at: p)
        } else if c == UInt8(ascii: "\"") || c == UInt8(ascii: "'") {
            if peek(1) == c, peek(2) == c {
                throw error("a key cannot be a multi-line string", at: p)
            }
            let s = c == UInt8(ascii: "\"") ? try lexBasicString() : try lexLiteralString()
            emit(.key(s), at: p)
        } else {
            let what = header ? "expected a table name" : "expected a key"
            throw error("\(what), found \(describeCurrent())", at: p)
        }
        return .afterKeyPart(header: header)
    }

    mutating func lexAfterKeyPart(header: Bool) throws(ConfigDiagnostic) -> State? {
        skipWhitespace()
        let p = position
        switch peek() {
        case UInt8(ascii: "."):
            advance()
            emit(.dot, at: p)
            return .keyPart(header: header)
        case UInt8(ascii: "]") where header:
            advance()
            emit(.tableClose, at: p)
            return .endOfLine
        case UInt8(ascii: "=") where !header:
            advance()
            emit(.equals, at: p)
            return .value
        default:
            if header { throw error("expected `.` or `]` in the table header, found \(describeCurrent())", at: p) }
            throw error("expected `=` after the key, found \(describeCurrent())", at: p)
        }
    }

    mutating func lexValue() throws(ConfigDiagnostic) -> State? {
        skipWhitespace()
        let p = position
        guard let c = peek(), c != 0x0A, c != 0x0D, c != UInt8(ascii: "#") else {
            throw error("expected a value after `=`, found \(describeCurrent())", at: p)
        }
        switch c {
        case UInt8(ascii: "\""):
            if peek(1) == c, peek(2) == c {
                throw error("a multi-line string is not supported in this config file", at: p)
            }
            emit(.string(try lexBasicString()), at: p)
        case UInt8(ascii: "'"):
            if peek(1) == c, peek(2) == c {
                throw error("a multi-line literal string is not supported in this config file", at: p)
            }
            emit(.string(try lexLiteralString()), at: p)
        case UInt8(ascii: "["):
            throw error("an array is not supported in this config file", at: p)
        case UInt8(ascii: "{"):
            throw error("an inline table is not supported in this config file", at: p)
        default:
            guard isValueRunByte(c) else { throw error("expected a value, found \(describeCurrent())", at: p) }
            let start = i
            while let d = peek(), isValueRunByte(d) { advance() }
            emit(try classifyBareValue(b[start..<i], at: p), at: p)
        }
        return .endOfLine
    }

    mutating func lexEndOfLine() throws(ConfigDiagnostic) -> State? {
        skipWhitespace()
        if peek() == UInt8(ascii: "#") { try skipComment() }
        guard let c = peek() else { return nil }
        if c == 0x0A {
            advance()
            return .lineStart
        }
        if c == 0x0D {
            guard peek(1) == 0x0A else { throw loneCR() }
            advance(); advance()
            return .lineStart
        }
        throw error("expected a comment or the end of the line, found \(describeCurrent())", at: position)
    }

    /// From `#` up to (not including) the line end. Control characters other than tab are refused.
    mutating func skipComment() throws(ConfigDiagnostic) {
        advance()
        while let c = peek() {
            if c == 0x0A { return }
            if c == 0x0D {
                if peek(1) == 0x0A { return }
                throw loneCR()
            }
            if isControl(c) {
                throw error("control character \(scalarName(UInt32(c))) is not allowed in a comment", at: position)
            }
            advance()
        }
    }
}

func isBareKeyByte(_ c: UInt8) -> Bool {
    (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A) || (c >= 0x30 && c <= 0x39)
        || c == UInt8(ascii: "_") || c == UInt8(ascii: "-")
}

/// Bytes that may make up an unquoted value (booleans, numbers, dates), so that a whole
/// value-like word is classified at once and never half-read.
func isValueRunByte(_ c: UInt8) -> Bool {
    isBareKeyByte(c) || c == UInt8(ascii: "+") || c == UInt8(ascii: ".") || c == UInt8(ascii: ":")
}

/// Control characters TOML refuses outside of escapes (tab is allowed).
func isControl(_ c: UInt8) -> Bool { (c < 0x20 && c != 0x09) || c == 0x7F }

func scalarName(_ v: UInt32) -> String {
    let hex = String(v, radix: 16, uppercase: true)
    return "U+" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
}
