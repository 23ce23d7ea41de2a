// Strings, booleans and integers for the lexer (TOML 1.0 rules, exactly).

extension TOMLLexer {
    /// A single-line basic string, with every TOML 1.0 escape. The cursor is on the opening quote.
    mutating func lexBasicString() throws(ConfigDiagnostic) -> String {
        let open = position
        advance()
        var out: [UInt8] = []
        while true {
            guard let c = peek(), c != 0x0A, !(c == 0x0D && peek(1) == 0x0A) else {
                throw error("unterminated string: a string must end with `\"` on the line where it starts", at: open)
            }
            switch c {
            case UInt8(ascii: "\""):
                advance()
                return String(decoding: out, as: UTF8.self)
            case UInt8(ascii: "\\"):
                try lexEscape(into: &out)
            default:
                if isControl(c) {
                    throw error("control character \(scalarName(UInt32(c))) must be escaped in a string", at: position)
                }
                out.append(c)
                advance()
            }
        }
    }

    private mutating func lexEscape(into out: inout [UInt8]) throws(ConfigDiagnostic) {
        let p = position
        advance()
        guard let e = peek(), !isControl(e), e != 0x0A else {
            throw error("incomplete escape: `\\` must be followed by one of b t n f r \" \\ u U", at: p)
        }
        let simple: UInt8?
        switch e {
        case UInt8(ascii: "b"): simple = 0x08
        case UInt8(ascii: "t"): simple = 0x09
        case UInt8(ascii: "n"): simple = 0x0A
        case UInt8(ascii: "f"): simple = 0x0C
        case UInt8(ascii: "r"): simple = 0x0D
        case UInt8(ascii: "\""): simple = 0x22
        case UInt8(ascii: "\\"): simple = 0x5C
        default: simple = nil
        }
        if let s = simple {
            out.append(s)
            advance()
            return
        }
        if e == UInt8(ascii: "u") || e == UInt8(ascii: "U") {
            let digits = e == UInt8(ascii: "u") ? 4 : 8
            advance()
            var v: UInt32 = 0
            for _ in 0..<digits {
                guard let h = peek(), let d = hexValue(h) else {
                    throw error("`\\\(e == UInt8(ascii: "u") ? "u" : "U")` must be followed by exactly \(digits) hex digits", at: p)
                }
                v = v << 4 | UInt32(d)
                advance()
            }
            guard let scalar = Unicode.Scalar(v) else {
                throw error("escape \(scalarName(v)) is not a Unicode scalar value", at: p)
            }
            out.append(contentsOf: Array(String(Character(scalar)).utf8))
            return
        }
        if e == UInt8(ascii: "e") {
            throw error("the `\\e` escape (TOML 1.1) is not supported in this config file; use `\\u001B`", at: p)
        }
        throw error("unknown escape `\\\(describeEscapeChar())` in a string", at: p)
    }

    private func describeEscapeChar() -> String {
        let d = describeCurrent()
        return d.hasPrefix("`") && d.hasSuffix("`") ? String(d.dropFirst().dropLast()) : d
    }

    /// A single-line literal string: no escapes. The cursor is on the opening quote.
    mutating func lexLiteralString() throws(ConfigDiagnostic) -> String {
        let open = position
        advance()
        var out: [UInt8] = []
        while true {
            guard let c = peek(), c != 0x0A, !(c == 0x0D && peek(1) == 0x0A) else {
                throw error("unterminated string: a literal string must end with `'` on the line where it starts", at: open)
            }
            if c == UInt8(ascii: "'") {
                advance()
                return String(decoding: out, as: UTF8.self)
            }
            if isControl(c) {
                throw error("control character \(scalarName(UInt32(c))) is not allowed in a literal string", at: position)
            }
            out.append(c)
            advance()
        }
    }

    /// An unquoted value word: `true`, `false` or an integer. Floats, dates and times are
    /// recognised and refused as unsupported rather than misread.
    func classifyBareValue(_ word: ArraySlice<UInt8>, at p: SourcePosition) throws(ConfigDiagnostic) -> TOMLToken.Kind {
        let w = Array(word)
        let text = String(decoding: w, as: UTF8.self)
        if text == "true" { return .bool(true) }
        if text == "false" { return .bool(false) }
        var body = w[...]
        if let f = body.first, f == UInt8(ascii: "+") || f == UInt8(ascii: "-") { body = body.dropFirst() }
        let bodyText = String(decoding: body, as: UTF8.self)
        if bodyText == "inf" || bodyText == "nan" {
            throw error("a float is not supported in this config file; use an integer", at: p)
        }
        let startsWithDigit = body.first.map { $0 >= 0x30 && $0 <= 0x39 } ?? false
        let prefixed = body.count >= 2 && body.first == UInt8(ascii: "0")
            && [UInt8(ascii: "x"), UInt8(ascii: "o"), UInt8(ascii: "b")].contains(body[body.startIndex + 1])
        if startsWithDigit && !prefixed {
            if looksLikeDateOrTime(w) {
                throw error("a date or time is not supported in this config file", at: p)
            }
            if body.contains(UInt8(ascii: ".")) || body.contains(UInt8(ascii: "e")) || body.contains(UInt8(ascii: "E")) {
                throw error("a float is not supported in this config file; use an integer", at: p)
            }
        }
        if !startsWithDigit {
            let lower = text.lowercased()
            if lower == "true" || lower == "false" {
                throw error("invalid value `\(text)`: booleans are written `true` or `false`", at: p)
            }
            if body.count == w.count {
                throw error("invalid value `\(text)`: strings must be quoted", at: p)
            }
        }
        return .integer(try parseInteger(w, at: p))
    }

    private func looksLikeDateOrTime(_ w: [UInt8]) -> Bool {
        func digits(_ r: Range<Int>) -> Bool { r.allSatisfy { $0 < w.count && w[$0] >= 0x30 && w[$0] <= 0x39 } }
        if w.count >= 5, digits(0..<4), w[4] == UInt8(ascii: "-") { return true }
        if w.count >= 3, digits(0..<2), w[2] == UInt8(ascii: ":") { return true }
        return false
    }

    /// TOML 1.0 integers: `[+-]?(0|[1-9](_?[0-9])*)`, or unsigned `0x`/`0o`/`0b` with `_`
    /// only between digits; the value must fit in a signed 64-bit integer.
    func parseInteger(_ w: [UInt8], at p: SourcePosition) throws(ConfigDiagnostic) -> Int64 {
        let text = String(decoding: w, as: UTF8.self)
        var idx = 0
        var negative = false
        var signed = false
        if let f = w.first, f == UInt8(ascii: "+") || f == UInt8(ascii: "-") {
            signed = true
            negative = f == UInt8(ascii: "-")
            idx = 1
        }
        guard idx < w.count else { throw error("invalid integer `\(text)`: digits expected", at: p) }
        var radix: UInt64 = 10
        var kind = "integer"
        if w.count - idx >= 2, w[idx] == UInt8(ascii: "0") {
            switch w[idx + 1] {
            case UInt8(ascii: "x"): radix = 16; kind = "hexadecimal integer"
            case UInt8(ascii: "o"): radix = 8; kind = "octal integer"
            case UInt8(ascii: "b"): radix = 2; kind = "binary integer"
            case 0x30...0x39, UInt8(ascii: "_"):
                throw error("invalid integer `\(text)`: leading zeros are not allowed", at: p)
            default:
                throw error("invalid integer `\(text)`", at: p)
            }
            if signed { throw error("invalid integer `\(text)`: a \(kind) cannot have a sign", at: p) }
            idx += 2
            guard idx < w.count else { throw error("invalid integer `\(text)`: digits expected after the prefix", at: p) }
        }
        var magnitude: UInt64 = 0
        var previousWasDigit = false
        var overflow = false
        for c in w[idx...] {
            if c == UInt8(ascii: "_") {
                guard previousWasDigit else {
                    throw error("invalid integer `\(text)`: `_` must be between two digits", at: p)
                }
                previousWasDigit = false
                continue
            }
            guard let d = hexValue(c), UInt64(d) < radix else {
                throw error("invalid \(kind) `\(text)`", at: p)
            }
            let (m, o1) = magnitude.multipliedReportingOverflow(by: radix)
            let (s, o2) = m.addingReportingOverflow(UInt64(d))
            overflow = overflow || o1 || o2
            magnitude = s
            previousWasDigit = true
        }
        guard previousWasDigit else {
            throw error("invalid integer `\(text)`: `_` must be between two digits", at: p)
        }
        let limit: UInt64 = negative ? UInt64(Int64.max) + 1 : UInt64(Int64.max)
        if overflow || magnitude > limit {
            throw error("integer `\(text)` is out of range for a 64-bit signed integer", at: p)
        }
        if negative {
            return magnitude == UInt64(Int64.max) + 1 ? Int64.min : -Int64(magnitude)
        }
        return Int64(magnitude)
    }
}

func hexValue(_ c: UInt8) -> UInt8? {
    switch c {
    case 0x30...0x39: return c - 0x30
    case 0x41...0x46: return c - 0x41 + 10
    case 0x61...0x66: return c - 0x61 + 10
    default: return nil
    }
}
