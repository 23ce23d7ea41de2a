import BeaconKit
import CBlueZ
import Glibc

/// Puts the configured frames on air through the kernel's HCI socket, the way the study guide
/// does by hand, with the fallbacks real controllers need (SPEC §3): one extended advertising set
/// per frame where the controller has them, else legacy commands with the frames taking turns
/// (`AirPlan`). Nothing here waits: commands go through an `HCICommandChannel` and each sequence
/// goes on when the previous command completes; bringing the adapter up or down runs on a helper
/// thread. A newer sequence (re-arm, stop) supersedes an older one, whose completions are dropped.
public final class Advertiser {
    /// No shorter than the kernel's own HCI command timeout (2 s): a command the kernel is still
    /// waiting for is not yet lost.
    public static let commandTimeoutMs: Int64 = 2500
    public typealias Done = (ArmFailure?) -> Void

    public private(set) var control: HCIControlSocket
    let loop: EventLoop
    let log: Logger
    public private(set) var channel: HCICommandChannel?
    public private(set) var info: ControllerInfo?
    public var effectiveIntervalMs: UInt16 = 0
    /// How the frames share the controller; nil when nothing of ours is on air.
    public internal(set) var plan: AirPlan?
    /// The plan of the last arm, kept for the monitor and the log while re-arming.
    var lastPlan = AirPlan(handles: nil, frameCount: 1)
    var frames: [ConfiguredFrame] = []
    /// What we last sent to each slot.
    var slotData: [[UInt8]] = []
    /// The frame of the rotating (last) slot that is on air.
    var turn = 0
    /// Bumped by every new sequence: completions of older ones are dropped.
    var generation = 0
    /// Commands we sent recently, so the monitor can tell ours from another process's.
    public var sent = SentCommandLog()
    var warnedTxPower = false
    private let blocking: BlockingCall
    /// Called once the adapter is up, before our commands: what the kernel sent to initialise
    /// it (a Reset among them) is not interference.
    public var afterBringUp: (() -> Void)?
    /// A Hardware Error event from the controller.
    public var onHardwareError: ((UInt8) -> Void)?
    /// What the TLM frame carries, asked for each time it is (re)sent.
    public var telemetry: () -> Telemetry = { .zero }

    public init(control: HCIControlSocket, loop: EventLoop, log: Logger) {
        self.control = control
        self.loop = loop
        self.log = log
        blocking = BlockingCall(loop: loop)
    }

    /// True while the adapter is being brought up or down by us: the kernel's up/down events
    /// then are our own doing, not a fault.
    public var isChangingPower: Bool { blocking.isRunning }

    /// A new control socket (the old one broke).
    public func replaceControl(_ c: HCIControlSocket) { control = c }

    /// "legacy", "legacy, 3 frames in turn", "extended, sets 2 1 0".
    public var mode: String {
        let p = plan ?? lastPlan
        var s = p.handles.map { "extended, set\($0.count > 1 ? "s" : "") " + $0.map { "\($0)" }.joined(separator: " ") } ?? "legacy"
        if p.rotates { s += ", \(p.frameCount - p.slotCount + 1) frames in turn" }
        return s
    }

    /// Ours on air, for classifying others' commands: every frame's payload and what each slot carries.
    public var onAir: OnAirAdvertising {
        OnAirAdvertising(handles: (plan ?? lastPlan).handles, payloads: frames.map { $0.frame.advertisingData(.zero) } + slotData)
    }

    /// True when a slot switches frames every `rotation_ms`.
    public var rotates: Bool { plan?.rotates ?? false }

    /// True when a frame with telemetry has a slot of its own: its data is refreshed now and then.
    public var hasStandingTelemetry: Bool { !standingTelemetrySlots.isEmpty }

    /// The slots that carry one frame with telemetry, always the same one (not in turn).
    var standingTelemetrySlots: [Int] {
        guard let plan else { return [] }
        return (0..<plan.slotCount).filter { s in
            let r = plan.frames(inSlot: s)
            return r.count == 1 && frames[r.lowerBound].frame.carriesTelemetry
        }
    }

    public func close() {
        generation += 1
        channel?.close()
        channel = nil
        info = nil
        plan = nil
    }

    /// Configures and enables advertising; `done(nil)` once every frame is on air. `.powerCycle`
    /// takes the adapter down first (the kernel then re-runs the controller's setup).
    public func arm(_ config: BeaconConfig, scope: ArmScope, _ done: @escaping Done) {
        generation += 1
        let gen = generation
        channel?.dropQueued()
        let index = config.bluetooth.adapterIndex
        let sameFrames = frames.map(\.name) == config.frames.map(\.name)
        frames = config.frames
        let configureNow: () -> Void = { [unowned self] in
            guard gen == generation else { return }
            guard let channel, let info else { return done(.missing) }
            if scope == .data, sameFrames, let plan {
                updateChangedSlots(plan, channel, gen) { [unowned self] f in
                    if f == nil { return done(nil) }
                    configure(config, channel, info, gen, done)
                }
                return
            }
            configure(config, channel, info, gen, done)
        }
        if scope >= .full || channel == nil || channel?.index != index || info == nil {
            prepare(index: index, powerCycle: scope == .powerCycle, gen) { [unowned self] f in
                guard gen == generation else { return }
                if let f { plan = nil; return done(f) }
                configureNow()
            }
        } else {
            configureNow()
        }
    }

    /// Opens the adapter's channel, brings the adapter up (off the loop) and reads what it can do.
    private func prepare(index: UInt16, powerCycle: Bool, _ gen: Int, _ done: @escaping Done) {
        if channel?.index != index || channel?.socket.fd.isOpen != true {
            close()
            generation = gen
            do {
                let c = try HCICommandChannel(index: index, loop: loop)
                c.onSend = { [unowned self] op, params in sent.recordSent(op, params, at: monotonicMilliseconds()) }
                c.onHardwareError = { [unowned self] code in onHardwareError?(code) }
                c.onLost = { [unowned self] _ in plan = nil }
                channel = c
            } catch {
                return done(failure(for: error))
            }
        }
        let fd = control.fd.rawValue
        let up: () -> Void = { [unowned self] in
            blocking.start({ cbluez_ioctl_int(fd, cbluez_HCIDEVUP, Int32(index)) }) { [unowned self] e in
                guard gen == generation else { return }
                if let e, e != .alreadyInProgress { return done(failure(for: e)) }
                afterBringUp?()
                readInfo(gen, done)
            }
        }
        guard powerCycle else { return up() }
        log.notice("taking hci\(index) down and up: the kernel re-runs the controller's setup")
        plan = nil
        blocking.start({ cbluez_ioctl_int(fd, cbluez_HCIDEVDOWN, Int32(index)) }) { [unowned self] e in
            guard gen == generation else { return }
            if let e { log.warning("hci\(index) down: \(e)") }
            up()
        }
    }

    private func readInfo(_ gen: Int, _ done: @escaping Done) {
        guard let c = channel else { return done(.missing) }
        execute(ReadLocalVersion(), c, gen) { [unowned self] r in
            guard case .success(let version) = r else { return done(r.failure.map(failure(for:))) }
            execute(LEReadLocalSupportedFeatures(), c, gen) { [unowned self] r in
                guard case .success(let features) = r else { return done(r.failure.map(failure(for:))) }
                let v = ControllerInfo.parseVersion(version) ?? (0, 0)
                var i = ControllerInfo(hciVersion: v.hciVersion, manufacturer: v.manufacturer,
                                       leFeatures: ControllerInfo.parseLEFeatures(features) ?? 0)
                guard i.hasExtendedAdvertising else { info = i; return done(nil) }
                execute(LEReadNumberOfSupportedAdvertisingSets(), c, gen) { [unowned self] r in
                    if case .success(let rp) = r { i.advertisingSets = ControllerInfo.parseAdvertisingSets(rp) ?? 0 }
                    info = i
                    done(nil)
                }
            }
        }
    }

    /// The next frame of the rotating slot (every `rotation_ms`).
    public func rotate(_ done: @escaping Done) {
        guard let plan, plan.rotates, let c = channel, c.isIdle else { return done(nil) }
        let s = plan.slotCount - 1, r = plan.frames(inSlot: s)
        turn = (turn + 1) % r.count
        send(frame: r.lowerBound + turn, slot: s, plan, c, generation) { [unowned self] f in done(f.map(failure(for:))) }
    }

    /// Re-sends the frames with telemetry that have a slot of their own (fresh uptime and count).
    public func refreshTelemetry(_ done: @escaping Done) {
        guard let plan, let c = channel, c.isIdle else { return done(nil) }
        chain(standingTelemetrySlots.map { s in { [unowned self] next in send(frame: s, slot: s, plan, c, generation, next) } }) { [unowned self] f in
            done(f.map(failure(for:)))
        }
    }

    /// The health probe (SPEC §5): proves advertising is on, not only that the controller
    /// answers, by sending the same data and enable again (an enable when already enabled may be
    /// answered Command Disallowed: not a failure).
    public func probe(_ done: @escaping Done) {
        guard let c = channel, let plan else { return done(.missing) }
        let gen = generation
        var steps: [Step] = []
        for s in 0..<plan.slotCount where s < slotData.count {
            let data = slotData[s]
            if let h = plan.handle(ofSlot: s) {
                steps.append(run(LESetExtendedAdvertisingData(handle: h, data: data), c, gen))
                steps.append(run(LESetExtendedAdvertisingEnable(true, handle: h), c, gen, tolerating: [.commandDisallowed]))
            } else {
                steps.append(run(LESetAdvertisingData(data: data), c, gen))
                steps.append(run(LESetAdvertiseEnable(true), c, gen, tolerating: [.commandDisallowed]))
            }
        }
        chain(steps) { [unowned self] f in done(f.map(failure(for:))) }
    }

    /// Takes the frames off air (on stop), at once, within `deadlineMs`: no stale identity stays
    /// on air. `done` runs when the controller answered or the deadline passed.
    public func disable(deadlineMs: Int64, _ done: @escaping () -> Void) {
        generation += 1
        guard let c = channel else { return done() }
        let p = plan ?? lastPlan
        plan = nil
        let commands: [any HCICommand] = p.handles.map { $0.map { LESetExtendedAdvertisingEnable(false, handle: $0) } }
            ?? [LESetAdvertiseEnable(false)]
        var left = commands.count
        var finished = false
        let finish: () -> Void = {
            guard !finished else { return }
            finished = true
            done()
        }
        loop.schedule("advertiser-disable", afterMs: deadlineMs) { [unowned self] in
            log.warning("the controller did not confirm advertising off within \(deadlineMs) ms")
            finish()
        }
        c.sendNow(commands[0], timeoutMs: deadlineMs) { [unowned self] r in disabled(r, &left, finish) }
        for cmd in commands.dropFirst() {
            c.send(cmd, timeoutMs: deadlineMs) { [unowned self] r in disabled(r, &left, finish) }
        }
        if let handles = p.handles {
            for h in handles { c.send(LERemoveAdvertisingSet(handle: h), timeoutMs: deadlineMs) { _ in } }
        }
    }

    private func disabled(_ r: Result<[UInt8], HCICommandFailure>, _ left: inout Int, _ finish: () -> Void) {
        if case .failure(let f) = r, f != .status(f.opcode, .commandDisallowed) {
            log.warning("could not disable advertising: \(f)")
        }
        left -= 1
        if left == 0 {
            loop.cancel("advertiser-disable")
            finish()
        }
    }

    func failure(for error: Errno) -> ArmFailure {
        switch error {
        case .noDevice, .brokenPipe, Errno(ENXIO), Errno(EBADF), Errno(EIO): .missing
        case .rfkilled: .blocked
        case .networkDown: .down
        case .timedOut: .timeout
        case .notPermitted, .accessDenied: .rejected("permission denied (needs CAP_NET_RAW and CAP_NET_ADMIN)")
        default: .rejected("\(error)")
        }
    }

    func failure(for f: HCICommandFailure) -> ArmFailure {
        switch f {
        case .io(let e): failure(for: e)
        case .timeout: .timeout
        case .status: .rejected(f.description)
        }
    }
}

extension HCICommandFailure {
    var opcode: HCIOpcode {
        switch self {
        case .io: HCIOpcode(rawValue: 0)
        case .timeout(let op), .status(let op, _): op
        }
    }
}

extension Result {
    var failure: Failure? {
        if case .failure(let f) = self { return f }
        return nil
    }
}
