/// The tables and keys of monitor.toml.
enum MonitorSchema {
    static let tables: [(name: String, keys: [String])] = [
        ("monitor", ["adapter", "silent_after_s", "rescan_s", "node"]),
        ("expect", []),   // [expect.NAME] tables, whose keys are `expectKeys`
        ("metrics", ["textfile"]),
        ("mqtt", ["host", "port", "username", "password_file", "keepalive_s", "discovery_prefix"]),
    ]

    static let expectKeys = ["type", "uuid", "major", "minor", "matching_byte", "namespace", "instance", "url"]

    /// The types that can be expected, in `BeaconFrames.types` order, with their ID keys.
    static let types: [(name: String, keys: [String])] = [
        (AltBeaconFrame.name, ["uuid", "major", "minor"]),
        (IBeaconFrame.name, ["uuid", "major", "minor"]),
        (OverflowAreaFrame.name, ["major", "minor", "matching_byte"]),
        (EddystoneUIDFrame.name, ["namespace", "instance"]),
        (EddystoneURLFrame.name, ["url"]),
    ]

    static func keys(of table: String) -> [String]? {
        tables.first { sameKey($0.name, table) }?.keys
    }

    static var tableList: String { "[monitor], [expect.NAME], [metrics], [mqtt]" }
}
