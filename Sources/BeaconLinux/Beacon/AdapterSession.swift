import BeaconKit

/// Whoever runs adapter sessions hears each one here.
public protocol AdapterSessionHost: AnyObject {
    /// The status may have changed (after each event).
    func sessionChanged(_ session: AdapterSession)
    /// Config generation `generation` is on air, confirmed by the controller.
    func session(_ session: AdapterSession, confirmed generation: Int)
    /// The escalation's last step: the service should be restarted.
    func sessionRequestsRestart(_ session: AdapterSession)
    /// The adapter is up, before our commands: what the kernel sent to initialise it (a Reset
    /// among them) is not interference (the daemon drains its HCI monitor).
    func sessionBroughtUp(_ session: AdapterSession)
    /// A central's link is about to be cut by us: what serves it lets go first.
    func session(_ session: AdapterSession, releasingCentral address: [UInt8])
}

/// Everything the beacon does on one adapter: one advertiser (with the adapter's command
/// channel), one on-air policy and the policy's timers, all its own. The daemon routes the
/// adapter's kernel events and monitored commands here by index. The advertiser's outcomes
/// arrive on later loop turns and are fed to the policy one event at a time, so nothing here
/// re-enters itself.
///
/// Size: 13 stored fields, one past 12: this adapter's parts (policy, advertiser, the policy's
/// timers, the controller and its address), host, loop and log, and the queue that keeps the policy
/// from being re-entered, with the retire under way; the policy decides.
public final class AdapterSession: AdvertiserEvents {
    public let index: UInt16
    public private(set) var policy: OnAirPolicy
    public let advertiser: Advertiser
    public weak var host: AdapterSessionHost?
    private let loop: EventLoop
    private let log: Logger
    private var timers: [PolicyTimer: LoopTimer] = [:]
    /// Events raised while one is handled wait their turn here (the policy is never re-entered).
    private var queue: [PolicyEvent] = []
    private var handling = false
    public private(set) var isRetired = false
    /// `retire`'s caller, told once the advertiser took everything down.
    private var retired: ((_ confirmed: Bool) -> Void)?

    public init(config: BeaconConfig, generation: Int, controller: ControllerAccess, loop: EventLoop, log: Logger,
                board: BoardReader? = nil) {
        index = controller.index
        self.controller = controller
        policy = OnAirPolicy(config: config, generation: generation)
        advertiser = Advertiser(controller: controller, loop: loop, log: log, board: board)
        self.loop = loop
        self.log = log
        for t in PolicyTimer.allCases { timers[t] = loop.makeTimer() }
        advertiser.events = self
    }

    public var adapter: String { "hci\(index)" }
    /// The controller, for its address (the status file's).
    private let controller: ControllerAccess
    /// The address on air, asked of the controller once the session is on air (the address
    /// repair, where one is made, is done by then): not an ioctl at every status.
    private var addressOnAir: BluetoothAddress?
    public var address: BluetoothAddress? {
        if addressOnAir == nil, policy.phase == .advertising { addressOnAir = controller.address }
        return addressOnAir
    }
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
        retired = done
        advertiser.takeDown(commandTimeoutMs: commandTimeoutMs, deadlineMs: hung ? 0 : deadlineMs,
                            disconnecting: Array(policy.connections.keys))
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
        host?.sessionChanged(self)
    }

    private func perform(_ action: PolicyAction) {
        switch action {
        case .arm(let scope, let config, let g):
            advertiser.arm(config, scope: scope, generation: g)
        case .abandonArm:
            advertiser.abandon()
        case .probe:
            advertiser.probe()
        case .rotate:
            advertiser.rotate()
        case .refreshPayloads:
            advertiser.refreshPayloads()
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
            host?.session(self, confirmed: g)
        case .notice(let m): log.notice(m)
        case .warning(let m): log.warning(m)
        case .requestRestart: host?.sessionRequestsRestart(self)
        case .disconnect(let h):
            advertiser.disconnect(handle: h)
        }
    }

    // MARK: the advertiser's events

    public func advertiser(_ advertiser: Advertiser, sent opcode: HCIOpcode, _ parameters: [UInt8]) {
        policy.noteSent(opcode, parameters, at: loop.now)
    }

    public func advertiser(_ advertiser: Advertiser, reported event: AdvertiserEvent) {
        switch event {
        case .armed(let g, let r): handle(.armed(generation: g, r))
        case .probed(let f): handle(.probed(f))
        case .rotated(let f): handle(.rotated(f))
        case .payloadsRefreshed(let f): handle(.payloadsRefreshed(f))
        case .tookDown(let confirmed):
            let done = retired
            retired = nil
            done?(confirmed)
        case .broughtUp: host?.sessionBroughtUp(self)
        case .hardwareError(let code):
            log.warning("\(adapter): hardware error 0x\(hexString(CollectionOfOne(code)))")
            handle(.hardwareError)
        case .centralConnected(let h): handle(.centralConnected(handle: h))
        case .centralDisconnected(let h): handle(.centralDisconnected(handle: h))
        case .releasingCentral(let address): host?.session(self, releasingCentral: address)
        }
    }
}
