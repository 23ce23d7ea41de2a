// Unix time as text for Home Assistant's timestamp sensors (issue 48: the local beacon's start as
// a timestamp, which changes only at a restart, instead of an uptime that changes at every
// publish and costs a recorder row each time). No Foundation: the date from the day count by
// Howard Hinnant's `civil_from_days` (proleptic Gregorian, any Int64 day).

public enum UTCTimestamp {
    /// RFC 3339 in UTC, to the second: `2026-11-28T19:00:00+00:00` (the form Python's
    /// `datetime.isoformat()` gives, which HA shows a timestamp sensor's state as).
    public static func rfc3339(_ unixS: Int64) -> String {
        let days = unixS >= 0 ? unixS / 86_400 : -((-unixS + 86_399) / 86_400)
        let secs = unixS - days * 86_400
        let (y, m, d) = civil(days: days)
        func two(_ v: Int64) -> String { v < 10 ? "0\(v)" : "\(v)" }
        let year = y >= 0 && y < 10_000 ? String(repeating: "0", count: 4 - "\(y)".count) + "\(y)" : "\(y)"
        return "\(year)-\(two(m))-\(two(d))T\(two(secs / 3600)):\(two(secs / 60 % 60)):\(two(secs % 60))+00:00"
    }

    /// Days since 1970-01-01 as (year, month 1-12, day 1-31).
    static func civil(days: Int64) -> (Int64, Int64, Int64) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097                                   // [0, 146096]
        let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365   // [0, 399]
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)             // [0, 365]
        let mp = (5 * doy + 2) / 153                                  // [0, 11], March first
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (m <= 2 ? 1 : 0), m, d)
    }
}
