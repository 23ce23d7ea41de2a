/// How much of the controller setup an arm must redo.
public enum ArmScope: Int, Comparable, Sendable {
    /// Advertising data only (the identity changed).
    case data = 0
    /// Disable, parameters, data, enable (the interval changed, or someone else touched advertising).
    case parameters = 1
    /// Also bring the adapter up and (re)open and re-read it (new adapter, down, removed, hung).
    case full = 2
    /// Take the adapter down first (HCIDEVDOWN, then up): the kernel re-runs the controller's
    /// setup, e.g. the Pi's firmware patch. The escalation for a controller that keeps failing.
    case powerCycle = 3
    public static func < (a: ArmScope, b: ArmScope) -> Bool { a.rawValue < b.rawValue }
}

/// Why arming or probing the controller failed.
public enum ArmFailure: Equatable, Sendable {
    case missing, blocked, down, timeout
    case rejected(String)
}

/// What is wrong with the adapter while the beacon is off air.
public enum AdapterFault: String, Equatable, Sendable {
    case missing = "adapter missing"
    case blocked = "adapter blocked by rfkill"
    case down = "adapter down"
    case hung = "controller not answering"
    case failing = "controller failing"
}

/// Re-arm causes, counted for STATUS= and the log.
public enum RearmCause: String, CaseIterable, Sendable {
    case reset, down, disabled, overwritten, rfkill, removed, hung, hardwareError = "hardware-error", failing
}

public enum SupervisorPhase: Equatable, Sendable {
    case starting, arming, advertising, fault(AdapterFault), stopped
}

public enum SupervisorEvent: Equatable, Sendable {
    case start
    case adapterRegistered, adapterUnregistered, adapterUp, adapterDown
    /// rfkill state changed somewhere: a blocked adapter may be usable again.
    case rfkillChanged
    case interference(Interference)
    case hardwareError
    /// The outcome of an `.arm` action (nil: on air).
    case armed(ArmFailure?)
    /// The outcome of a `.probe` action (nil: the controller answered).
    case probed(ArmFailure?)
    case rearmTimer, probeTimer
    /// A new config was accepted; `scope` says what changed on air.
    case configChanged(ArmScope)
    case stop
}

public enum SupervisorAction: Equatable, Sendable {
    case arm(ArmScope)
    case probe
    case scheduleRearm(afterMs: Int64)
    case cancelRearm
    case scheduleProbe(afterMs: Int64)
    case cancelProbe
    case closeAdapter
    case disableAdvertising
    case notice(String)
    case warning(String)
    /// The escalation's last step (SPEC §5): stop pinging systemd's watchdog (or exit) so that
    /// systemd restarts the service; `false`: the controller recovered, ping again.
    case requestRestart(Bool)
}

/// Where a controller that keeps failing is on the escalation ladder (SPEC §5).
public enum Escalation: Equatable, Sendable {
    /// Re-arming with back-off.
    case retrying
    /// The adapter was taken down and up; re-arming again.
    case powerCycled
    /// Still failing: systemd is asked to restart the service.
    case restartRequested
}

/// The recovery policy, pure: events in, actions out. The daemon performs the actions and feeds
/// their outcomes back. It never gives up on the adapter; failed attempts back off (capped),
/// and a storm of interference is throttled, so nothing spins.
public struct Supervisor: Sendable {
    public private(set) var phase: SupervisorPhase = .starting
    public private(set) var rearms: [RearmCause: Int] = [:]
    public private(set) var consecutiveFailures = 0
    private var pendingScope: ArmScope?
    private var pendingCause: RearmCause?
    private var rearmScheduled = false
    private var recentRearms: [Int64] = []
    public var probeIntervalMs: Int64
    /// Consecutive failed re-arms of a controller that is there but does not work (time-outs,
    /// refusals): what the escalation ladder counts.
    public private(set) var ladderFailures = 0
    public private(set) var escalation: Escalation = .retrying
    /// Probes in a row that got no answer: one is not yet "hung".
    private var missedProbes = 0
    /// Interference re-arms not logged one by one (a persistent interferer), and since when.
    private var quietRearms: [RearmCause: Int] = [:]
    private var quietSince: Int64?
    private var pendingQuiet = false

    public static let backoffBaseMs: Int64 = 50
    /// Also the longest a hung controller goes unprobed, hence recovery ≤ ~2 s after it answers.
    public static let backoffCapMs: Int64 = 1000
    /// Lets a burst of related commands (a reset sequence, a power cycle) finish before re-arming.
    public static let settleMs: Int64 = 30
    public static let stormWindowMs: Int64 = 2000
    public static let stormThreshold = 5
    /// Failed re-arms before the adapter is taken down and up, and as many more before systemd
    /// is asked for a restart.
    public static let powerCycleAfter = 5
    public static let restartAfter = 5
    /// While someone keeps interfering, one summary line per this period instead of a line a re-arm.
    public static let summaryPeriodMs: Int64 = 60_000

    public init(probeIntervalMs: Int64) { self.probeIntervalMs = probeIntervalMs }

    public var totalRearms: Int { rearms.values.reduce(0, +) }

    /// "reset 2, down 1" — causes with non-zero counts, in a fixed order.
    public var rearmSummary: String {
        RearmCause.allCases.compactMap { c in rearms[c].map { "\(c.rawValue) \($0)" } }.joined(separator: ", ")
    }

    public static func backoff(failures: Int) -> Int64 {
        guard failures > 0 else { return settleMs }
        let shift = min(failures - 1, 20)
        return min(backoffCapMs, backoffBaseMs << Int64(shift))
    }

    public mutating func handle(_ event: SupervisorEvent, now: Int64) -> [SupervisorAction] {
        if phase == .stopped { return [] }
        switch event {
        case .start:
            phase = .arming
            pendingScope = .full
            return [.arm(.full)]
        case .armed(nil):
            return onAir(now: now)
        case .probed(.timeout?) where phase == .advertising && missedProbes == 0:
            // One missed answer is not yet "hung" (the kernel may be retrying): ask again.
            missedProbes = 1
            return [.probe]
        case .armed(let failure?), .probed(let failure?):
            return failed(failure, now: now)
        case .probed(nil):
            missedProbes = 0
            return phase == .advertising ? [.scheduleProbe(afterMs: probeIntervalMs)] : []
        case .rearmTimer:
            rearmScheduled = false
            guard phase != .advertising || pendingScope != nil else { return [] }
            // A faulted adapter keeps showing its fault while we retry it.
            if case .fault = phase {} else { phase = .arming }
            let scope = pendingScope ?? .full
            // Down and up happens once per step of the ladder, not on every retry after it.
            if scope == .powerCycle { pendingScope = .full }
            return [.arm(scope)]
        case .probeTimer:
            return phase == .advertising ? [.probe] : []
        case .adapterRegistered, .adapterUp:
            guard phase != .advertising else { return [] }
            // The controller is usable again: now, not at the next back-off step.
            return rearm(cause: nil, scope: .full, afterMs: Self.settleMs, now: now, force: true)
        case .adapterUnregistered:
            phase = .fault(.missing)
            rearmScheduled = false
            // The kernel tells us when it is back; the slow retry is only a safety net.
            return [.cancelProbe, .closeAdapter, .warning("\(AdapterFault.missing.rawValue); waiting for it")]
                + rearm(cause: .removed, scope: .full, afterMs: Self.backoffCapMs, now: now, force: true)
        case .adapterDown:
            return [.cancelProbe] + rearm(cause: .down, scope: .full, afterMs: Self.settleMs, now: now)
        case .rfkillChanged:
            guard phase == .fault(.blocked) else { return [] }
            return rearm(cause: .rfkill, scope: .full, afterMs: 0, now: now, force: true)
        case .interference(let what):
            guard phase == .advertising else {
                pendingScope = max(pendingScope ?? .parameters, .parameters)
                return []
            }
            let cause: RearmCause = switch what {
            case .reset: .reset
            case .advertisingDisabled: .disabled
            case .advertisingOverwritten, .parametersChanged: .overwritten
            }
            let delay = stormDelay(now: now)
            guard delay > Self.settleMs else {
                pendingQuiet = false
                return summary(now: now, force: true) + [.notice("\(what.rawValue) by another process; re-arming")]
                    + rearm(cause: cause, scope: .parameters, afterMs: delay, now: now)
            }
            // A persistent interferer: count instead of logging each re-arm.
            pendingQuiet = true
            quietSince = quietSince ?? now
            quietRearms[cause, default: 0] += 1
            return summary(now: now, force: false) + rearm(cause: cause, scope: .parameters, afterMs: delay, now: now)
        case .hardwareError:
            return [.warning("controller reported a hardware error; re-arming")]
                + rearm(cause: .hardwareError, scope: .full, afterMs: Self.settleMs, now: now)
        case .configChanged(let scope):
            pendingScope = max(pendingScope ?? scope, scope)
            guard phase == .advertising else { return [] }
            phase = .arming
            return [.arm(pendingScope ?? scope)]
        case .stop:
            phase = .stopped
            return [.cancelRearm, .cancelProbe, .disableAdvertising]
        }
    }

    private mutating func onAir(now: Int64) -> [SupervisorAction] {
        var actions: [SupervisorAction] = [.scheduleProbe(afterMs: probeIntervalMs)]
        if let cause = pendingCause {
            rearms[cause, default: 0] += 1
            recentRearms.append(now)
            if !pendingQuiet { actions.append(.notice("back on air after \(cause.rawValue) (re-arms: \(rearmSummary))")) }
        }
        if escalation != .retrying || ladderFailures >= Self.powerCycleAfter {
            actions.append(.notice("the controller works again after \(ladderFailures) failed re-arms"))
        }
        if escalation == .restartRequested { actions.append(.requestRestart(false)) }
        escalation = .retrying
        ladderFailures = 0
        missedProbes = 0
        pendingQuiet = false
        if rearmScheduled { actions.insert(.cancelRearm, at: 0) }
        phase = .advertising
        consecutiveFailures = 0
        pendingScope = nil
        pendingCause = nil
        rearmScheduled = false
        return actions
    }

    private mutating func failed(_ failure: ArmFailure, now: Int64) -> [SupervisorAction] {
        consecutiveFailures += 1
        let fault: AdapterFault
        let cause: RearmCause
        switch failure {
        case .missing: (fault, cause) = (.missing, .removed)
        case .blocked: (fault, cause) = (.blocked, .rfkill)
        case .down: (fault, cause) = (.down, .down)
        case .timeout: (fault, cause) = (.hung, .hung)
        case .rejected: (fault, cause) = (.failing, .failing)
        }
        var actions: [SupervisorAction] = [.cancelProbe]
        if phase != .fault(fault) {
            var text = fault.rawValue
            if case .rejected(let why) = failure { text += ": \(why)" }
            actions.append(.warning("\(text); beacon off air, retrying"))
        }
        phase = .fault(fault)
        missedProbes = 0
        if fault == .missing { actions.append(.closeAdapter) }
        // A specific failure names the cause better than the event that led to the attempt.
        if case .rejected = failure, pendingCause != nil {} else { pendingCause = cause }
        pendingScope = .full
        actions += escalate(fault)
        rearmScheduled = true
        return actions + [.scheduleRearm(afterMs: Self.backoff(failures: consecutiveFailures))]
    }

    /// The ladder for a controller that is there but keeps failing (time-outs, refusals): after
    /// `powerCycleAfter` failed re-arms the adapter is taken down and up, after `restartAfter`
    /// more systemd is asked for a restart. A missing or blocked adapter is waited for instead.
    private mutating func escalate(_ fault: AdapterFault) -> [SupervisorAction] {
        switch fault {
        case .hung, .failing: ladderFailures += 1
        case .missing, .blocked: ladderFailures = 0; escalation = .retrying; return []
        case .down: return []
        }
        if escalation == .retrying && ladderFailures >= Self.powerCycleAfter {
            escalation = .powerCycled
            pendingScope = .powerCycle
            return [.warning("\(fault.rawValue) after \(ladderFailures) re-arms; taking the adapter down and up")]
        }
        if escalation == .powerCycled && ladderFailures >= Self.powerCycleAfter + Self.restartAfter {
            escalation = .restartRequested
            return [.warning("\(fault.rawValue) after \(ladderFailures) re-arms, also after taking the adapter down and up; asking systemd to restart the service"),
                    .requestRestart(true)]
        }
        return []
    }

    /// The summary of quiet re-arms, once per `summaryPeriodMs` (or now, when `force`d and any).
    private mutating func summary(now: Int64, force: Bool) -> [SupervisorAction] {
        guard let since = quietSince, !quietRearms.isEmpty, force || now - since >= Self.summaryPeriodMs else { return [] }
        let n = quietRearms.values.reduce(0, +)
        let what = RearmCause.allCases.compactMap { c in quietRearms[c].map { "\(c.rawValue) \($0)" } }.joined(separator: ", ")
        quietRearms = [:]
        quietSince = force ? nil : now
        return [.notice("another process keeps changing advertising: \(n) re-arms in \((now - since + 500) / 1000) s (\(what)), one log line a minute while it goes on")]
    }

    private mutating func rearm(cause: RearmCause?, scope: ArmScope, afterMs: Int64, now: Int64,
                                force: Bool = false) -> [SupervisorAction] {
        if let cause, pendingCause == nil || force { pendingCause = cause }
        pendingScope = max(pendingScope ?? scope, scope)
        if case .fault = phase {} else if phase != .arming { phase = .arming }
        if rearmScheduled && !force { return [] }
        rearmScheduled = true
        return [.scheduleRearm(afterMs: afterMs)]
    }

    /// Re-arming right away normally; once per cap interval while someone keeps interfering.
    private mutating func stormDelay(now: Int64) -> Int64 {
        recentRearms.removeAll { now - $0 > Self.stormWindowMs }
        return recentRearms.count >= Self.stormThreshold ? Self.backoffCapMs : Self.settleMs
    }
}
