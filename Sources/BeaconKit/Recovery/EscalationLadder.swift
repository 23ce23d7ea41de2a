/// The escalation ladder (SPEC §5) for a controller that is there but keeps failing (time-outs,
/// refusals): after `powerCycleAfter` failed re-arms the adapter is taken down and up, after
/// `restartAfter` more the service asks for a restart. A missing or blocked adapter is waited
/// for instead, and one held by another program is asked again with back-off: no restart cures
/// either. The ladder starts over only once the beacon stayed on air for `stableMs`.
public struct EscalationLadder: Sendable {
    /// Consecutive failed re-arms of a controller that is there but does not work (time-outs,
    /// refusals), also across arms that succeed but whose probes then fail: the ladder's count.
    private(set) var failures = 0
    private(set) var step: Escalation = .retrying
    /// How often each step of the ladder was taken (power cycles, restarts asked for).
    private(set) var stepsTaken: [Escalation: Int] = [:]
    /// Since when the beacon is on air; the ladder resets only once it stayed so for `stableMs`.
    private(set) var onAirSince: Int64?

    /// Failed re-arms before the adapter is taken down and up, and as many more before the
    /// service asks systemd for a restart.
    public static let powerCycleAfter = 5
    public static let restartAfter = 5
    /// On air and answering probes this long: the controller counts as working again.
    public static let stableMs: Int64 = 30_000

    /// A re-arm failed with `fault` (the beacon is off air): the step taken now, if any, with its
    /// warning. Each step is taken once on the way up.
    mutating func failed(_ fault: AdapterFault) -> (step: Escalation, warning: String)? {
        onAirSince = nil
        switch fault {
        case .hung, .failing: failures += 1
        case .missing, .blocked: failures = 0; step = .retrying; return nil
        case .down, .busy, .connected: return nil
        }
        let warning: String
        if step == .retrying && failures >= Self.powerCycleAfter {
            step = .powerCycled
            warning = "\(fault.rawValue) after \(failures) re-arms; taking the adapter down and up"
        } else if step == .powerCycled && failures >= Self.powerCycleAfter + Self.restartAfter {
            step = .restartRequested
            warning = "\(fault.rawValue) after \(failures) re-arms, also after taking the adapter down and up; restarting the service"
        } else {
            return nil
        }
        stepsTaken[step, default: 0] += 1
        return (step, warning)
    }

    /// The beacon went on air at `now`.
    mutating func onAir(at now: Int64) { onAirSince = now }

    /// The beacon is off air without a failure of the controller (a central holds it).
    mutating func offAir() { onAirSince = nil }

    /// A probe answered at `now`: once the beacon stayed on air for `stableMs`, the ladder starts
    /// over. Returns the notice for it (nil: too soon, or nothing to start over).
    mutating func answered(at now: Int64) -> String? {
        guard let since = onAirSince, now - since >= Self.stableMs, failures > 0 || step != .retrying else { return nil }
        let n = failures
        failures = 0
        step = .retrying
        return "the controller works again (on air for \(Self.stableMs / 1000) s after \(n) failed re-arms)"
    }
}
