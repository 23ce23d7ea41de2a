import BeaconKit
import Glibc

/// Puts the configured frames on air on one controller, the way the study guide does by hand,
/// with the fallbacks real controllers need (SPEC §3): one extended advertising set per frame
/// where the controller has them, else legacy commands with the frames taking turns (`AirPlan`).
/// Nothing here waits: commands go through the adapter's `HCICommandChannel` and each sequence
/// goes on when the previous command completes; power changes run off the loop. Every `done`
/// runs on a later loop turn than the call that started it. A newer sequence (re-arm, stop)
/// supersedes an older one, whose completions are dropped: the policy's deadline covers them.
public final class Advertiser {
    public typealias Done = (ArmFailure?) -> Void

    /// Just longer than the kernel's own HCI command timeout (2 s, SPEC §5): a command the kernel
    /// is still waiting for is not yet lost, and one it gave up on is retried at once.
    public var commandTimeoutMs: Int64 = 2100
    let controller: ControllerAccess
    let loop: EventLoop
    let log: Logger
    public private(set) var channel: HCICommandChannel?
    public private(set) var info: ControllerInfo?
    public var effectiveIntervalMs: UInt16 = 0
    /// How the frames share the controller; nil when nothing of ours is known to be on air.
    public internal(set) var plan: AirPlan?
    /// The plan of the last arm, kept for the monitor and the status while re-arming.
    var lastPlan: AirPlan?
    /// Every set handle configured on this controller and not removed since: what a new plan
    /// with fewer sets, a stop or an adapter move must take off air, whatever `plan` says.
    var armedHandles: Set<UInt8> = []
    /// Legacy advertising may be enabled (we enabled it and did not disable it since).
    var legacyArmed = false
    /// Sets of a previous process were cleared (once per session, at its first arm).
    var clearedPrevious = false
    var frames: [ConfiguredFrame] = []
    /// What we last sent to each slot.
    var slotData: [[UInt8]] = []
    /// The frame of the rotating (last) slot that is on air.
    var turn = 0
    /// Bumped by every new sequence: completions of older ones are dropped.
    var generation = 0
    /// A newer sequence waiting for the outcome of a power change an abandoned one started.
    var powerWaiter: ((Errno?) -> Void)?
    /// PDUs scheduled while each slot was enabled: what the TLM frame counts.
    public internal(set) var counter = AdvertisingCounter()
    var warnedTxPower = false
    /// The static random address was refused once (said once).
    var warnedRandomAddress = false
    /// Centrals connected to our advertising, by connection handle: their addresses.
    var links: [UInt16: (address: [UInt8], random: Bool)] = [:]
    /// The arm in progress only left out frames at the end: extended sets stay extended.
    var keepsFamily = false
    /// The configured TX power, for a rotation that sets a slot's parameters again.
    var txPowerDbm: Int8?
    /// What the frames are sent from, chosen at each arm (`ControllerAccess.advertisingAddress`).
    var ownAddress: OwnAddressType = .public
    /// Each command as written, so the policy can tell ours from another process's on the monitor.
    public var onSend: ((HCIOpcode, [UInt8]) -> Void)?
    /// Called once the adapter is up, before our commands: what the kernel sent to initialise
    /// it (a Reset among them) is not interference.
    public var afterBringUp: (() -> Void)?
    /// A Hardware Error event from the controller.
    public var onHardwareError: ((UInt8) -> Void)?
    /// A central connected to our connectable advertising (handle), or a link ended (handle).
    public var onCentralConnected: ((UInt16) -> Void)?
    public var onDisconnected: ((UInt16) -> Void)?
    /// A central's link (address) is about to be cut by us: what serves it lets go first.
    public var beforeDisconnect: (([UInt8]) -> Void)?
    /// What the TLM frame carries, given the advertising count; asked each time it is (re)sent.
    public var telemetry: (UInt32) -> Telemetry = { _ in .zero }

    public init(controller: ControllerAccess, loop: EventLoop, log: Logger) {
        self.controller = controller
        self.loop = loop
        self.log = log
    }

    public var index: UInt16 { controller.index }

    /// True while the adapter is being brought up or down by us: the kernel's up/down events
    /// then are our own doing, not a fault.
    public var isChangingPower: Bool { controller.isChangingPower }

    /// "legacy", "legacy, 3 frames in turn", "extended, sets 2 1 0"; "" before the first arm.
    public var mode: String {
        guard let p = plan ?? lastPlan else { return "" }
        var s = p.handles.map { "extended, set\($0.count > 1 ? "s" : "") " + $0.map { "\($0)" }.joined(separator: " ") } ?? "legacy"
        if p.rotates { s += ", \(p.frameCount - p.slotCount + 1) frames in turn" }
        return s
    }

    /// Ours on air, for classifying others' commands: every frame's payload and what each slot carries.
    public var onAir: OnAirAdvertising {
        OnAirAdvertising(handles: (plan ?? lastPlan)?.handles, payloads: frames.map { $0.frame.advertisingData(.zero) } + slotData)
    }

    var summary: AirSummary {
        guard let plan else { return AirSummary() }
        return AirSummary(rotates: plan.rotates, refreshesTelemetry: !standingTelemetrySlots.isEmpty)
    }

    /// The slots that carry one frame with telemetry, always the same one (not in turn).
    var standingTelemetrySlots: [Int] {
        guard let plan else { return [] }
        return (0..<plan.slotCount).filter { s in
            let r = plan.frames(inSlot: s)
            return r.count == 1 && frames[r.lowerBound].frame.carriesTelemetry
        }
    }

    /// `done`, run on a later loop turn (never inside the caller).
    func later<T>(_ done: @escaping (T) -> Void) -> (T) -> Void {
        { [loop] value in loop.post { done(value) } }
    }

    /// Gives up whatever sequence is in flight: its completions never come.
    public func abandon() {
        generation += 1
        channel?.abandonAll()
        offAir()
    }

    public func close() {
        generation += 1
        offAir()
        channel?.close()
        channel = nil
        info = nil
        plan = nil
        armedHandles = []
        legacyArmed = false
    }

    /// Nothing of ours is known to be on air any more (a failure, a reset, a stop).
    func offAir() {
        counter.allDisabled(at: loop.now)
        plan = nil
    }

    /// Configures and enables advertising for `config`; `done` once every frame is on air.
    /// `.powerCycle` takes the adapter down first (the kernel then re-runs the controller's setup).
    public func arm(_ config: BeaconConfig, scope: ArmScope, _ done: @escaping (Result<AirSummary, ArmFailure>) -> Void) {
        let done = later(done)
        generation += 1
        let gen = generation
        channel?.abandonAll()
        let airFrames = config.airFrames()
        let sameFrames = frames.map(\.name) == airFrames.map(\.name)
        // The GATT identity left out while a central is connected: the frames keep the kind of
        // advertising they are on (an edit to fewer frames goes back to legacy commands).
        keepsFamily = frames.map(\.name) == airFrames.map(\.name) + [GATTIdentity.name]
        frames = airFrames
        let finish: Done = { [unowned self] f in
            guard gen == generation else { return }
            if let f { offAir(); return done(.failure(f)) }
            done(.success(summary))
        }
        let configureNow: () -> Void = { [unowned self] in
            guard gen == generation else { return }
            guard let channel, let info else { return finish(.missing) }
            if scope == .data, sameFrames, let plan {
                updateChangedSlots(plan, channel, gen) { [unowned self] f in
                    if f == nil { return finish(nil) }
                    configure(config, channel, info, gen, finish)
                }
                return
            }
            configure(config, channel, info, gen, finish)
        }
        if scope >= .full || channel == nil || channel?.isClosed == true || info == nil {
            plan = nil
            prepare(powerCycle: scope == .powerCycle, gen) { [unowned self] f in
                guard gen == generation else { return }
                if let f { return finish(f) }
                configureNow()
            }
        } else {
            configureNow()
        }
    }

    /// Opens the adapter's channel, brings the adapter up (off the loop) and reads what it can do.
    private func prepare(powerCycle: Bool, _ gen: Int, _ done: @escaping Done) {
        if channel == nil || channel?.isClosed == true {
            channel = nil
            do {
                let c = HCICommandChannel(index: index, transport: try controller.openTransport(), loop: loop)
                c.onSend = { [unowned self] op, params in onSend?(op, params) }
                c.onEvent = { [unowned self] e in received(e) }
                c.onLost = { [unowned self] _ in offAir() }
                channel = c
            } catch {
                return loop.post { done(ArmFailure(error)) }
            }
        }
        let up: () -> Void = { [unowned self] in
            changePower(up: true) { [unowned self] e in
                guard gen == generation else { return }
                if let e, e != .alreadyInProgress { return done(ArmFailure(e, bringingUp: true)) }
                afterBringUp?()
                readInfo(gen, done)
            }
        }
        guard powerCycle else { return up() }
        log.notice("taking hci\(index) down and up: the kernel re-runs the controller's setup")
        changePower(up: false) { [unowned self] e in
            guard gen == generation else { return }
            if let e { log.warning("hci\(index) down: \(e)") }
            // A controller taken down forgets its sets and advertising.
            armedHandles = []
            legacyArmed = false
            up()
        }
    }

    /// HCIDEVUP/HCIDEVDOWN, one at a time: the controller refuses a second while one runs, so a
    /// sequence that finds one running (a hung HCIDEVUP of an abandoned arm) takes its outcome.
    /// Only the newest waits: an older waiter's sequence is abandoned, its completion dropped anyway.
    private func changePower(up: Bool, _ done: @escaping (Errno?) -> Void) {
        guard !controller.isChangingPower else { powerWaiter = done; return }
        controller.setPower(up: up) { [unowned self] e in
            let waiter = powerWaiter
            powerWaiter = nil
            (waiter ?? done)(e)
        }
    }

    private func readInfo(_ gen: Int, _ done: @escaping Done) {
        guard let c = channel else { return done(.missing) }
        execute(ReadLocalVersion(), c, gen) { [unowned self] r in
            guard case .success(let version) = r else { return done(r.failure.map(ArmFailure.init)) }
            execute(LEReadLocalSupportedFeatures(), c, gen) { [unowned self] r in
                guard case .success(let features) = r else { return done(r.failure.map(ArmFailure.init)) }
                var i = ControllerInfo(hciVersion: version.hciVersion, manufacturer: version.manufacturer,
                                       leFeatures: features.bits)
                guard i.hasExtendedAdvertising else { info = i; return done(nil) }
                execute(LEReadNumberOfSupportedAdvertisingSets(), c, gen) { [unowned self] r in
                    if case .success(let sets) = r { i.advertisingSets = sets.count }
                    info = i
                    clearPrevious(c, gen) { done(nil) }
                }
            }
        }
    }

    /// Once per session, before the first arm: sets a previous process left (SIGKILL, a watchdog
    /// abort, a config with more frames) are cleared, so none stays on air beside ours.
    private func clearPrevious(_ c: HCICommandChannel, _ gen: Int, _ done: @escaping () -> Void) {
        guard !clearedPrevious else { return done() }
        let quiet: [HCIStatus] = [.commandDisallowed, .unknownCommand, .unknownAdvertisingIdentifier]
        chain([
            run(LEDisableAllExtendedAdvertising(), c, gen, tolerating: quiet),
            run(LEClearAdvertisingSets(), c, gen, tolerating: quiet),
        ]) { [unowned self] f in
            if f == nil {
                clearedPrevious = true
                armedHandles = []
            }
            done()
        }
    }
}

extension Result {
    var failure: Failure? {
        if case .failure(let f) = self { return f }
        return nil
    }
}
