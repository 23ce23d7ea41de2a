/// A 1-based position in a config file. `column` counts Unicode scalars, not bytes.
public struct SourcePosition: Equatable, Hashable, Comparable, Sendable, CustomStringConvertible {
    public var line: Int
    public var column: Int

    public init(line: Int, column: Int) {
        self.line = line
        self.column = column
    }

    public static let start = SourcePosition(line: 1, column: 1)

    public static func < (a: SourcePosition, b: SourcePosition) -> Bool {
        a.line != b.line ? a.line < b.line : a.column < b.column
    }

    public var description: String { "\(line):\(column)" }
}

/// Why a config file was refused, and where: `FILE:LINE:COL: message`, then the line and a caret.
public struct ConfigDiagnostic: Error, Equatable, Sendable, CustomStringConvertible {
    public var file: String
    /// 1-based.
    public var line: Int
    /// 1-based, in Unicode scalars.
    public var column: Int
    public var message: String
    /// The offending line, without its line end.
    public var sourceLine: String

    public init(file: String, line: Int, column: Int, message: String, sourceLine: String) {
        self.file = file
        self.line = line
        self.column = column
        self.message = message
        self.sourceLine = sourceLine
    }

    /// `FILE:LINE:COL: message`, without the source excerpt (one log line). Control
    /// characters are shown escaped (`\x1b`), never raw.
    public var headline: String { escapedForTerminal("\(file):\(line):\(column): \(message)") }

    /// The source line as shown: control characters escaped (`\x1b`), tabs kept.
    public var shownLine: String { escapedForTerminal(sourceLine) }

    /// The caret line under `shownLine`: tabs are kept, and each scalar before the column takes
    /// its display width (2 for wide CJK characters, 0 for combining marks, the length of its
    /// escape for a control character), so the caret lines up in a terminal.
    public var caretLine: String {
        var pad = ""
        var n = 0
        for s in sourceLine.unicodeScalars {
            if n >= column - 1 { break }
            if s == "\t" {
                pad += "\t"
            } else {
                let w = terminalEscape(s).map { $0.unicodeScalars.count } ?? displayWidth(s)
                pad += String(repeating: " ", count: w)
            }
            n += 1
        }
        if n < column - 1 { pad += String(repeating: " ", count: column - 1 - n) }
        return pad + "^"
    }

    public var description: String { headline + "\n" + shownLine + "\n" + caretLine }
}

/// Every problem one run found in a config file (never empty), first the one to fix first.
public struct ConfigDiagnostics: Error, Equatable, Sendable {
    public var all: [ConfigDiagnostic]
    public init(_ all: [ConfigDiagnostic]) { self.all = all }
    public var first: ConfigDiagnostic { all[0] }
}

/// The text being parsed (BOM already removed), able to turn a position into a diagnostic.
struct SourceText: Sendable {
    let bytes: [UInt8]
    let path: String

    /// The text of 1-based line `line`, without CR/LF. Invalid UTF-8 shows as U+FFFD.
    func lineText(_ line: Int) -> String {
        var current = 1
        var start = 0
        var i = 0
        while i < bytes.count, current < line {
            if bytes[i] == 0x0A { current += 1; start = i + 1 }
            i += 1
        }
        if current < line { return "" }
        var end = start
        while end < bytes.count, bytes[end] != 0x0A { end += 1 }
        if end > start, bytes[end - 1] == 0x0D { end -= 1 }
        return String(decoding: bytes[start..<end], as: UTF8.self)
    }

    /// The position of byte `offset`, counting scalars (continuation bytes do not count).
    func position(ofOffset offset: Int) -> SourcePosition {
        var line = 1
        var column = 1
        var i = 0
        while i < offset, i < bytes.count {
            if bytes[i] == 0x0A {
                line += 1
                column = 1
            } else if bytes[i] & 0xC0 != 0x80 {
                column += 1
            }
            i += 1
        }
        return SourcePosition(line: line, column: column)
    }

    func diagnostic(_ message: String, at pos: SourcePosition) -> ConfigDiagnostic {
        ConfigDiagnostic(file: path, line: pos.line, column: pos.column,
                         message: message, sourceLine: lineText(pos.line))
    }
}

/// Where each malformed UTF-8 sequence starts, or nil when `bytes` is valid UTF-8
/// (no overlong forms, no surrogates, nothing above U+10FFFF).
func firstInvalidUTF8Offset(_ bytes: [UInt8]) -> Int? {
    var i = 0
    let n = bytes.count
    while i < n {
        let b = bytes[i]
        if b < 0x80 { i += 1; continue }
        var need = 0
        var lo: UInt8 = 0x80
        var hi: UInt8 = 0xBF
        switch b {
        case 0xC2...0xDF: need = 1
        case 0xE0: need = 2; lo = 0xA0
        case 0xE1...0xEC, 0xEE...0xEF: need = 2
        case 0xED: need = 2; hi = 0x9F
        case 0xF0: need = 3; lo = 0x90
        case 0xF1...0xF3: need = 3
        case 0xF4: need = 3; hi = 0x8F
        default: return i
        }
        if i + need >= n { return i }
        let c1 = bytes[i + 1]
        if c1 < lo || c1 > hi { return i }
        var k = 2
        while k <= need {
            if bytes[i + k] & 0xC0 != 0x80 { return i }
            k += 1
        }
        i += need + 1
    }
    return nil
}
