// Showing config text on a terminal or in the journal: control characters and other invisible
// or reordering scalars are escaped (never written raw: an ESC in a config file must not drive
// the terminal), and caret columns count display width (a CJK ideograph takes two cells, a
// combining mark none).

extension Unicode.Scalar {
    /// C0, DEL or C1: a control character, which no name or text shown to people may hold raw.
    var isControlCharacter: Bool { value < 0x20 || (value >= 0x7F && value < 0xA0) }
}

/// The escape for a scalar that must not be shown raw, or nil. Tab is kept (carets line up).
func terminalEscape(_ s: Unicode.Scalar) -> String? {
    let v = s.value
    if v == 0x09 { return nil }
    if v < 0x20 || v == 0x7F {
        return "\\x" + hexString(CollectionOfOne(UInt8(v)))
    }
    // C1 controls, bidirectional controls, line/paragraph separators, BOM: invisible or
    // able to reorder what follows.
    if (0x80...0x9F).contains(v) || v == 0x061C || v == 0x200E || v == 0x200F || (0x2028...0x202E).contains(v)
        || (0x2066...0x2069).contains(v) || v == 0xFEFF {
        return "\\u{" + String(v, radix: 16) + "}"
    }
    return nil
}

/// `s` with every scalar `terminalEscape` names replaced by its escape. Linear.
func escapedForTerminal(_ s: String) -> String {
    guard s.unicodeScalars.contains(where: { terminalEscape($0) != nil }) else { return s }
    var out = ""
    out.reserveCapacity(s.utf8.count)
    for u in s.unicodeScalars {
        if let e = terminalEscape(u) { out += e } else { out.unicodeScalars.append(u) }
    }
    return out
}

/// Terminal cells a scalar takes: 0 for combining marks and format characters, 2 for East
/// Asian wide and fullwidth characters (and emoji shown as such), else 1.
func displayWidth(_ s: Unicode.Scalar) -> Int {
    let v = s.value
    if v == 0 { return 0 }
    if (0x1160...0x11FF).contains(v) { return 0 }   // Hangul medial vowels and final consonants
    switch s.properties.generalCategory {
    case .nonspacingMark, .enclosingMark, .format: return 0
    default: break
    }
    return isWide(v) ? 2 : 1
}

private let wideRanges: [ClosedRange<UInt32>] = [
    0x1100...0x115F, 0x231A...0x231B, 0x2329...0x232A, 0x23E9...0x23EC, 0x23F0...0x23F0,
    0x23F3...0x23F3, 0x25FD...0x25FE, 0x2614...0x2615, 0x2648...0x2653, 0x267F...0x267F,
    0x2693...0x2693, 0x26A1...0x26A1, 0x26AA...0x26AB, 0x26BD...0x26BE, 0x26C4...0x26C5,
    0x26CE...0x26CE, 0x26D4...0x26D4, 0x26EA...0x26EA, 0x26F2...0x26F3, 0x26F5...0x26F5,
    0x26FA...0x26FA, 0x26FD...0x26FD, 0x2705...0x2705, 0x270A...0x270B, 0x2728...0x2728,
    0x274C...0x274C, 0x274E...0x274E, 0x2753...0x2755, 0x2757...0x2757, 0x2795...0x2797,
    0x27B0...0x27B0, 0x27BF...0x27BF, 0x2B1B...0x2B1C, 0x2B50...0x2B50, 0x2B55...0x2B55,
    0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF, 0x4E00...0x9FFF, 0xA000...0xA4CF,
    0xA960...0xA97F, 0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE10...0xFE19, 0xFE30...0xFE6F,
    0xFF00...0xFF60, 0xFFE0...0xFFE6, 0x16FE0...0x18CFF, 0x1B000...0x1B2FF, 0x1F004...0x1F004,
    0x1F0CF...0x1F0CF, 0x1F18E...0x1F18E, 0x1F191...0x1F19A, 0x1F200...0x1F251, 0x1F300...0x1F64F,
    0x1F680...0x1F6FF, 0x1F7E0...0x1F7EB, 0x1F90C...0x1F9FF, 0x1FA70...0x1FAFF, 0x20000...0x2FFFD,
    0x30000...0x3FFFD,
]

private func isWide(_ v: UInt32) -> Bool {
    if v < 0x1100 { return false }
    var lo = 0, hi = wideRanges.count - 1
    while lo <= hi {
        let mid = (lo + hi) / 2
        let r = wideRanges[mid]
        if v < r.lowerBound { hi = mid - 1 } else if v > r.upperBound { lo = mid + 1 } else { return true }
    }
    return false
}

/// Hints for files that are not what they seem: UTF-16 (a byte order mark, or many NULs).
func utf16Hint(_ bytes: [UInt8]) -> String? {
    if bytes.count >= 2, (bytes[0] == 0xFF && bytes[1] == 0xFE) || (bytes[0] == 0xFE && bytes[1] == 0xFF) {
        let order = bytes[0] == 0xFF ? "FF FE, little-endian" : "FE FF, big-endian"
        return "the file is UTF-16 (byte order mark \(order)); save it as UTF-8"
    }
    let sample = bytes.prefix(4096)
    let nuls = sample.reduce(0) { $0 + ($1 == 0 ? 1 : 0) }
    if sample.count >= 4, nuls * 4 >= sample.count {
        return "the file has many NUL bytes, so it is probably UTF-16; save it as UTF-8"
    }
    return nil
}

/// U+201C U+201D U+2018 U+2019, which word processors and some editors put in place of quotes.
func isSmartQuote(_ b: ArraySlice<UInt8>) -> Bool {
    guard b.count >= 3 else { return false }
    let i = b.startIndex
    return b[i] == 0xE2 && b[i + 1] == 0x80 && [0x98, 0x99, 0x9C, 0x9D].contains(b[i + 2])
}

/// The first line of a message (the diagnostic's headline), by bytes.
public func firstLine(_ s: String) -> String {
    guard let nl = s.utf8.firstIndex(of: 0x0A) else { return s }
    return String(s[..<nl])
}
