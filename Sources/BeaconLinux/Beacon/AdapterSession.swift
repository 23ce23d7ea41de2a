import BeaconKit

/// Everything the beacon does on one adapter: one command channel (inside the advertiser), one
/// advertiser, one on-air policy and the policy's timers, all its own. The daemon routes the
/// adapter's kernel events and monitored commands here by index. Outcomes of controller work
/// arrive on later loop turns and are fed back to the policy one event at a time, so nothing
/// here re-enters itself.
public final class AdapterSession {
    public let index: UInt16
    public private(set) var policy: OnAirPolicy
    public let advertiser: Advertiser
    private let loop: EventLoop
    private let log: Logger
    private var timers: [PolicyTimer: LoopTimer] = [:]
    /// Events raised while one is handled wait their turn here (the policy is never re-entered).
    private var queue: [PolicyEvent] = []
    private var handling = false
    public private(set) var isRetired = false

    /// The status may have changed (called after each event).
    public var onChange: () -> Void = {}
    /// Config generation `generation` is on air, confirmed by the controller.
    public var onConfirmed: (_ generation: Int) -> Void = { _ in }
    /// The escalation's last step: the service should be restarted.
    public var onRestartRequested: () -> Void = {}

    public init(config: BeaconConfig, generation: Int, controller: ControllerAccess, loop: EventLoop, log: Logger) {
        index = controller.index
        policy = OnAirPolicy(config: config, generation: generation)
        advertiser = Advertiser(controller: controller, loop: loop, log: log)
        self.loop = loop
        self.log = log
        for t in PolicyTimer.allCases { timers[t] = loop.makeTimer() }
        // Weak throughout: completions may arrive after a retired session was let go.
        advertiser.onSend = { [weak self] op, params in
            guard let self else { return }
            policy.noteSent(op, params, at: self.loop.now)
        }
        advertiser.onHardwareError = { [weak self] code in
            guard let self else { return }
            log.warning("\(adapter): hardware error 0x\(hexString(CollectionOfOne(code)))")
            handle(.hardwareError)
        }
        advertiser.onCentralConnected = { [weak self] h in self?.handle(.centralConnected(handle: h)) }
        advertiser.onDisconnected = { [weak self] h in self?.handle(.centralDisconnected(handle: h)) }
    }

    public var adapter: String { "hci\(index)" }
    public var config: BeaconConfig { policy.config }

    public func start() { handle(.start) }

    public func configChanged(_ config: BeaconConfig, generation: Int) {
        handle(.configChanged(config, generation: generation))
    }

    /// A kernel device event for this adapter.
    public func deviceEvent(_ kind: HCIDeviceEventKind) {
        // Our own HCIDEVUP/HCIDEVDOWN, still in progress: the arm goes on by itself.
        if kind == .up || kind == .down, advertiser.isChangingPower { return }
        log.debug("\(adapter): kernel reports \(kind)")
        switch kind {
        case .registered: handle(.adapterRegistered)
        case .unregistered: handle(.adapterUnregistered)
        case .up: handle(.adapterUp)
        case .down: handle(.adapterDown)
        }
    }

    /// A command to this adapter seen on the HCI monitor (ours or another process's).
    public func monitored(_ op: HCIOpcode, _ params: [UInt8]) {
        handle(.monitored(op, params, ours: advertiser.onAir))
    }

    public func rfkillChanged() { handle(.rfkillChanged) }

    /// Takes the beacon off air for good: on stop (`deadlineMs` bounds SIGTERM) or when the
    /// config moved to another adapter (a hung old adapter then only delays its own goodbye).
    /// Every set is disabled and removed, each command with its own deadline; `done` runs once.
    public func retire(commandTimeoutMs: Int64, deadlineMs: Int64, _ done: @escaping (_ confirmed: Bool) -> Void) {
        guard !isRetired else { return loop.post { done(true) } }
        isRetired = true
        // A controller known not to answer will not answer these either: send them (the kernel
        // may still deliver them if it wakes) but do not wait, so SIGTERM stays within 0.5 s.
        let hung = policy.phase == .fault(.hung)
        handle(.stop)
        for t in timers.values { t.cancel() }
        if hung { log.warning("\(adapter): controller not answering; not waiting for it to take advertising off") }
        advertiser.takeDown(commandTimeoutMs: commandTimeoutMs, deadlineMs: hung ? 0 : deadlineMs,
                            disconnecting: Array(policy.connections.keys), done)
    }

    /// Lets go of the adapter at once, without taking anything off air: a new session on the
    /// same adapter is starting, and its first arm clears every set itself.
    public func abandonForSuccessor() {
        isRetired = true
        queue.removeAll()
        for t in timers.values { t.cancel() }
        advertiser.close()
    }

    // MARK: the policy's actions

    public func handle(_ event: PolicyEvent) {
        queue.append(event)
        guard !handling else { return }
        handling = true
        while !queue.isEmpty {
            let e = queue.removeFirst()
            for action in policy.handle(e, now: loop.now) { perform(action) }
        }
        handling = false
        onChange()
    }

    private func perform(_ action: PolicyAction) {
        switch action {
        case .arm(let scope, let config, let g):
            advertiser.arm(config, scope: scope) { [weak self] r in self?.handle(.armed(generation: g, r)) }
        case .abandonArm:
            advertiser.abandon()
        case .probe:
            advertiser.probe { [weak self] in self?.handle(.probed($0)) }
        case .rotate:
            advertiser.rotate { [weak self] in self?.handle(.rotated($0)) }
        case .refreshTelemetry:
            advertiser.refreshTelemetry { [weak self] in self?.handle(.telemetryRefreshed($0)) }
        case .schedule(let t, let ms):
            timers[t]?.schedule(afterMs: ms) { [weak self] in self?.handle(.timer(t)) }
        case .cancel(let t):
            timers[t]?.cancel()
        case .closeAdapter:
            advertiser.close()
        case .disableAdvertising:
            break   // `retire` takes the sets down itself, with its deadlines
        case .confirmed(let g, let announce):
            if announce {
                log.info("on air: \(describe(policy.config)) on \(adapter) (\(advertiser.mode), every \(advertiser.effectiveIntervalMs) ms)")
            }
            onConfirmed(g)
        case .notice(let m): log.notice(m)
        case .warning(let m): log.warning(m)
        case .requestRestart: onRestartRequested()
        case .disconnect(let h):
            advertiser.disconnect(handle: h) { [weak self] gone in if gone { self?.handle(.centralDisconnected(handle: h)) } }
        }
    }
}
