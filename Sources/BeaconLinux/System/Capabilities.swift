/// The effective capabilities the daemon needs, read from /proc/self/status (CapEff).
public enum Capabilities {
    public static let netAdmin = 12
    public static let netRaw = 13

    /// Names of the needed capabilities this process lacks; empty when all are there (or unknown).
    public static func missingForBluetooth(status: [UInt8]? = try? readFile("/proc/self/status")) -> [String] {
        guard let status, let eff = effective(fromStatus: status) else { return [] }
        var missing: [String] = []
        if eff & (1 << UInt64(netRaw)) == 0 { missing.append("CAP_NET_RAW") }
        if eff & (1 << UInt64(netAdmin)) == 0 { missing.append("CAP_NET_ADMIN") }
        return missing
    }

    static func effective(fromStatus bytes: [UInt8]) -> UInt64? {
        let text = String(decoding: bytes, as: UTF8.self)
        for line in text.split(separator: "\n") where line.hasPrefix("CapEff:") {
            return UInt64(line.dropFirst("CapEff:".count).trimmingWhitespace, radix: 16)
        }
        return nil
    }
}

extension Substring {
    var trimmingWhitespace: Substring {
        var s = self
        while let f = s.first, f == " " || f == "\t" { s = s.dropFirst() }
        while let l = s.last, l == " " || l == "\t" || l == "\r" { s = s.dropLast() }
        return s
    }
}
