/// The on-air policy of one adapter, pure: events in, actions out. It owns the phase, the config
/// on air and its generation, and coordinates its parts: the arms (`RearmPlan`: the one in flight,
/// what the next must redo), what keeps the beacon checked on air (`OnAirUpkeep`), the escalation
/// ladder (`EscalationLadder`), the re-arms counted and the storm of interference throttled
/// (`RearmHistory`), our own commands told from others' (`SentCommandLog`) and the GATT
/// identity's centrals (`CentralConnections`). An adapter session performs the actions and feeds
/// their outcomes back. It never gives up on the adapter; failed attempts back off (capped).
public struct OnAirPolicy: Sendable {
    public internal(set) var phase: PolicyPhase = .starting
    /// The newest accepted config for this adapter and its generation.
    public private(set) var config: BeaconConfig
    public private(set) var generation: Int
    /// The last generation confirmed on air.
    public private(set) var confirmedGeneration: Int?
    var plan = RearmPlan()
    var upkeep = OnAirUpkeep()
    var ladder = EscalationLadder()
    var history = RearmHistory()
    var centrals = CentralConnections()
    private var sent = SentCommandLog()

    public init(config: BeaconConfig, generation: Int) {
        self.config = config
        self.generation = generation
    }

    // The parts' figures, by the names the runner, the status and the tests know.
    public var armInFlight: Int? { plan.inFlight }
    public var consecutiveFailures: Int { plan.failures }
    public var ladderFailures: Int { ladder.failures }
    public var escalation: Escalation { ladder.step }
    public var escalations: [Escalation: Int] { ladder.stepsTaken }
    public var rearms: [RearmCause: Int] { history.counts }
    public var totalRearms: Int { history.total }
    public var connections: [UInt16: Int64] { centrals.since }
    public var probeIntervalMs: Int64 { OnAirUpkeep.probeIntervalMs(config) }

    /// A command we wrote, so its copy on the HCI monitor is not taken for interference.
    public mutating func noteSent(_ op: HCIOpcode, _ params: [UInt8], at now: Int64) {
        sent.recordSent(op, params, at: now)
    }

    public mutating func handle(_ event: PolicyEvent, now: Int64) -> [PolicyAction] {
        if phase == .stopping { return [] }
        switch event {
        case .start:
            phase = .arming
            plan.redo(.full)
            return arm()
        case .armed(let g, let outcome):
            guard plan.finished(generation: g) else { return [] }   // an abandoned arm: its outcome no longer counts
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
            return rearm(cause: nil, scope: .full, afterMs: RearmPlan.settleMs, force: true)
        case .adapterUnregistered:
            phase = .fault(.missing)
            centrals.removeAll()
            // The kernel tells us when it is back; the slow retry is only a safety net.
            return plan.abandon() + [.cancel(.probe), .closeAdapter, .warning("\(AdapterFault.missing.rawValue); waiting for it")]
                + rearm(cause: .removed, scope: .full, afterMs: RearmPlan.backoffCapMs, force: true)
        case .adapterDown:
            centrals.removeAll()
            return [.cancel(.probe), .cancel(.connectionLimit)] + rearm(cause: .down, scope: .full, afterMs: RearmPlan.settleMs)
        case .rfkillChanged:
            guard phase == .fault(.blocked) else { return [] }
            return rearm(cause: .rfkill, scope: .full, afterMs: 0, force: true)
        case .monitored(let op, let params, let ours):
            if sent.consume(op, params, at: now) { return [] }
            guard let what = classifyForeignCommand(op, params, onAir: ours) else { return [] }
            return interference(what, now: now)
        case .hardwareError:
            return [.warning("controller reported a hardware error; re-arming")]
                + rearm(cause: .hardwareError, scope: .full, afterMs: RearmPlan.settleMs)
        case .configChanged(let new, let g):
            return configChanged(new, generation: g)
        case .centralConnected(let h):
            return centralsChanged(centrals.connected(h, at: now))
        case .centralDisconnected(let h):
            return centralsChanged(centrals.disconnected(h, at: now))
        case .stop:
            phase = .stopping
            return plan.abandon() + PolicyTimer.allCases.map { .cancel($0) } + [.disableAdvertising]
        }
    }

    // MARK: arming

    /// Starts an arm with the newest config, redoing what is pending.
    mutating func arm() -> [PolicyAction] { plan.start(airConfig, generation: generation) }

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
        plan.redo(scope)
        // In a fault the next retry arms the newest config; during an arm, its completion does.
        guard phase == .advertising, armInFlight == nil else { return [] }
        phase = .arming
        return arm()
    }

    private mutating func timerFired(_ t: PolicyTimer, now: Int64) -> [PolicyAction] {
        switch t {
        case .rearm:
            plan.timerFired()
            guard armInFlight == nil, phase != .advertising || plan.scope != nil else { return [] }
            // A faulted adapter keeps showing its fault while we retry it.
            if case .fault = phase {} else { phase = .arming }
            return arm()
        case .probe, .rotate, .payloadRefresh:
            return phase == .advertising && armInFlight == nil ? upkeep.task(t) : []
        case .armDeadline:
            guard armInFlight != nil else { return [] }
            return plan.abandon() + [.warning("arming took over \(RearmPlan.deadlineMs / 1000) s; giving it up and retrying")]
                + failed(.timeout, now: now)
        case .connectionLimit:
            return centrals.limitReached(at: now)
        }
    }

    private mutating func onAir(_ summary: AirSummary, armedGeneration g: Int, now: Int64) -> [PolicyAction] {
        var actions: [PolicyAction] = []
        // A re-arm against a persistent interferer is counted, not announced line by line.
        let (cause, quiet, cancelTimer) = plan.onAir()
        if let cause {
            history.count(cause, at: now)
            if !quiet { actions.append(.notice("back on air after \(cause.rawValue) (re-arms: \(RearmCause.summary(rearms)))")) }
        }
        if cancelTimer { actions.append(.cancel(.rearm)) }
        ladder.onAir(at: now)
        let timers = upkeep.started(summary, config: config)
        if plan.scope != nil {
            // An edit arrived while this arm was in flight (or interference hit it): the newest
            // config goes on air now.
            phase = .arming
            return actions + arm()
        }
        // Without a pending scope, an edit during the arm changed nothing on air: the newest
        // generation is on air too.
        let newest = g != generation && confirmedGeneration != generation
        let announce = !newest && (confirmedGeneration == nil || (!quiet && (plan.inFlightScope != .data || phase != .arming)))
        let confirmed = newest ? generation : g
        phase = .advertising
        confirmedGeneration = confirmed
        return actions + [.confirmed(generation: confirmed, announce: announce)] + timers
    }
}
