// Issue 49: which of two release versions is newer, as Debian orders versions (dpkg's
// `verrevcmp`, deb-version(7)): the monitor refuses a fleet release older than the one
// installed, and the root-side updater refuses the bundle with `dpkg --compare-versions`, the
// same order, so the two ends never disagree. Versions here are `FleetRelease.isVersion`'s
// `[0-9A-Za-z.+~-]`: no epoch (no `:`); the last `-` starts the revision.

public enum ReleaseVersion {
    /// Negative when `a` is older than `b`, 0 when they are the same version, positive when newer.
    public static func compare(_ a: String, _ b: String) -> Int {
        let (ua, ra) = split(Array(a.utf8))
        let (ub, rb) = split(Array(b.utf8))
        let upstream = verrevcmp(ua, ub)
        return upstream != 0 ? upstream : verrevcmp(ra, rb)
    }

    public static func isOlder(_ a: String, than b: String) -> Bool { compare(a, b) < 0 }

    /// Upstream version and Debian revision (empty without a `-`).
    static func split(_ v: [UInt8]) -> ([UInt8], [UInt8]) {
        guard let dash = v.lastIndex(of: UInt8(ascii: "-")) else { return (v, []) }
        return (Array(v[..<dash]), Array(v[(dash + 1)...]))
    }

    static func isDigit(_ c: UInt8) -> Bool { c >= 0x30 && c <= 0x39 }
    static func isLetter(_ c: UInt8) -> Bool { (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A) }

    /// A non-digit's weight: `~` before the end, the end before letters, letters before the rest.
    static func order(_ c: UInt8?) -> Int {
        guard let c else { return 0 }
        if isDigit(c) { return 0 }
        if isLetter(c) { return Int(c) }
        if c == UInt8(ascii: "~") { return -1 }
        return Int(c) + 256
    }

    /// dpkg's `verrevcmp`: alternating runs of non-digits (compared by `order`) and digits
    /// (compared as numbers, leading zeros ignored).
    static func verrevcmp(_ a: [UInt8], _ b: [UInt8]) -> Int {
        var i = 0, j = 0
        func at(_ v: [UInt8], _ k: Int) -> UInt8? { k < v.count ? v[k] : nil }
        while i < a.count || j < b.count {
            var firstDiff = 0
            while (at(a, i).map { !isDigit($0) } ?? false) || (at(b, j).map { !isDigit($0) } ?? false) {
                let ac = order(at(a, i)), bc = order(at(b, j))
                if ac != bc { return ac - bc }
                i += 1; j += 1
            }
            while at(a, i) == UInt8(ascii: "0") { i += 1 }
            while at(b, j) == UInt8(ascii: "0") { j += 1 }
            while let x = at(a, i), let y = at(b, j), isDigit(x), isDigit(y) {
                if firstDiff == 0 { firstDiff = Int(x) - Int(y) }
                i += 1; j += 1
            }
            if at(a, i).map(isDigit) ?? false { return 1 }
            if at(b, j).map(isDigit) ?? false { return -1 }
            if firstDiff != 0 { return firstDiff }
        }
        return 0
    }
}
