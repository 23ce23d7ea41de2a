/// The arms of one adapter: the one in flight (its generation and scope), and what the next must
/// redo beyond what is on air (or in flight), why, and when: failed attempts back off (capped).
/// Scopes only grow until an arm takes them: an edit, a fault and interference in a row are all
/// redone.
public struct RearmPlan: Sendable {
    /// The generation of the arm in flight, if any.
    private(set) var inFlight: Int?
    private(set) var inFlightScope: ArmScope = .full
    /// What the next arm must redo; nil: nothing beyond what is on air.
    private(set) var scope: ArmScope?
    /// The cause the next time on air is counted under; nil: not a re-arm (an edit, a start).
    private(set) var cause: RearmCause?
    /// The re-arm timer is set: a second request does not move it, but where it must be sooner.
    private(set) var timerSet = false
    /// The next time on air is not announced (a re-arm for a central, or a persistent interferer).
    var quiet = false
    /// Failed arms in a row: the back-off's count.
    private(set) var failures = 0

    public static let backoffBaseMs: Int64 = 50
    /// Also the longest a hung controller goes unprobed, hence recovery ≤ ~2 s after it answers.
    public static let backoffCapMs: Int64 = 1000
    /// Another program holds the adapter: ask again, slowly (it may hold it for hours).
    public static let busyBackoffCapMs: Int64 = 5000
    /// Lets a burst of related commands (a reset sequence, a power cycle) finish before re-arming.
    public static let settleMs: Int64 = 30
    /// No arm takes longer: HCIDEVUP (a few seconds on a UART controller) plus every command's
    /// own time-out. Past it the arm is given up and retried, so no lost completion parks the beacon.
    public static let deadlineMs: Int64 = 15_000

    /// The wait before the retry after `failures` failed arms in a row: doubling, up to `capMs`.
    public static func backoff(failures: Int, capMs: Int64 = backoffCapMs) -> Int64 {
        guard failures > 0 else { return settleMs }
        let shift = min(failures - 1, 20)
        return min(capMs, backoffBaseMs << Int64(shift))
    }

    /// The next arm redoes at least `s`.
    mutating func redo(_ s: ArmScope) { scope = max(scope ?? s, s) }

    /// An arm of `config` (generation `g`) starts, with its deadline: it redoes what is pending,
    /// everything when nothing is (the first arm).
    mutating func start(_ config: BeaconConfig, generation g: Int) -> [PolicyAction] {
        let s = scope ?? .full
        // Down and up happens once per step of the ladder, not on every retry after it.
        scope = nil
        inFlight = g
        inFlightScope = s
        return [.arm(s, config, generation: g), .schedule(.armDeadline, afterMs: Self.deadlineMs)]
    }

    /// The outcome of generation `g`'s arm came: true when it is the arm in flight (an abandoned
    /// arm's outcome no longer counts).
    mutating func finished(generation g: Int) -> Bool {
        guard g == inFlight else { return false }
        inFlight = nil
        return true
    }

    /// Gives up the arm in flight, if any; the next arm redoes its scope.
    mutating func abandon() -> [PolicyAction] {
        guard inFlight != nil else { return [] }
        inFlight = nil
        redo(inFlightScope)
        return [.abandonArm, .cancel(.armDeadline)]
    }

    /// A re-arm is wanted for `cause` (nil: the one pending, if any), redoing `scope`. True when
    /// its timer must be set: it is not yet, or `force`d (the cause and the time are the caller's).
    mutating func request(cause c: RearmCause?, scope s: ArmScope, force: Bool) -> Bool {
        if let c, cause == nil || force { cause = c }
        redo(s)
        if timerSet && !force { return false }
        timerSet = true
        return true
    }

    /// The re-arm timer fired.
    mutating func timerFired() { timerSet = false }

    /// An arm, a probe or an upkeep command failed: the next arm redoes everything, counted
    /// under the failure's cause, after the wait returned (the caller sets the timer).
    mutating func failed(_ failure: ArmFailure) -> Int64 {
        failures += 1
        // A specific failure names the cause better than the event that led to the attempt.
        if case .rejected = failure, cause != nil {} else { cause = failure.meaning.cause }
        scope = .full
        timerSet = true
        // A time-out already waited the command's deadline (over 2 s): ask again at once, so a
        // controller that answers again is back on air as soon as the kernel lets a command through.
        if failure == .timeout { return Self.settleMs }
        return Self.backoff(failures: failures, capMs: failure == .busy ? Self.busyBackoffCapMs : Self.backoffCapMs)
    }

    /// An arm put the beacon on air: the cause it is counted under (nil: none), whether it was
    /// quiet, and whether a retry's timer is still set (to cancel). The count starts over.
    mutating func onAir() -> (cause: RearmCause?, quiet: Bool, cancelTimer: Bool) {
        defer { cause = nil; quiet = false; timerSet = false; failures = 0 }
        return (cause, quiet, timerSet)
    }
}
