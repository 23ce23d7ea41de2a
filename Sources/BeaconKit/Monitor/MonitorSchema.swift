/// The tables and keys of monitor.toml.
enum MonitorSchema {
    static let tables: [(name: String, keys: [String])] = [
        ("monitor", ["adapter", "silent_after_s", "rescan_s", "node"]),
        ("expect", []),   // [expect.NAME] tables, whose keys are `expectKeys`
        ("metrics", ["textfile"]),
        ("mqtt", ["host", "port", "username", "password_file", "keepalive_s", "discovery_prefix"]),
    ]

    /// The keys of `[expect.NAME]`: `type`, then every expectable frame type's ID keys.
    static let expectKeys: [String] = types.reduce(into: ["type"]) { keys, t in
        for k in t.identifyingKeys where !keys.contains(k) { keys.append(k) }
    }

    /// The frame types that can be expected (those with IDs), in `BeaconFrames.types` order.
    static let types: [any BeaconFrame.Type] = BeaconFrames.types.filter { !$0.identifyingKeys.isEmpty }

    static func keys(of table: String) -> [String]? {
        tables.first { sameKey($0.name, table) }?.keys
    }

    static var tableList: String { "[monitor], [expect.NAME], [metrics], [mqtt]" }
}
