import BeaconKit
import Glibc

/// Puts the configured frames on air through the kernel's HCI socket, the way the study guide
/// does by hand, with the fallbacks real controllers need (SPEC §3): one extended advertising set
/// per frame where the controller has them, else legacy commands with the frames taking turns
/// (`AirPlan`). Every command waits for its completion.
public final class Advertiser {
    public static let commandTimeoutMs = 1000
    public let control: HCIControlSocket
    public private(set) var device: HCIDeviceSocket?
    public private(set) var info: ControllerInfo?
    public private(set) var effectiveIntervalMs: UInt16 = 0
    /// How the frames share the controller; nil when nothing of ours is on air.
    public private(set) var plan: AirPlan?
    /// The plan of the last arm, kept for the monitor while re-arming.
    private var lastPlan = AirPlan(handles: nil, frameCount: 1)
    private var frames: [ConfiguredFrame] = []
    /// What we last sent to each slot.
    private var slotData: [[UInt8]] = []
    /// The frame of the rotating (last) slot that is on air.
    private var turn = 0
    /// Commands we sent recently, so the monitor can tell ours from another process's.
    public var sent = SentCommandLog()
    private var warnedTxPower = false
    /// Called once the adapter is up, before our commands: what the kernel sent to initialise
    /// it (a Reset among them) is not interference.
    public var afterBringUp: (() -> Void)?
    /// What the TLM frame carries, asked for each time it is (re)sent.
    public var telemetry: () -> Telemetry = { .zero }
    private let log: Logger

    public init(control: HCIControlSocket, log: Logger) {
        self.control = control
        self.log = log
    }

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
    public var hasStandingTelemetry: Bool {
        guard let plan else { return false }
        return (0..<plan.slotCount).contains { s in
            let r = plan.frames(inSlot: s)
            return r.count == 1 && frames[r.lowerBound].frame.carriesTelemetry
        }
    }

    public func close() {
        device?.close()
        device = nil
        info = nil
        plan = nil
    }

    /// Configures and enables advertising. Returns nil when every frame is on air.
    public func arm(_ config: BeaconConfig, scope: ArmScope) -> ArmFailure? {
        let index = config.bluetooth.adapterIndex
        if scope == .full || device == nil || device?.index != index {
            if let failure = prepare(index: index) { return failure }
        }
        guard let dev = device, let info else { return .missing }
        let sameFrames = frames.map(\.name) == config.frames.map(\.name)
        frames = config.frames
        if scope == .data, sameFrames, let plan, updateChangedSlots(plan, dev) == nil { return nil }
        let result = configure(config, dev, info)
        if result != nil { plan = nil }
        return result
    }

    /// After an edit that changed frames' contents only: re-sends just the slots whose bytes changed.
    private func updateChangedSlots(_ plan: AirPlan, _ dev: HCIDeviceSocket) -> HCICommandFailure? {
        for s in 0..<plan.slotCount {
            let r = plan.frames(inSlot: s)
            let f = r.count > 1 ? r.lowerBound + turn % r.count : r.lowerBound
            if let e = send(frame: f, slot: s, plan, dev, onlyIfChanged: true) { return e }
        }
        return nil
    }

    /// Sends frame `f`'s payload to slot `s`.
    private func send(frame f: Int, slot s: Int, _ plan: AirPlan, _ dev: HCIDeviceSocket, onlyIfChanged: Bool = false) -> HCICommandFailure? {
        let data = frames[f].frame.advertisingData(frames[f].frame.carriesTelemetry ? telemetry() : .zero)
        if onlyIfChanged, s < slotData.count, slotData[s] == data { return nil }
        let command: any HCICommand = plan.handle(ofSlot: s).map { LESetExtendedAdvertisingData(handle: $0, data: data) }
            ?? LESetAdvertisingData(data: data)
        if let e = run(command, on: dev) { return e }
        while slotData.count <= s { slotData.append([]) }
        slotData[s] = data
        return nil
    }

    /// The next frame of the rotating slot (every `rotation_ms`).
    public func rotate() -> ArmFailure? {
        guard let plan, plan.rotates, let dev = device else { return nil }
        let s = plan.slotCount - 1, r = plan.frames(inSlot: s)
        turn = (turn + 1) % r.count
        return send(frame: r.lowerBound + turn, slot: s, plan, dev).map(failure(for:))
    }

    /// Re-sends the frames with telemetry that have a slot of their own (fresh uptime and count).
    public func refreshTelemetry() -> ArmFailure? {
        guard let plan, let dev = device else { return nil }
        for s in 0..<plan.slotCount {
            let r = plan.frames(inSlot: s)
            guard r.count == 1, frames[r.lowerBound].frame.carriesTelemetry else { continue }
            if let e = send(frame: r.lowerBound, slot: s, plan, dev) { return failure(for: e) }
        }
        return nil
    }

    /// Opens the adapter, brings it up and reads what it can do.
    private func prepare(index: UInt16) -> ArmFailure? {
        if device?.index != index || device?.fd.isOpen != true {
            close()
            do {
                let dev = try HCIDeviceSocket(index: index)
                dev.onSend = { [weak self] op, params in self?.sent.recordSent(op, params, at: monotonicMilliseconds()) }
                device = dev
            } catch {
                return failure(for: error)
            }
        }
        do {
            try control.bringUp(index: index)
        } catch {
            return failure(for: error)
        }
        afterBringUp?()
        guard let dev = device else { return .missing }
        switch readInfo(dev) {
        case .success(let i): info = i
        case .failure(let f): return failure(for: f)
        }
        return nil
    }

    private func readInfo(_ dev: HCIDeviceSocket) -> Result<ControllerInfo, HCICommandFailure> {
        let t = Self.commandTimeoutMs
        let version: [UInt8], features: [UInt8]
        switch dev.execute(ReadLocalVersion(), timeoutMs: t) {
        case .success(let rp): version = rp
        case .failure(let f): return .failure(f)
        }
        switch dev.execute(LEReadLocalSupportedFeatures(), timeoutMs: t) {
        case .success(let rp): features = rp
        case .failure(let f): return .failure(f)
        }
        let v = ControllerInfo.parseVersion(version) ?? (0, 0)
        var i = ControllerInfo(hciVersion: v.hciVersion, manufacturer: v.manufacturer,
                               leFeatures: ControllerInfo.parseLEFeatures(features) ?? 0)
        if i.hasExtendedAdvertising, case .success(let rp) = dev.execute(LEReadNumberOfSupportedAdvertisingSets(), timeoutMs: t) {
            i.advertisingSets = ControllerInfo.parseAdvertisingSets(rp) ?? 0
        }
        return .success(i)
    }

    /// Extended commands where they bring something (a TX power, frames on air at once), else
    /// legacy ones; each falls back on the other when the controller refuses it (SPEC §3).
    private func configure(_ config: BeaconConfig, _ dev: HCIDeviceSocket, _ info: ControllerInfo) -> ArmFailure? {
        var wantsExtended = info.hasExtendedAdvertising && frames.count > 1
        if config.bluetooth.txPowerDbm != nil {
            if info.hasExtendedAdvertising {
                wantsExtended = true
            } else if !warnedTxPower {
                warnedTxPower = true
                log.warning("tx_power_dbm is ignored: \(config.bluetooth.adapter) has no LE extended advertising (\(info.versionName))")
            }
        }
        let handles = AirPlan.handles(frames: frames.count, supportedSets: info.advertisingSets)
        let extended = AirPlan(handles: handles, frameCount: frames.count)
        let legacy = AirPlan(handles: nil, frameCount: frames.count)
        leavePrevious(for: wantsExtended ? extended : legacy, dev)
        if wantsExtended {
            switch armExtended(config, dev, extended) {
            case .none: return onAir(extended)
            case .some(.status(_, .commandDisallowed)):
                // Controllers may refuse extended commands once legacy ones were used, until reset.
                log.warning("\(config.bluetooth.adapter) refuses extended advertising now; advertising with legacy commands\(frames.count > 1 ? ", the frames in turn" : ""), until the adapter restarts")
            case .some(let f): return failure(for: f)
            }
        }
        switch armLegacy(config, dev, legacy) {
        case .none:
            return onAir(legacy)
        case .some(.status(_, .commandDisallowed)) where info.hasExtendedAdvertising && !wantsExtended:
            // The host has used extended advertising: legacy commands are now refused (SPEC §3).
            log.info("legacy advertising commands refused on \(config.bluetooth.adapter); using extended commands with a legacy PDU")
            if let f = armExtended(config, dev, extended) { return failure(for: f) }
            return onAir(extended)
        case .some(let f):
            return failure(for: f)
        }
    }

    private func onAir(_ p: AirPlan) -> ArmFailure? {
        plan = p
        lastPlan = p
        return nil
    }

    /// Switching between legacy commands and sets (or to other sets): take the old advertising
    /// down first, or it stays on air beside the new one (and the controller may refuse the mix).
    private func leavePrevious(for next: AirPlan, _ dev: HCIDeviceSocket) {
        guard let previous = plan, previous.handles != next.handles else { return }
        let quiet: [HCIStatus] = [.commandDisallowed, .unknownAdvertisingIdentifier, .unknownCommand]
        if let old = previous.handles {
            for h in old where !(next.handles ?? []).contains(h) {
                _ = run(LESetExtendedAdvertisingEnable(false, handle: h), on: dev, tolerating: quiet)
                _ = run(LERemoveAdvertisingSet(handle: h), on: dev, tolerating: quiet)
            }
        } else {
            _ = run(LESetAdvertiseEnable(false), on: dev, tolerating: quiet)
        }
        plan = nil
    }

    private func armLegacy(_ config: BeaconConfig, _ dev: HCIDeviceSocket, _ plan: AirPlan) -> HCICommandFailure? {
        if let f = run(LESetAdvertiseEnable(false), on: dev, tolerating: [.commandDisallowed]) { return f }
        if let f = setInterval(config, dev, { LESetAdvertisingParameters(intervalMs: $0) }) { return f }
        slotData = []
        turn = 0
        if let f = send(frame: 0, slot: 0, plan, dev) { return f }
        // Some controllers answer Command Disallowed when already enabled: not a failure.
        return run(LESetAdvertiseEnable(true), on: dev, tolerating: [.commandDisallowed])
    }

    private func armExtended(_ config: BeaconConfig, _ dev: HCIDeviceSocket, _ plan: AirPlan) -> HCICommandFailure? {
        let quiet: [HCIStatus] = [.commandDisallowed, .unknownAdvertisingIdentifier]
        let tx = config.bluetooth.txPowerDbm
        slotData = []
        turn = 0
        for s in 0..<plan.slotCount {
            guard let h = plan.handle(ofSlot: s) else { continue }
            if let f = run(LESetExtendedAdvertisingEnable(false, handle: h), on: dev, tolerating: quiet) { return f }
            if let f = setInterval(config, dev, { LESetExtendedAdvertisingParameters(handle: h, intervalMs: $0, txPowerDbm: tx) }) { return f }
            if let f = send(frame: plan.frames(inSlot: s).lowerBound, slot: s, plan, dev) { return f }
            if let f = run(LESetExtendedAdvertisingEnable(true, handle: h), on: dev, tolerating: [.commandDisallowed]) { return f }
        }
        return nil
    }

    /// Sets parameters at the configured interval; Bluetooth 4.x controllers refuse
    /// non-connectable intervals under 100 ms, so fall back to 100 ms and say so.
    private func setInterval<C: HCICommand>(_ config: BeaconConfig, _ dev: HCIDeviceSocket, _ make: (UInt16) -> C) -> HCICommandFailure? {
        let wanted = config.bluetooth.intervalMs
        let f = run(make(wanted), on: dev)
        if case .status(_, let st)? = f, wanted < AdvertisingInterval.legacyNonConnectableMinimumMs,
           [.invalidParameters, .unsupportedFeature, HCIStatus(rawValue: 0x1e), HCIStatus(rawValue: 0x20)].contains(st) {
            let fallback = AdvertisingInterval.legacyNonConnectableMinimumMs
            log.warning("\(config.bluetooth.adapter) refused a \(wanted) ms interval (\(st)); advertising every \(fallback) ms instead")
            effectiveIntervalMs = fallback
            return run(make(fallback), on: dev)
        }
        if f == nil { effectiveIntervalMs = wanted }
        return f
    }

    private func run(_ command: any HCICommand, on dev: HCIDeviceSocket, tolerating: [HCIStatus] = []) -> HCICommandFailure? {
        dev.run(command, timeoutMs: Self.commandTimeoutMs, tolerating: tolerating, log: log)
    }

    /// Asks the controller something cheap; a hung controller does not answer.
    public func probe() -> ArmFailure? {
        guard let dev = device else { return .missing }
        if case .failure(let f) = dev.execute(ReadLocalVersion(), timeoutMs: Self.commandTimeoutMs) { return failure(for: f) }
        return nil
    }

    /// Takes the beacon off air (on stop): no stale identity stays on the air.
    public func disable(timeoutMs: Int) -> HCICommandFailure? {
        guard let dev = device else { return nil }
        let p = plan ?? lastPlan
        plan = nil
        var first: HCICommandFailure?
        func note(_ r: Result<[UInt8], HCICommandFailure>) {
            if case .failure(let f) = r, f != .status(f.opcode, .commandDisallowed), first == nil { first = f }
        }
        if let handles = p.handles {
            for h in handles {
                note(dev.execute(LESetExtendedAdvertisingEnable(false, handle: h), timeoutMs: timeoutMs))
                _ = dev.execute(LERemoveAdvertisingSet(handle: h), timeoutMs: timeoutMs)
            }
        } else {
            note(dev.execute(LESetAdvertiseEnable(false), timeoutMs: timeoutMs))
        }
        return first
    }

    func failure(for error: Errno) -> ArmFailure {
        switch error {
        case .noDevice, .brokenPipe, Errno(ENXIO): .missing
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
