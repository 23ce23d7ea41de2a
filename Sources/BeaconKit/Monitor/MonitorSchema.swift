/// The tables and keys of monitor.toml.
enum MonitorSchema {
    static let tables: [(name: String, keys: [String])] = [
        ("monitor", ["adapter", "silent_after_s", "rescan_s", "node", "area"]),
        ("expect", []),   // [expect.NAME] tables, whose keys are `expectKeys`
        ("metrics", ["textfile"]),
        ("mqtt", ["host", "port", "username", "password_file", "keepalive_s", "discovery_prefix", "tls", "ca_file", "cert_file",
                  "key_file", "server_name", "control", "release_topic"]),
    ]

    /// The keys of `[expect.NAME]`: `type`, then every expectable frame type's ID keys. Only
    /// read while a monitor.toml is checked.
    static var expectKeys: [String] {
        var keys = ["type"]
        for t in types { for k in t.traits.identifyingKeys where !keys.contains(k) { keys.append(k) } }
        return keys
    }

    /// The frame types that can be expected, in `BeaconFrames.types` order.
    static let types: [any ExpectableFrame.Type] = BeaconFrames.types.compactMap { $0 as? any ExpectableFrame.Type }

    static func keys(of table: String) -> [String]? {
        tables.first { sameKey($0.name, table) }?.keys
    }

    static var tableList: String { "[monitor], [expect.NAME], [metrics], [mqtt]" }
}
