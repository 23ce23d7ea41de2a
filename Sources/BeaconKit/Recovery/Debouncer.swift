/// Coalesces a burst of file events into one reload: fires `quietMs` after the last event, but
/// never later than `maxDelayMs` after the first, so a writer that never stops cannot starve it.
public struct Debouncer: Sendable {
    public let quietMs: Int64
    public let maxDelayMs: Int64
    private var firstEventAt: Int64?

    public init(quietMs: Int64 = 150, maxDelayMs: Int64 = 600) {
        self.quietMs = quietMs
        self.maxDelayMs = maxDelayMs
    }

    /// Records an event at `now`; returns when to fire.
    public mutating func event(at now: Int64) -> Int64 {
        let first = firstEventAt ?? now
        firstEventAt = first
        return min(now + quietMs, first + maxDelayMs)
    }

    /// The reload ran: the next event starts a new burst.
    public mutating func fired() { firstEventAt = nil }
}
