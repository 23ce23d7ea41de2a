// Issue 49: a fleet release rolls out in waves and stops itself. Each card decides its wave
// from its own identity (no coordinator: the broker is all the fleet shares), and each card that
// rolled a release back says so, retained, beside the release topic; every other card counts
// those reports and stops taking that release on its own once they reach its `halt_after`.
//
//     <release_topic>/rolled-back/<node>   {"version":"1.3.0","time":1764244000}   (retained)

public enum FleetRollout {
    /// 0-99: where this card falls for this release. FNV-1a (64 bits) of the node and the
    /// version: stable across restarts and machines (no seeded hashing), and a new release
    /// draws new waves, so the same cards are not always the first.
    public static func bucket(node: String, version: String) -> Int {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in Array(node.utf8) + [0] + Array(version.utf8) {
            h ^= UInt64(b)
            h = h &* 0x0000_0100_0000_01b3
        }
        return Int(h % 100)
    }

    /// This card's wave takes the release: its bucket is below the release's `rollout`.
    public static func inWave(node: String, release: FleetRelease) -> Bool {
        bucket(node: node, version: release.version) < release.rollout
    }

    /// `<release_topic>/rolled-back/<node>`: this card's report.
    public static func reportTopic(releaseTopic: String, node: String) -> String { "\(releaseTopic)/rolled-back/\(node)" }

    /// Every card's report: the filter a monitor subscribes to.
    public static func reportFilter(releaseTopic: String) -> String { "\(releaseTopic)/rolled-back/+" }

    /// The node a report topic names; nil for another topic.
    public static func reportNode(topic: String, releaseTopic: String) -> String? {
        let prefix = "\(releaseTopic)/rolled-back/"
        guard topic.hasPrefix(prefix) else { return nil }
        let node = String(topic.dropFirst(prefix.count))
        return node.isEmpty || node.utf8.contains(UInt8(ascii: "/")) ? nil : node
    }

    /// A report's payload: the version it rolled back and when.
    public static func report(version: String, time: Int64) -> String {
        "{\"version\":\(jsonString(version)),\"time\":\(time)}"
    }

    /// The version a report names; nil for an empty (withdrawn) or malformed one.
    public static func reportedVersion(_ payload: [UInt8]) -> String? {
        guard payload.count <= 512, let v = JSONValue.parse(payload)?["version"]?.string, FleetRelease.isVersion(v) else { return nil }
        return v
    }
}

/// The reports heard, by node: the cards that rolled back which version.
public struct RollbackReports: Equatable, Sendable {
    public private(set) var byNode: [String: String] = [:]

    public init() {}

    /// A report received (an empty payload withdraws the node's).
    public mutating func received(node: String, payload: [UInt8]) {
        byNode[node] = FleetRollout.reportedVersion(payload)
    }

    /// The cards that rolled `version` back.
    public func count(_ version: String) -> Int { byNode.values.filter { $0 == version }.count }

    /// Why the fleet's `release` no longer rolls out on its own; nil while it does.
    public func halted(_ release: FleetRelease) -> String? {
        let n = count(release.version)
        guard n >= release.haltAfter else { return nil }
        return "the rollout of \(release.version) stopped itself: rolled back on \(n) card\(n == 1 ? "" : "s") "
            + "(halt_after \(release.haltAfter)); Install in Home Assistant still tries it"
    }
}
