/// What the monitor announced on the broker, remembered across its restarts (issue 38): one
/// retained topic a line (discovery and state), in the state directory beside the beacon
/// daemon's last good config. At each connection whatever of it the configuration no longer
/// publishes (a beacon removed from monitor.toml, a renamed node, control switched off) is
/// cleared from the broker (`MonitorPublisher.connected`). Written only when the set changes.
public enum MonitorAnnounced {
    public static let fileName = "monitor-announced"

    /// The file of the monitor reading `configPath`: `monitor-announced` for the packaged
    /// /etc/altbeacond/monitor.toml, else `monitor-announced-` and the path's FNV-1a hash, so
    /// that two monitors on one machine (two adapters, two configs) never clear each other's
    /// topics, while a renamed node (the same file edited) finds what it announced before.
    public static func fileName(configPath: String) -> String {
        guard configPath != MonitorConfigFile.defaultPath else { return fileName }
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in configPath.utf8 { h = (h ^ UInt64(b)) &* 0x0000_0100_0000_01b3 }
        let hex = String(h, radix: 16)
        return fileName + "-" + String(repeating: "0", count: 16 - hex.count) + hex
    }
    /// More than any configuration announces (64-byte names, a few hundred beacons): a file
    /// larger than this is not ours, and is read as empty.
    public static let maxBytes = 1 << 20

    /// The topics, one a line; empty lines and a last line without its newline (a write cut
    /// short cannot happen: the file is replaced atomically, but a hand edit may) are skipped.
    public static func parse(_ bytes: [UInt8]) -> [String] {
        guard bytes.count <= maxBytes else { return [] }
        var out: [String] = []
        var start = 0
        for (i, b) in bytes.enumerated() where b == 0x0A {
            if i > start { out.append(String(decoding: bytes[start..<i], as: UTF8.self)) }
            start = i + 1
        }
        return out
    }

    /// The file's content: the topics sorted, one a line.
    public static func text(_ topics: [String]) -> [UInt8] {
        var out: [UInt8] = []
        for t in topics.sorted() where !t.isEmpty && !t.utf8.contains(0x0A) {
            out += Array(t.utf8)
            out.append(0x0A)
        }
        return out
    }
}
