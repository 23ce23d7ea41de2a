import BeaconKit
import Glibc

public enum AdvertisingMode: Equatable, Sendable, CustomStringConvertible {
    case legacy
    case extended(handle: UInt8)
    public var description: String {
        switch self {
        case .legacy: "legacy"
        case .extended(let h): "extended, set \(h)"
        }
    }
}

/// Puts the beacon on air through the kernel's HCI socket, the way the study guide does by hand,
/// with the fallbacks real controllers need (SPEC §3). Every command waits for its completion.
public final class Advertiser {
    public static let commandTimeoutMs = 1000
    public let control: HCIControlSocket
    public private(set) var device: HCIDeviceSocket?
    public private(set) var info: ControllerInfo?
    public private(set) var mode: AdvertisingMode = .legacy
    public private(set) var effectiveIntervalMs: UInt16 = 0
    public private(set) var payload: [UInt8] = []
    /// What we last put on air on this device (nil after close or disable).
    private var onAirMode: AdvertisingMode?
    /// Commands we sent recently, so the monitor can tell ours from another process's.
    public var sent = SentCommandLog()
    private var warnedTxPower = false
    /// Called once the adapter is up, before our commands: what the kernel sent to initialise
    /// it (a Reset among them) is not interference.
    public var afterBringUp: (() -> Void)?
    private let log: Logger

    public init(control: HCIControlSocket, log: Logger) {
        self.control = control
        self.log = log
    }

    /// The set handle in extended mode, for classifying others' commands.
    public var extendedHandle: UInt8? {
        if case .extended(let h) = mode { return h }
        return nil
    }

    public func close() {
        device?.close()
        device = nil
        info = nil
        onAirMode = nil
    }

    /// Configures and enables advertising. Returns nil when the beacon is on air.
    public func arm(_ config: BeaconConfig, scope: ArmScope) -> ArmFailure? {
        let index = config.bluetooth.adapterIndex
        if scope == .full || device == nil || device?.index != index {
            if let failure = prepare(index: index) { return failure }
        }
        guard let dev = device, let info else { return .missing }
        payload = AltBeacon.advertisingData(config.beacon)
        if scope == .data, onAirMode != nil, run(dataCommand(), on: dev) == nil { return nil }
        let result = configure(config, dev, info)
        onAirMode = result == nil ? mode : nil
        return result
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

    private func configure(_ config: BeaconConfig, _ dev: HCIDeviceSocket, _ info: ControllerInfo) -> ArmFailure? {
        var wantsExtended = false
        if config.bluetooth.txPowerDbm != nil {
            if info.hasExtendedAdvertising {
                wantsExtended = true
            } else if !warnedTxPower {
                warnedTxPower = true
                log.warning("tx_power_dbm is ignored: \(config.bluetooth.adapter) has no LE extended advertising (\(info.versionName))")
            }
        }
        let handle = info.advertisingSets > 0 ? min(info.advertisingSets - 1, 0xef) : 0
        leavePreviousMode(forExtended: wantsExtended, dev)
        if wantsExtended {
            switch armExtended(config, dev, handle: handle) {
            case .none: mode = .extended(handle: handle); return nil
            case .some(.status(_, .commandDisallowed)):
                // Controllers may refuse extended commands once legacy ones were used, until reset.
                log.warning("\(config.bluetooth.adapter) refuses extended advertising now; advertising with legacy commands, tx_power_dbm applies after the adapter restarts")
            case .some(let f): return failure(for: f)
            }
        }
        switch armLegacy(config, dev) {
        case .none:
            mode = .legacy
            return nil
        case .some(.status(_, .commandDisallowed)) where info.hasExtendedAdvertising && !wantsExtended:
            // The host has used extended advertising: legacy commands are now refused (SPEC §3).
            log.info("legacy advertising commands refused on \(config.bluetooth.adapter); using extended commands with a legacy PDU")
            mode = .extended(handle: handle)
            return armExtended(config, dev, handle: handle).map(failure(for:))
        case .some(let f):
            return failure(for: f)
        }
    }

    /// Switching between legacy and extended commands: take the old advertising down first, or
    /// it stays on air beside the new one (and the controller may refuse the mix).
    private func leavePreviousMode(forExtended: Bool, _ dev: HCIDeviceSocket) {
        let quiet: [HCIStatus] = [.commandDisallowed, .unknownAdvertisingIdentifier, .unknownCommand]
        switch onAirMode {
        case .legacy? where forExtended:
            _ = run(LESetAdvertiseEnable(false), on: dev, tolerating: quiet)
        case .extended(let h)? where !forExtended:
            _ = run(LESetExtendedAdvertisingEnable(false, handle: h), on: dev, tolerating: quiet)
            _ = run(LERemoveAdvertisingSet(handle: h), on: dev, tolerating: quiet)
        default:
            break
        }
    }

    private func armLegacy(_ config: BeaconConfig, _ dev: HCIDeviceSocket) -> HCICommandFailure? {
        if let f = run(LESetAdvertiseEnable(false), on: dev, tolerating: [.commandDisallowed]) { return f }
        if let f = setInterval(config, dev, { LESetAdvertisingParameters(intervalMs: $0) }) { return f }
        if let f = run(LESetAdvertisingData(data: payload), on: dev) { return f }
        // Some controllers answer Command Disallowed when already enabled: not a failure.
        return run(LESetAdvertiseEnable(true), on: dev, tolerating: [.commandDisallowed])
    }

    private func armExtended(_ config: BeaconConfig, _ dev: HCIDeviceSocket, handle: UInt8) -> HCICommandFailure? {
        let quiet: [HCIStatus] = [.commandDisallowed, .unknownAdvertisingIdentifier]
        if let f = run(LESetExtendedAdvertisingEnable(false, handle: handle), on: dev, tolerating: quiet) { return f }
        let tx = config.bluetooth.txPowerDbm
        if let f = setInterval(config, dev, { LESetExtendedAdvertisingParameters(handle: handle, intervalMs: $0, txPowerDbm: tx) }) { return f }
        if let f = run(LESetExtendedAdvertisingData(handle: handle, data: payload), on: dev) { return f }
        return run(LESetExtendedAdvertisingEnable(true, handle: handle), on: dev, tolerating: [.commandDisallowed])
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

    private func dataCommand() -> any HCICommand {
        if case .extended(let h) = mode { return LESetExtendedAdvertisingData(handle: h, data: payload) }
        return LESetAdvertisingData(data: payload)
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
        onAirMode = nil
        let r: Result<[UInt8], HCICommandFailure>
        switch mode {
        case .legacy: r = dev.execute(LESetAdvertiseEnable(false), timeoutMs: timeoutMs)
        case .extended(let h):
            r = dev.execute(LESetExtendedAdvertisingEnable(false, handle: h), timeoutMs: timeoutMs)
            _ = dev.execute(LERemoveAdvertisingSet(handle: h), timeoutMs: timeoutMs)
        }
        if case .failure(let f) = r, f != .status(f.opcode, .commandDisallowed) { return f }
        return nil
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
