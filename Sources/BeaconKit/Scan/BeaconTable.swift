/// The live list of beacons heard, as the study guide's app keeps it: one row per beacon,
/// dropped when unheard for 8.5 s. Pure: the caller supplies the clock.
public struct BeaconTable: Sendable {
    public static let dropAfterMs: Int64 = 8500
    /// RSSI jitters by a few dB on every advert; a plain-line "changed" needs a real move.
    public static let rssiChangeDb = 3

    public struct Row: Equatable, Sendable {
        public var latest: Sighting
        /// The sighting last reported as a plain line, to tell a change from jitter.
        public var printed: Sighting
    }

    public enum Change: Equatable, Sendable { case new, changed, unchanged }

    public private(set) var rows: [BeaconKey: Row] = [:]

    public init() {}

    public var count: Int { rows.count }

    /// Records a sighting; says whether it is a new beacon, a change worth a line, or neither.
    public mutating func record(_ s: Sighting) -> Change {
        let key = BeaconKey(s.beacon)
        guard var row = rows[key] else {
            rows[key] = Row(latest: s, printed: s)
            return .new
        }
        row.latest = s
        let p = row.printed
        let moved = abs(Int(s.rssi) - Int(p.rssi)) >= Self.rssiChangeDb
        let differs = s.beacon != p.beacon || s.address != p.address || s.proximity != p.proximity
        if moved || differs { row.printed = s }
        rows[key] = row
        return moved || differs ? .changed : .unchanged
    }

    /// Drops the beacons unheard for `dropAfterMs`; returns their last sightings, in key order.
    public mutating func expire(nowMs: Int64) -> [Sighting] {
        let stale = rows.filter { nowMs - $0.value.latest.atMs >= Self.dropAfterMs }.sorted { $0.key < $1.key }
        for (k, _) in stale { rows[k] = nil }
        return stale.map(\.value.latest)
    }

    /// When the next beacon would be dropped, if any.
    public var nextExpiryMs: Int64? { rows.values.map { $0.latest.atMs + Self.dropAfterMs }.min() }

    static let columns: [(title: String, width: Int, left: Bool)] = [
        ("UUID", 36, true), ("MAJOR", 5, false), ("MINOR", 5, false), ("RSSI", 4, false),
        ("POWER", 5, false), ("COMPANY", 7, true), ("DIST m", 7, false), ("PROXIMITY", 9, true),
        ("HEARD", 7, false),
    ]

    /// The table as text, rows sorted by uuid, major, minor; `title` goes on the first line.
    public func render(nowMs: Int64, title: String) -> String {
        var out = title + "\n" + Self.format(Self.columns.map(\.title)) + "\n"
        for (_, row) in rows.sorted(by: { $0.key < $1.key }) {
            let s = row.latest
            let d = s.distanceMeters.map(DistanceEstimate.format) ?? "-"
            out += Self.format([s.beacon.uuidString, "\(s.beacon.major)", "\(s.beacon.minor)", s.rssiText,
                                "\(s.beacon.power)", companyString(s.beacon.companyID), d, s.proximity.rawValue,
                                ago(nowMs - s.atMs)]) + "\n"
        }
        if rows.isEmpty { out += "(no AltBeacon heard yet)\n" }
        return out
    }

    static func format(_ cells: [String]) -> String {
        var line = ""
        for (i, c) in columns.enumerated() {
            let cell = i < cells.count ? cells[i] : ""
            let pad = String(repeating: " ", count: max(0, c.width - cell.count))
            if i > 0 { line += "  " }
            line += c.left ? cell + pad : pad + cell
        }
        while line.last == " " { line.removeLast() }
        return line
    }

    /// A plain line for a pipe: `new|changed|gone UUID major=.. minor=.. rssi=.. ...`.
    public static func line(_ kind: String, _ s: Sighting) -> String {
        let d = s.distanceMeters.map(DistanceEstimate.format) ?? "-"
        return "\(kind) \(s.beacon.uuidString) major=\(s.beacon.major) minor=\(s.beacon.minor) rssi=\(s.rssiText)"
            + " power=\(s.beacon.power) company=\(companyString(s.beacon.companyID)) reserved=\(s.beacon.reserved)"
            + " distance_m=\(d) proximity=\(s.proximity.rawValue) address=\(s.address)"
    }
}

/// `0x0118`.
public func companyString(_ id: UInt16) -> String {
    "0x" + hexString([UInt8(id >> 8), UInt8(id & 0xff)])
}

/// "0.4 s", "12 s", "3 min".
func ago(_ ms: Int64) -> String {
    let ms = max(0, ms)
    if ms < 10_000 { return "\(ms / 1000).\(ms % 1000 / 100) s" }
    if ms < 120_000 { return "\(ms / 1000) s" }
    return "\(ms / 60_000) min"
}
