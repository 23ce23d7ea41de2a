/// The on-air policy of one adapter, pure: events in, actions out. It owns the phase, the config
/// on air and its generation, the arm in flight (with an overall deadline), what an edit must redo,
/// frame rotation and telemetry refresh, telling our own commands from others', and the escalation
/// ladder. An adapter session performs the actions and feeds their outcomes back. It never gives
/// up on the adapter; failed attempts back off (capped) and a storm of interference is throttled.
public struct OnAirPolicy: Sendable {
    public internal(set) var phase: PolicyPhase = .starting
    /// The newest accepted config for this adapter and its generation.
    public private(set) var config: BeaconConfig
    public private(set) var generation: Int
    /// The generation of the arm in flight, if any.
    public private(set) var armInFlight: Int?
    var armInFlightScope: ArmScope = .full
    /// The last generation confirmed on air.
    public private(set) var confirmedGeneration: Int?
    public internal(set) var consecutiveFailures = 0
    /// What the next arm must redo beyond what is on air (or in flight).
    var pendingScope: ArmScope?
    var pendingCause: RearmCause?
    var rearmScheduled = false
    var ladder = EscalationLadder()
    var upkeep = OnAirUpkeep()
    private var sent = SentCommandLog()
    /// The next time on air is not announced (a re-arm for a central, or a persistent interferer).
    var pendingQuiet = false
    var history = RearmHistory()
    var centrals = CentralConnections()

    public static let backoffBaseMs: Int64 = 50
    /// Also the longest a hung controller goes unprobed, hence recovery ≤ ~2 s after it answers.
    public static let backoffCapMs: Int64 = 1000
    /// Another program holds the adapter: ask again, slowly (it may hold it for hours).
    public static let busyBackoffCapMs: Int64 = 5000
    /// Lets a burst of related commands (a reset sequence, a power cycle) finish before re-arming.
    public static let settleMs: Int64 = 30
    /// No arm takes longer: HCIDEVUP (a few seconds on a UART controller) plus every command's
    /// own time-out. Past it the arm is given up and retried, so no lost completion parks the beacon.
    public static let armDeadlineMs: Int64 = 15_000

    public init(config: BeaconConfig, generation: Int) {
        self.config = config
        self.generation = generation
    }

    public var probeIntervalMs: Int64 { OnAirUpkeep.probeIntervalMs(config) }
    public var rearms: [RearmCause: Int] { history.counts }
    public var totalRearms: Int { history.total }
    public var ladderFailures: Int { ladder.failures }
    public var escalation: Escalation { ladder.step }
    public var escalations: [Escalation: Int] { ladder.stepsTaken }
    public var connections: [UInt16: Int64] { centrals.since }

    public static func backoff(failures: Int, capMs: Int64 = backoffCapMs) -> Int64 {
        guard failures > 0 else { return settleMs }
        let shift = min(failures - 1, 20)
        return min(capMs, backoffBaseMs << Int64(shift))
    }

    /// A command we wrote, so its copy on the HCI monitor is not taken for interference.
    public mutating func noteSent(_ op: HCIOpcode, _ params: [UInt8], at now: Int64) {
        sent.recordSent(op, params, at: now)
    }

    public mutating func handle(_ event: PolicyEvent, now: Int64) -> [PolicyAction] {
        if phase == .stopping { return [] }
        switch event {
        case .start:
            phase = .arming
            pendingScope = .full
            return arm()
        case .armed(let g, let outcome):
            guard g == armInFlight else { return [] }   // an abandoned arm: its outcome no longer counts
            armInFlight = nil
            switch outcome {
            case .success(let summary): return [.cancel(.armDeadline)] + onAir(summary, armedGeneration: g, now: now)
            case .failure(let f): return [.cancel(.armDeadline)] + failed(f, now: now)
            }
        case .probed(let f?), .rotated(let f?), .payloadsRefreshed(let f?):
            guard phase == .advertising, armInFlight == nil else { return [] }
            // One missed answer is not yet "hung" (the kernel may be retrying): ask again.
            if f == .timeout, upkeep.missed() { return [.probe] }
            return failed(f, now: now)
        case .probed(nil):
            upkeep.answered()
            guard phase == .advertising else { return [] }
            // Once the beacon stayed on air long enough, the ladder starts over.
            return (ladder.answered(at: now).map { [.notice($0)] } ?? []) + upkeep.next(after: .probe, config: config)
        case .rotated(nil):
            return phase == .advertising ? upkeep.next(after: .rotate, config: config) : []
        case .payloadsRefreshed(nil):
            return phase == .advertising ? upkeep.next(after: .payloadRefresh, config: config) : []
        case .timer(let t):
            return timerFired(t, now: now)
        case .adapterRegistered, .adapterUp:
            guard phase != .advertising else { return [] }
            // The controller is usable again: now, not at the next back-off step.
            return rearm(cause: nil, scope: .full, afterMs: Self.settleMs, now: now, force: true)
        case .adapterUnregistered:
            phase = .fault(.missing)
            centrals.removeAll()
            // The kernel tells us when it is back; the slow retry is only a safety net.
            return abandon() + [.cancel(.probe), .closeAdapter, .warning("\(AdapterFault.missing.rawValue); waiting for it")]
                + rearm(cause: .removed, scope: .full, afterMs: Self.backoffCapMs, now: now, force: true)
        case .adapterDown:
            centrals.removeAll()
            return [.cancel(.probe), .cancel(.connectionLimit)] + rearm(cause: .down, scope: .full, afterMs: Self.settleMs, now: now)
        case .rfkillChanged:
            guard phase == .fault(.blocked) else { return [] }
            return rearm(cause: .rfkill, scope: .full, afterMs: 0, now: now, force: true)
        case .monitored(let op, let params, let ours):
            if sent.consume(op, params, at: now) { return [] }
            guard let what = classifyForeignCommand(op, params, onAir: ours) else { return [] }
            return interference(what, now: now)
        case .hardwareError:
            return [.warning("controller reported a hardware error; re-arming")]
                + rearm(cause: .hardwareError, scope: .full, afterMs: Self.settleMs, now: now)
        case .configChanged(let new, let g):
            return configChanged(new, generation: g)
        case .centralConnected(let h):
            return centralsChanged(centrals.connected(h, at: now))
        case .centralDisconnected(let h):
            return centralsChanged(centrals.disconnected(h, at: now))
        case .stop:
            phase = .stopping
            return abandon() + PolicyTimer.allCases.map { .cancel($0) } + [.disableAdvertising]
        }
    }

    // MARK: arming

    /// Starts an arm with the newest config, redoing what is pending.
    mutating func arm() -> [PolicyAction] {
        let scope = pendingScope ?? .full
        // Down and up happens once per step of the ladder, not on every retry after it.
        pendingScope = nil
        armInFlight = generation
        armInFlightScope = scope
        return [.arm(scope, airConfig, generation: generation), .schedule(.armDeadline, afterMs: Self.armDeadlineMs)]
    }

    /// Gives up the arm in flight, if any.
    private mutating func abandon() -> [PolicyAction] {
        guard armInFlight != nil else { return [] }
        armInFlight = nil
        pendingScope = max(pendingScope ?? armInFlightScope, armInFlightScope)
        return [.abandonArm, .cancel(.armDeadline)]
    }

    private mutating func configChanged(_ new: BeaconConfig, generation g: Int) -> [PolicyAction] {
        let scope = ArmScope.needed(from: config, to: new)
        config = new
        generation = g
        guard let scope else {
            // Nothing on air changes: what is on air is this generation too.
            guard phase == .advertising, armInFlight == nil else { return [] }
            confirmedGeneration = g
            return [.confirmed(generation: g, announce: false)]
        }
        pendingScope = max(pendingScope ?? scope, scope)
        // In a fault the next retry arms the newest config; during an arm, its completion does.
        guard phase == .advertising, armInFlight == nil else { return [] }
        phase = .arming
        return arm()
    }

    private mutating func timerFired(_ t: PolicyTimer, now: Int64) -> [PolicyAction] {
        switch t {
        case .rearm:
            rearmScheduled = false
            guard armInFlight == nil, phase != .advertising || pendingScope != nil else { return [] }
            // A faulted adapter keeps showing its fault while we retry it.
            if case .fault = phase {} else { phase = .arming }
            return arm()
        case .probe, .rotate, .payloadRefresh:
            return phase == .advertising && armInFlight == nil ? upkeep.task(t) : []
        case .armDeadline:
            guard armInFlight != nil else { return [] }
            return abandon() + [.warning("arming took over \(Self.armDeadlineMs / 1000) s; giving it up and retrying")]
                + failed(.timeout, now: now)
        case .connectionLimit:
            return centrals.limitReached(at: now)
        }
    }

    private mutating func onAir(_ summary: AirSummary, armedGeneration g: Int, now: Int64) -> [PolicyAction] {
        var actions: [PolicyAction] = []
        // A re-arm against a persistent interferer is counted, not announced line by line.
        let quiet = pendingQuiet
        if let cause = pendingCause {
            history.count(cause, at: now)
            if !pendingQuiet { actions.append(.notice("back on air after \(cause.rawValue) (re-arms: \(RearmCause.summary(rearms)))")) }
        }
        let timers = upkeep.started(summary, config: config)
        pendingQuiet = false
        if rearmScheduled { actions.append(.cancel(.rearm)) }
        rearmScheduled = false
        consecutiveFailures = 0
        pendingCause = nil
        ladder.onAir(at: now)
        if pendingScope != nil || (g != generation && confirmedGeneration != generation) {
            // An edit arrived while this arm was in flight (or interference hit it): the newest
            // config goes on air now. Without a pending scope the edit changed nothing on air.
            if pendingScope == nil {
                phase = .advertising
                confirmedGeneration = generation
                return actions + [.confirmed(generation: generation, announce: false)] + timers
            }
            phase = .arming
            return actions + arm()
        }
        let announce = confirmedGeneration == nil || (!quiet && (armInFlightScope != .data || phase != .arming))
        phase = .advertising
        confirmedGeneration = g
        return actions + [.confirmed(generation: g, announce: announce)] + timers
    }
}
