/// The re-arms of one adapter: counted by cause (STATUS=, the status file, the metrics), the
/// last few remembered (the storm detector), and those against a persistent interferer counted
/// quietly, for one summary line a `summaryPeriodMs` instead of a line each.
public struct RearmHistory: Sendable {
    private(set) var counts: [RearmCause: Int] = [:]
    /// When recent re-arms happened (at most `stormThreshold`): the storm detector.
    private(set) var recent: [Int64] = []
    /// Interference re-arms not logged one by one (a persistent interferer), and since when.
    private(set) var quiet: [RearmCause: Int] = [:]
    private(set) var quietSince: Int64?

    /// `stormThreshold` re-arms within `stormWindowMs`: someone keeps interfering.
    public static let stormWindowMs: Int64 = 2000
    public static let stormThreshold = 5
    /// While someone keeps interfering, one summary line per this period instead of a line a re-arm.
    public static let summaryPeriodMs: Int64 = 60_000

    var total: Int { counts.values.reduce(0, +) }

    /// The beacon is back on air at `now` after a re-arm for `cause`.
    mutating func count(_ cause: RearmCause, at now: Int64) {
        counts[cause, default: 0] += 1
        recent.append(now)
        if recent.count > Self.stormThreshold { recent.removeFirst(recent.count - Self.stormThreshold) }
    }

    /// Another process changed our advertising (`what`) at `now`. `storm`: it is a persistent
    /// interferer, re-armed against slowly and counted quietly. `notices`: the lines due now (the
    /// interference, unless quiet; the quiet re-arms' summary once a period, and when it stops).
    mutating func interfered(_ what: Interference, at now: Int64) -> (storm: Bool, notices: [PolicyAction]) {
        recent.removeAll { now - $0 > Self.stormWindowMs }
        let storm = recent.count >= Self.stormThreshold
        if storm {
            quietSince = quietSince ?? now
            quiet[what.rearmCause, default: 0] += 1
        }
        var notices = summary(now: now, force: !storm).map { [PolicyAction.notice($0)] } ?? []
        if !storm { notices.append(.notice("\(what.rawValue) by another process; re-arming")) }
        return (storm, notices)
    }

    /// The summary of quiet re-arms, once per `summaryPeriodMs` (or now, when `force`d and any).
    private mutating func summary(now: Int64, force: Bool) -> String? {
        guard let since = quietSince else { return nil }
        guard !quiet.isEmpty, force || now - since >= Self.summaryPeriodMs else {
            // It stopped with nothing left unsaid: the next storm counts from its own start.
            if force { quietSince = nil }
            return nil
        }
        let n = quiet.values.reduce(0, +)
        let what = RearmCause.summary(quiet)
        quiet = [:]
        quietSince = force ? nil : now
        return "another process keeps changing advertising: \(n) re-arms in \((now - since + 500) / 1000) s (\(what)), one log line a minute while it goes on"
    }
}
