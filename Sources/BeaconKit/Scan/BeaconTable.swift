/// The live list of beacons heard, as the study guide's app keeps it: one row per beacon frame
/// (AltBeacon, iBeacon, Overflow Area, Eddystone-UID, -URL, -TLM; the frames of one beacon are separate rows),
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
        let key = s.key
        guard var row = rows[key] else {
            rows[key] = Row(latest: s, printed: s)
            return .new
        }
        row.latest = s
        let p = row.printed
        let moved = abs(Int(s.rssi) - Int(p.rssi)) >= Self.rssiChangeDb
        let differs = Self.stable(s) != Self.stable(p) || s.address != p.address || s.proximity != p.proximity
        if moved || differs { row.printed = s }
        rows[key] = row
        return moved || differs ? .changed : .unchanged
    }

    /// The fields whose change is worth a line (not the frame type's counters,
    /// `FrameTraits.countingKeys`), and the frame's bytes (a TLM frame's come from the telemetry
    /// passed in, so `.zero` leaves its counters out).
    static func stable(_ s: Sighting) -> [FrameField] {
        let counting = type(of: s.frame).traits.countingKeys
        return s.frame.fields.filter { !counting.contains($0.key) } + [FrameField("", hexString(s.frame.advertisingData(.zero)))]
    }

    /// Drops the beacons unheard for `dropAfterMs`; returns their last sightings, in key order.
    public mutating func expire(now nowMs: Int64) -> [Sighting] {
        let stale = rows.filter { nowMs - $0.value.latest.atMs >= Self.dropAfterMs }.sorted { $0.key < $1.key }
        for (k, _) in stale { rows[k] = nil }
        return stale.map(\.value.latest)
    }

    /// When the next beacon would be dropped, if any.
    public var nextExpiryMs: Int64? { rows.values.map { $0.latest.atMs + Self.dropAfterMs }.min() }

    static let columns: [(title: String, width: Int, left: Bool)] = [
        ("TYPE", 13, true), ("ID", 36, true), ("MAJOR", 5, false), ("MINOR", 5, false), ("RSSI", 4, false),
        ("POWER", 5, false), ("COMPANY", 7, true), ("DIST m", 7, false), ("PROXIMITY", 9, true),
        ("HEARD", 7, false), ("DETAILS", 0, true),
    ]

    /// Fields with a column of their own; the rest of a row's fields go to DETAILS as key=value.
    static let columnFields: Set<String> = ["major", "minor", "power", "company_id"]

    /// The table as text, rows sorted by type (in `BeaconFrames.types` order), then ID;
    /// `title` goes on the first line.
    public func render(now nowMs: Int64, title: String) -> String {
        var out = title + "\n" + Self.format(Self.columns.map(\.title)) + "\n"
        for (_, row) in rows.sorted(by: { $0.key < $1.key }) {
            out += Self.format(Self.cells(row.latest, now: nowMs)) + "\n"
        }
        if rows.isEmpty { out += "(no beacon heard yet)\n" }
        return out
    }

    /// One row: ID is the identifying fields other than major and minor (the UUID, the
    /// namespace and instance, the URL), or the sender's address for TLM.
    static func cells(_ s: Sighting, now nowMs: Int64) -> [String] {
        let fields = s.frame.fields
        func value(_ key: String) -> String { fields.first { $0.key == key }?.value ?? "-" }
        let ids = s.identifyingFields.filter { !columnFields.contains($0.key) }.map(\.text)
        let company = fields.first { $0.key == "company_id" }?.text ?? "-"
        let details = s.otherFields.filter { !columnFields.contains($0.key) }.map { "\($0.key)=\($0.text)" }
        return [s.type, ids.isEmpty ? s.address : ids.joined(separator: " "), value("major"), value("minor"), s.rssiText,
                value("power"), company, s.distanceMeters.map(DistanceEstimate.format) ?? "-", s.proximity.rawValue,
                ago(nowMs - s.atMs), details.joined(separator: " ")]
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

    /// A plain line for a pipe: `new|changed|gone <ID> key=value ... type=<frame>`. The first
    /// word after the kind is the row's first ID (UUID, namespace, URL; the address for TLM),
    /// then the other IDs, `rssi`, the other fields, `distance_m`, `proximity`, `address` and
    /// `type`. AltBeacon lines read as they always have, with ` type=altbeacon` at the end.
    public static func line(_ kind: String, _ s: Sighting) -> String {
        func pair(_ f: FrameField) -> String {
            // A MFG ID as the table shows it: company=0x0118.
            if f.key == "company_id" { return "company=" + f.text }
            return "\(f.key)=\(f.text)"
        }
        let ids = s.identifyingFields
        var words = [kind, ids.first?.text ?? s.address] + ids.dropFirst().map(pair)
        words.append("rssi=\(s.rssiText)")
        words += s.otherFields.map(pair)
        words.append("distance_m=" + (s.distanceMeters.map(DistanceEstimate.format) ?? "-"))
        words += ["proximity=\(s.proximity.rawValue)", "address=\(s.address)", "type=\(s.type)"]
        return words.joined(separator: " ")
    }
}

/// "0.4 s", "12 s", "3 min".
func ago(_ ms: Int64) -> String {
    let ms = max(0, ms)
    if ms < 10_000 { return "\(ms / 1000).\(ms % 1000 / 100) s" }
    if ms < 120_000 { return "\(ms / 1000) s" }
    return "\(ms / 60_000) min"
}
