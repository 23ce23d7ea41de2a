import BeaconKit

/// What the adapter sessions ask of the daemon.
public protocol AdapterSessionsHost: AnyObject {
    /// The escalation's last step, from any session.
    func restartRequested()
    /// The adapter changed (the daemon points its HCI monitor filter there).
    func adapterChanged(to index: UInt16)
    /// Adapter `index` is up, before our commands: the daemon drains what its HCI monitor read
    /// of the kernel's setup, which is not interference.
    func adapterBroughtUp(index: UInt16)
}

/// The daemon's wiring between configs and adapters, without its descriptors: the session of the
/// adapter the config names, the sessions of adapters left behind until they are off air, config
/// generations, the last good copy (stored once the controller confirmed it), and one
/// `DaemonStatus` per change handed to every output. The daemon feeds it kernel events by index;
/// the unit tests feed it the same from a scripted controller.
///
/// Size: 19 stored fields: the config's life across sessions (the config and its generation, the
/// session, those retiring, paused, stopping), what the status adds (refused edit, identify,
/// changes), what each session is made with (loop, log, controller, board), and the outputs.
public final class AdapterSessions: AdapterSessionHost {
    /// The newest accepted config and its generation (bumped per applied config).
    public private(set) var config: BeaconConfig
    public private(set) var generation = 1
    public private(set) var session: AdapterSession!
    public private(set) var retiring: [AdapterSession] = []
    /// The headline of the last refused edit (the old beacon stays on air meanwhile).
    public var refusedEdit: String? {
        didSet { publishStatus() }
    }
    /// `beacon.advertising = false`: the session is made but never started, nothing on air.
    public private(set) var paused = false
    /// The identify pattern shows on the LEDs (a change from afar asked for it).
    public var identifying = false {
        didSet { publishStatus() }
    }
    /// The changes asked from afar, and what became of them.
    public private(set) var changes = RemoteChangeHistory()
    /// Where the last good config goes (SPEC §6), once the controller confirmed it on air.
    public var lastGood: LastGoodStore?
    private var unconfirmed = UnconfirmedConfigs()
    public var outputs: [StatusOutput] = []
    public private(set) var lastStatus: DaemonStatus?
    public private(set) var stopping = false
    private let loop: EventLoop
    private let log: Logger
    private let makeController: (UInt16) -> ControllerAccess
    /// What the TLM frame carries, given the advertising count.
    private let board: BoardReader?
    public weak var host: AdapterSessionsHost?
    /// Serves the GATT identity's service for the current adapter and config (nil in tests).
    public var gatt: GATTIdentityService? {
        didSet { gatt?.delegate = self }
    }

    public static let retireCommandTimeoutMs: Int64 = 1000
    public static let retireDeadlineMs: Int64 = 10_000

    public init(config: BeaconConfig, loop: EventLoop, log: Logger, board: BoardReader? = nil,
                makeController: @escaping (UInt16) -> ControllerAccess) {
        self.config = config
        self.loop = loop
        self.log = log
        self.board = board
        self.makeController = makeController
    }

    /// Arms the beacon; `bytes`: the config file as read (stored once on air).
    public func start(bytes: [UInt8]?) {
        if let bytes { remember(bytes) }
        session = makeSession(config)
        if !config.advertising {
            paused = true
            log.notice("advertising off (beacon.advertising = false): nothing goes on air until it is true again")
            publishStatus()
            return
        }
        session.start()
        serveGATT()
    }

    private func serveGATT() {
        gatt?.serve(adapterIndex: config.bluetooth.adapterIndex, identity: config.gattIdentity)
    }

    private func makeSession(_ config: BeaconConfig) -> AdapterSession {
        let s = AdapterSession(config: config, generation: generation, controller: makeController(config.bluetooth.adapterIndex),
                               loop: loop, log: log, board: board)
        s.host = self
        return s
    }

    // MARK: what the sessions say

    public func sessionChanged(_ session: AdapterSession) { publishStatus() }
    public func session(_ session: AdapterSession, confirmed generation: Int) { confirmed(generation) }
    public func sessionRequestsRestart(_ session: AdapterSession) { host?.restartRequested() }
    public func sessionBroughtUp(_ session: AdapterSession) { host?.adapterBroughtUp(index: session.index) }
    public func session(_ session: AdapterSession, releasingCentral address: [UInt8]) { gatt?.releaseCentral(address) }

    // MARK: events, routed by adapter index

    public func deviceEvent(_ kind: HCIDeviceEventKind, index: UInt16) {
        guard !stopping, !paused, index == session.index else { return }
        session.deviceEvent(kind)
    }

    public func monitored(_ op: HCIOpcode, _ params: [UInt8], index: UInt16) {
        guard !stopping, !paused, index == session.index else { return }
        session.monitored(op, params)
    }

    public func rfkillChanged() { if !stopping && !paused { session.rfkillChanged() } }

    // MARK: edits

    /// An accepted config: a new generation for the session, or a new session for a new adapter.
    public func apply(_ new: BeaconConfig, bytes: [UInt8]) {
        guard !stopping else { return }
        guard new != config else {
            // Nothing changes; the file's bytes may (a comment): what is on air is this file.
            if session.policy.confirmedGeneration == generation { lastGood?.store(bytes) } else { remember(bytes) }
            return
        }
        let old = config
        config = new
        generation += 1
        remember(bytes)
        log.info("config changed: \(describe(new)) on \(new.bluetooth.adapter), every \(new.bluetooth.intervalMs) ms")
        if !new.advertising {
            if !paused { pause() }
            session = makeSession(new)   // never started: what the status shows, nothing more
        } else if paused {
            resume(new)
        } else if new.bluetooth.adapterIndex != old.bluetooth.adapterIndex {
            moveAdapter(to: new)
        } else {
            session.configChanged(new, generation: generation)
        }
        serveGATT()
        publishStatus()
    }

    private func remember(_ bytes: [UInt8]) { unconfirmed.applied(bytes, generation: generation) }

    /// A change asked from afar ended: `change` is what became of it.
    public func reported(_ change: RemoteChangeReport) {
        changes.record(change)
        publishStatus()
    }

    /// The controller confirmed config generation `g` on air: now it is the last good one.
    private func confirmed(_ g: Int) {
        gatt?.adapterReady()
        if let bytes = unconfirmed.confirmed(g) { lastGood?.store(bytes) }
    }

    /// The old adapter's session takes every set off air while the new one arms at once.
    private func moveAdapter(to new: BeaconConfig) {
        log.notice("moving the beacon from \(session.adapter) to \(new.bluetooth.adapter); taking it off air on \(session.adapter)")
        retireCurrent()
        abandonRetiring(on: new.bluetooth.adapterIndex)
        session = makeSession(new)
        host?.adapterChanged(to: new.bluetooth.adapterIndex)
        session.start()
    }

    /// `beacon.advertising` became false: every set taken off air, as when the adapter moves.
    private func pause() {
        paused = true
        log.notice("advertising off (beacon.advertising = false): taking the beacon off air on \(session.adapter)")
        retireCurrent()
    }

    /// `beacon.advertising` is true again: a fresh session arms, as at start.
    private func resume(_ new: BeaconConfig) {
        paused = false
        log.notice("advertising on again (beacon.advertising = true)")
        abandonRetiring(on: new.bluetooth.adapterIndex)
        let moved = new.bluetooth.adapterIndex != session.index
        session = makeSession(new)
        if moved { host?.adapterChanged(to: new.bluetooth.adapterIndex) }
        session.start()
    }

    /// The current session takes every set off air (each command with its own deadline, so a
    /// hung controller only delays its own goodbye), then is let go.
    private func retireCurrent() {
        let old = session!
        retiring.append(old)
        old.retire(commandTimeoutMs: Self.retireCommandTimeoutMs, deadlineMs: Self.retireDeadlineMs) { [weak self] confirmed in
            guard let self else { return }
            if confirmed { log.info("\(old.adapter): off air") }
            release(old)
        }
    }

    /// Back to an adapter still being left: its goodbye would take down the new sets.
    private func abandonRetiring(on index: UInt16) {
        for r in retiring where r.index == index {
            r.abandonForSuccessor()
            retiring.removeAll { $0 === r }
        }
    }

    /// Lets a retired session go on a later turn (never inside its own callback), and only once
    /// no power change of its runs (a hung HCIDEVUP may return minutes later).
    private func release(_ old: AdapterSession) {
        loop.post { [weak self] in
            guard let self else { return }
            guard old.advertiser.isChangingPower else { return retiring.removeAll { $0 === old } }
            let wait = loop.makeTimer()
            wait.schedule(afterMs: 1000) { [weak self] in
                guard let self else { return }
                _ = wait
                release(old)
            }
        }
    }

    // MARK: status

    public var status: DaemonStatus {
        let p = session.policy
        // Stopping from the moment the daemon began to, before the policy hears of it.
        let phase: DaemonStatus.Phase = stopping ? .stopping : p.phase
        let a = session.advertiser
        var s = DaemonStatus(phase: phase, escalation: p.escalation, ladderFailures: p.ladderFailures, rearms: p.rearms,
                            refusedEdit: refusedEdit, adapter: session.adapter, beacon: describe(session.config),
                            mode: a.mode, intervalMs: Int(a.effectiveIntervalMs), frames: session.config.frames.map(\.name),
                            gattServer: session.config.gattIdentity == nil ? nil : gatt?.server?.rawValue ?? "nobody (see log)",
                            centrals: p.connections.count)
        s.escalations = p.escalations
        s.identity = session.config.beacon
        s.configuredIntervalMs = Int(session.config.bluetooth.intervalMs)
        s.advertisingOff = paused
        s.identifying = identifying
        s.changes = changes
        s.address = session.address?.description
        return s
    }

    /// Computes the status once; every output sees it only when it changed (or when `force`d:
    /// an output that was just added or reconfigured).
    public func publishStatus(force: Bool = false) {
        guard session != nil else { return }
        let s = status
        guard force || s != lastStatus else { return }
        lastStatus = s
        for o in outputs { o.show(s) }
    }

    // MARK: stop

    /// Takes every adapter's beacon off air within `deadlineMs`; `done` once all are.
    public func stop(deadlineMs: Int64, _ done: @escaping () -> Void) {
        guard !stopping else { return }
        stopping = true
        // A paused session never opened its adapter: nothing of it to take down.
        let live = (paused ? [] : [session!]) + retiring
        var left = live.count
        let finish: (Bool) -> Void = { _ in
            left -= 1
            if left == 0 { done() }
        }
        if live.isEmpty { loop.post(done) }
        for s in live {
            s.retire(commandTimeoutMs: deadlineMs, deadlineMs: deadlineMs, finish)
        }
        gatt?.stop()
        publishStatus()
    }
}
