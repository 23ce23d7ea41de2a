/// Reconnecting to a server that may accept a session and end it at once: an MQTT broker
/// closes the older of two connections with one client ID (3.1.4), so two clients sharing one
/// take the session from each other in turn. `RetryBackoff`'s doubling wait, where an attempt
/// counts as a success only once its session has lived `settleMs`, not when it is accepted
/// (issue 38: reset at every CONNACK, two such monitors reconnected every second for ever).
/// A session ended sooner counts as a failure: the wait grows to the cap, and its cause, the
/// same each time, is said once; its acceptance is said once too, not at every reconnection.
/// Pure: the caller tells it when a session was accepted, when it has lived `settleMs` (a timer),
/// and when an attempt or a session failed.
public struct SessionRetry: Sendable {
    public let settleMs: Int64
    public private(set) var backoff: RetryBackoff
    /// When the session was accepted; nil between sessions, and once it has settled.
    public private(set) var acceptedAtMs: Int64?
    /// Sessions in a row that ended within `settleMs` of being accepted.
    public private(set) var shortSessions = 0

    public init(range: ClosedRange<Int64>, settleMs: Int64) {
        backoff = RetryBackoff(range: range)
        self.settleMs = settleMs
    }

    /// The wait before the next attempt, should this one fail.
    public var delayMs: Int64 { backoff.delayMs }
    /// Why the last attempt failed; nil once a session has settled.
    public var problem: String? { backoff.problem }

    /// A session was accepted (CONNACK): whether to say so (not again while sessions end at
    /// once), whether it follows a failure ("connected again"), and when to call `settled`.
    public mutating func accepted(atMs now: Int64) -> (say: Bool, again: Bool, settleAfterMs: Int64) {
        acceptedAtMs = now
        return (shortSessions == 0, backoff.problem != nil, settleMs)
    }

    /// The session accepted at `acceptedAtMs` is still up at `now`: once it has lived
    /// `settleMs`, the wait is back to its lower bound. Returns how many sessions before it had
    /// ended at once (nil when it has not settled yet, or had settled already), for the log.
    public mutating func settled(atMs now: Int64) -> Int? {
        guard let at = acceptedAtMs, now - at >= settleMs else { return nil }
        acceptedAtMs = nil
        backoff.succeeded()
        defer { shortSessions = 0 }
        return shortSessions
    }

    /// An attempt failed, or a session ended (not by us): whether to say `why` and how long to
    /// wait. A session that lived `settleMs` (`settled` not yet called) starts the wait again
    /// from its lower bound; one that ended sooner makes it grow.
    public mutating func failed(_ why: String, atMs now: Int64) -> (say: Bool, afterMs: Int64) {
        if let at = acceptedAtMs {
            if now - at >= settleMs {
                _ = settled(atMs: now)
            } else {
                acceptedAtMs = nil
                shortSessions += 1
            }
        }
        return backoff.failed(why)
    }

    /// The shortest wait again (the cause may be gone), the problem kept.
    public mutating func shorten() { backoff.shorten() }
}
