import BeaconKit
import CBlueZ
import Glibc

/// Which scan commands the controller took.
public enum ScanFamily: String, Sendable {
    case legacy, extended
}

/// Why scanning could not start.
public enum ScanFailure: Error, Equatable, Sendable, CustomStringConvertible {
    case missing
    case permission
    case blocked
    case io(Errno)
    case command(HCICommandFailure)

    public var description: String {
        switch self {
        case .missing: "no such adapter"
        case .permission: "permission denied (needs CAP_NET_RAW and CAP_NET_ADMIN)"
        case .blocked: "blocked by rfkill"
        case .io(let e): "\(e)"
        case .command(let f): "\(f)"
        }
    }

    init(_ e: Errno) {
        switch e {
        case .noDevice, Errno(ENXIO): self = .missing
        case .notPermitted, .accessDenied: self = .permission
        case .rfkilled: self = .blocked
        default: self = .io(e)
        }
    }

    init(_ f: HCICommandFailure) {
        if case .io(let e) = f { self.init(e) } else { self = .command(f) }
    }
}

/// A passive LE observer on one controller's raw HCI socket: passive scanning with duplicate
/// filtering off (so RSSI keeps updating), legacy commands first, extended ones where the
/// controller refuses legacy scanning (SPEC §3's Command Disallowed rule holds for scanning too).
public final class Scanner {
    public static let commandTimeoutMs = 1000
    /// Command Complete/Status, Hardware Error, LE Meta (advertising reports).
    static let events: [UInt8] = [0x0e, 0x0f, 0x10, 0x3e]

    public let index: UInt16
    public let device: HCIDeviceSocket
    public private(set) var family: ScanFamily?
    private let log: Logger

    /// Opens the adapter and brings it up.
    public init(control: HCIControlSocket, index: UInt16, log: Logger) throws(ScanFailure) {
        self.index = index
        self.log = log
        do {
            guard try control.deviceFlags(index: index) != nil else { throw ScanFailure.missing }
            device = try HCIDeviceSocket(index: index, events: Self.events)
        } catch let e as ScanFailure {
            throw e
        } catch let e as Errno {
            throw ScanFailure(e)
        } catch {
            throw .io(Errno(EIO))
        }
        do { try control.bringUp(index: index) } catch { throw ScanFailure(error) }
    }

    public var fd: FileDescriptor { device.fd }

    /// Sets passive scan parameters and enables scanning.
    public func start() -> ScanFailure? {
        let hasExtended: Bool
        switch device.execute(LEReadLocalSupportedFeatures(), timeoutMs: Self.commandTimeoutMs) {
        case .success(let rp): hasExtended = ControllerInfo(hciVersion: 0, manufacturer: 0,
                                                            leFeatures: ControllerInfo.parseLEFeatures(rp) ?? 0).hasExtendedAdvertising
        case .failure(let f): return ScanFailure(f)
        }
        switch startLegacy() {
        case nil:
            family = .legacy
            return nil
        case .status(_, let st)? where st == .commandDisallowed || (hasExtended && st == .unknownCommand):
            log.info("legacy scan commands refused (\(st)); using extended scan commands")
        case let f? where hasExtended:
            log.info("legacy scanning failed (\(f)); trying extended scan commands")
        case let f?:
            return ScanFailure(f)
        }
        if let f = startExtended() { return ScanFailure(f) }
        family = .extended
        return nil
    }

    private func startLegacy() -> HCICommandFailure? {
        // Disable first: parameters cannot change while scanning; disabled already is no failure.
        if let f = run(LESetScanEnable(false), tolerating: [.commandDisallowed]) { return f }
        if let f = run(LESetScanParameters(active: false)) { return f }
        return run(LESetScanEnable(true, filterDuplicates: false))
    }

    private func startExtended() -> HCICommandFailure? {
        if let f = run(LESetExtendedScanEnable(false), tolerating: [.commandDisallowed]) { return f }
        if let f = run(LESetExtendedScanParameters(active: false)) { return f }
        return run(LESetExtendedScanEnable(true, filterDuplicates: false))
    }

    /// Disables scanning in the family that was enabled (on exit: leave the controller idle).
    public func stop() -> HCICommandFailure? {
        guard let family else { return nil }
        self.family = nil
        switch family {
        case .legacy: return run(LESetScanEnable(false), tolerating: [.commandDisallowed])
        case .extended: return run(LESetExtendedScanEnable(false), tolerating: [.commandDisallowed])
        }
    }

    public func close() { device.close() }

    /// Drains the socket: the advertising reports read, including those that arrived while a
    /// command was waiting. Throws when the adapter went down or away.
    public func readReports() throws(Errno) -> [AdvertisingReport] {
        var out: [AdvertisingReport] = []
        for case .advertisingReports(let r) in device.takeStrayEvents() { out += r }
        var buf = [UInt8](repeating: 0, count: 300)
        while true {
            let n: Int
            do {
                n = try device.fd.read(into: &buf)
            } catch let e where e == .wouldBlock {
                break
            }
            if n <= 0 { break }
            // Malformed packets are skipped: the decoder checks every length and never traps.
            if case .success(.advertisingReports(let r)) = HCIEvent.decode(buf[0..<n]) { out += r }
        }
        return out
    }

    private func run(_ command: any HCICommand, tolerating: [HCIStatus] = []) -> HCICommandFailure? {
        device.run(command, timeoutMs: Self.commandTimeoutMs, tolerating: tolerating, log: log)
    }
}
