/// PDUs scheduled while each advertising set (slot) was enabled: the Eddystone-TLM frame's
/// advertising count (SPEC §3). It counts what altbeacond asked the controller to send, one
/// advertising event per set per interval (not per channel), only while the set was on air: a
/// stretch from enable to disable contributes floor(duration / interval) + 1 events (one at the
/// enable, then one per interval). Time off air adds nothing, and a longer interval only slows the
/// count down: the total never decreases.
///
/// Times are milliseconds of one monotonic clock. A call whose time is earlier than one already
/// seen (a clock glitch, a stale timestamp) is taken as happening at the latest time seen, so a
/// stretch is never negative and `count(at:)` never falls below what earlier calls fixed. The
/// count is monotonic as long as the calls and the queries come in time order, as they do in the
/// daemon; nothing can keep it so if a change is reported with a time before a query already made.
///
/// Memory is bounded: slots are 0..<256 (a controller has at most 240 sets); others are ignored.
public struct AdvertisingCounter: Equatable, Sendable {
    /// One slot on air: since when, at which interval.
    struct Stretch: Equatable, Sendable {
        var since: Int64
        var intervalMs: UInt16
    }

    /// The Core spec's least legacy advertising interval: the controller sends no faster.
    static let minimumIntervalMs: UInt16 = 20
    static let slotLimit = 256

    /// Events of every closed stretch (saturating: it cannot wrap back to small values).
    private(set) var closed: UInt64 = 0
    /// The open stretches, keyed by slot (at most `slotLimit` entries).
    private(set) var open: [Int: Stretch] = [:]
    /// The latest time any change was reported at.
    private(set) var latest: Int64 = .min

    public init() {}

    /// Slot `slot` is on air from `at` (ms, monotonic) at `intervalMs`; calling again for an
    /// enabled slot with a new interval closes the old stretch first (and the new stretch counts
    /// its own first event). Again with the same interval changes nothing: the set stayed on air.
    public mutating func enabled(slot: Int, intervalMs: UInt16, at: Int64) {
        guard Self.accepts(slot) else { return }
        let t = note(at)
        let interval = max(intervalMs, Self.minimumIntervalMs)
        if let s = open[slot] {
            if s.intervalMs == interval { return }
            close(s, at: t)
        }
        open[slot] = Stretch(since: t, intervalMs: interval)
    }

    /// Slot `slot` went off air at `at` (a fault, a stop, a re-arm): its stretch so far is kept.
    public mutating func disabled(slot: Int, at: Int64) {
        guard Self.accepts(slot) else { return }
        let t = note(at)
        if let s = open.removeValue(forKey: slot) { close(s, at: t) }
    }

    /// Every slot off air (the controller was reset, went away, ...).
    public mutating func allDisabled(at: Int64) {
        let t = note(at)
        for s in open.values { close(s, at: t) }
        open.removeAll()
    }

    /// Whether `slot` is counted as on air (tests, status).
    public func isEnabled(slot: Int) -> Bool { open[slot] != nil }

    /// The count at `at`: every closed stretch plus the open ones, as TLM's ADV_CNT, which wraps
    /// (the low 32 bits of `total(at:)`).
    public func count(at: Int64) -> UInt32 { UInt32(truncatingIfNeeded: total(at: at)) }

    /// The 64-bit count at `at` (saturating, never wrapping): never decreasing for increasing `at`.
    public func total(at: Int64) -> UInt64 {
        let t = max(at, latest)
        var sum = closed
        for s in open.values { sum = Self.add(sum, Self.events(s, at: t)) }
        return sum
    }

    // MARK: - arithmetic

    private static func accepts(_ slot: Int) -> Bool { slot >= 0 && slot < slotLimit }

    /// `at`, or the latest time already seen if `at` is earlier; remembered as the latest.
    private mutating func note(_ at: Int64) -> Int64 {
        latest = max(latest, at)
        return latest
    }

    private mutating func close(_ s: Stretch, at t: Int64) {
        closed = Self.add(closed, Self.events(s, at: t))
    }

    /// floor(duration / interval) + 1, with a negative duration taken as 0. The difference of two
    /// Int64s with `t > since` always fits a UInt64, so no overflow whatever the times.
    static func events(_ s: Stretch, at t: Int64) -> UInt64 {
        let duration: UInt64 = t > s.since ? UInt64(bitPattern: t &- s.since) : 0
        return duration / UInt64(max(s.intervalMs, minimumIntervalMs)) + 1
    }

    private static func add(_ a: UInt64, _ b: UInt64) -> UInt64 {
        let (sum, overflow) = a.addingReportingOverflow(b)
        return overflow ? .max : sum
    }
}
