import BeaconKit
import Glibc

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

    /// The one map from a failed system call to why scanning could not start.
    /// What the errno means, from the one map the beacon uses (`ArmFailure.init(_: Errno)`).
    init(_ e: Errno) {
        if e.isPermission { self = .permission; return }
        switch ArmFailure(e) {
        case .missing where e != Errno(EIO) && e != Errno(EBADF) && e != .brokenPipe: self = .missing
        case .blocked: self = .blocked
        default: self = .io(e)
        }
    }

    init(_ f: HCICommandFailure) {
        if case .io(let e) = f { self.init(e) } else { self = .command(f) }
    }
}

/// An LE observer on one controller, over the same command path as the beacon (an
/// `HCICommandChannel` on the adapter's raw HCI socket, with LE Meta events let through): passive
/// scanning (active with `active`) with duplicate filtering off (so RSSI keeps updating), legacy commands first, extended
/// ones where the controller refuses legacy scanning (SPEC §3's Command Disallowed rule holds for
/// scanning too). Nothing here waits: every `done` runs on a later loop turn than its call.
public final class Scanner {
    public typealias StepDone = (HCICommandFailure?) -> Void
    public static let commandTimeoutMs: Int64 = 1000
    /// How long `stop` gives the controller to confirm scanning is off.
    public static let stopTimeoutMs: Int64 = 400
    /// A sequence refused because another program's scan started in between is asked again this
    /// many times, this far apart (about a fifth of a second in all).
    static let busyRetries = 20
    static let busyRetryMs: Int64 = 10
    /// Command Complete/Status, Hardware Error, LE Meta (advertising reports).
    static let events: [UInt8] = [0x0e, 0x0f, 0x10, 0x3e]

    public let index: UInt16
    /// The family scanning was enabled with; nil before `start` succeeded and after `stop`.
    public private(set) var family: ScanFamily?
    /// Advertising reports as the channel reads them (only while scanning).
    public var onReports: ([AdvertisingReport]) -> Void = { _ in }
    /// The adapter's socket broke while scanning (it went away under us).
    public var onLost: (Errno) -> Void = { _ in }
    /// Active scanning: scan requests go out, so scannable devices' scan responses are reported
    /// too (the GATT identity's name is in its scan response). Set before `start`.
    public var active = false

    private let controller: ControllerAccess
    private let exists: () throws(Errno) -> Bool
    private let openTransport: () throws(Errno) -> HCITransport
    private let loop: EventLoop
    private let log: Logger
    private var channel: HCICommandChannel?
    /// Why the channel broke, for commands sent after it did.
    private var lost: Errno?
    /// The family whose enable command is in flight: `stop` disables it too.
    private var enabling: ScanFamily?
    /// The family `pause` took scanning off in: `resume` enables it again.
    private var paused: ScanFamily?
    /// Bumped by `stop` and `close`: completions of an older sequence are dropped.
    private var generation = 0
    private lazy var busyRetry = loop.makeTimer()

    /// A scanner on adapter `index` of the kernel (HCIDEVUP through `control`).
    /// `coalesceMs`: read the reports in batches this far apart (the monitor: fewer wakeups).
    public convenience init(control: HCIControlSocket, index: UInt16, loop: EventLoop, log: Logger, coalesceMs: Int64 = 0) {
        self.init(controller: KernelController(index: index, loop: loop, controlFD: { control.fd.rawValue }),
                  loop: loop, log: log,
                  exists: { () throws(Errno) -> Bool in try control.deviceFlags(index: index) != nil },
                  openTransport: { () throws(Errno) -> HCITransport in
                      try HCISocketTransport(index: index, loop: loop, events: Scanner.events, coalesceMs: coalesceMs)
                  })
    }

    /// `exists`: whether the adapter is there (a non-blocking query); `openTransport`: its socket.
    init(controller: ControllerAccess, loop: EventLoop, log: Logger,
         exists: @escaping () throws(Errno) -> Bool, openTransport: @escaping () throws(Errno) -> HCITransport) {
        index = controller.index
        self.controller = controller
        self.loop = loop
        self.log = log
        self.exists = exists
        self.openTransport = openTransport
    }

    /// Opens the adapter, brings it up (off the loop), sets scan parameters and enables
    /// scanning. `done` runs once, on a later loop turn: nil when scanning, else why not (the
    /// adapter is then closed). A `stop` or `close` meanwhile supersedes it: `done` is not called.
    public func start(_ done: @escaping (ScanFailure?) -> Void) {
        close()
        let gen = generation
        let finish: (ScanFailure?) -> Void = { [weak self] f in
            guard let self, gen == generation else { return }
            if f != nil { close() }
            done(f)
        }
        do throws(Errno) {
            guard try exists() else { return loop.post { finish(.missing) } }
            let c = HCICommandChannel(index: index, transport: try openTransport(), loop: loop)
            c.onEvent = { [weak self] e in
                guard let self, family != nil, case .advertisingReports(let r) = e else { return }
                onReports(r)
            }
            c.onLost = { [weak self] e in
                guard let self else { return }
                lost = e
                // While starting, the command in flight (or the next one) fails with `e` instead.
                if family != nil { onLost(e) }
            }
            channel = c
            lost = nil
        } catch {
            return loop.post { finish(ScanFailure(error)) }
        }
        controller.setPower(up: true) { [weak self] e in
            guard let self, gen == generation else { return }
            if let e, e != .alreadyInProgress { return finish(ScanFailure(e)) }
            readFeaturesAndEnable(gen, finish)
        }
    }

    private func readFeaturesAndEnable(_ gen: Int, _ done: @escaping (ScanFailure?) -> Void) {
        execute(LEReadLocalSupportedFeatures(), gen, timeoutMs: Self.commandTimeoutMs) { [weak self] r in
            guard let self else { return }
            let rp: [UInt8]
            switch r {
            case .success(let p): rp = p
            case .failure(let f): return done(ScanFailure(f))
            }
            let features = LEFeaturesReply(returnParameters: rp)?.bits ?? 0
            let hasExtended = ControllerInfo(hciVersion: 0, manufacturer: 0, leFeatures: features).hasExtendedAdvertising
            // Command Disallowed from a controller without extended commands is another
            // program's scan starting in between (not the legacy/extended mixing rule): ask again.
            enable(.legacy, gen, busyRetries: hasExtended ? 1 : Self.busyRetries) { [weak self] f in
                guard let self else { return }
                switch f {
                case nil:
                    return done(nil)
                case .status(let op, let st)? where st == .commandDisallowed || (hasExtended && st == .unknownCommand):
                    log.info("legacy scan commands refused (\(op): \(st)); using extended scan commands")
                case let f? where hasExtended:
                    log.info("legacy scanning failed (\(f)); trying extended scan commands")
                case let f?:
                    return done(ScanFailure(f))
                }
                enable(.extended, gen) { f in done(f.map { ScanFailure($0) }) }
            }
        }
    }

    /// Disables scanning first (parameters cannot change while scanning; disabled already is no
    /// failure), sets the parameters (passive unless `active`), then enables scanning with duplicates reported.
    /// Parameters or enable refused with Command Disallowed means another program enabled scanning
    /// between our commands (an observer starting or stopping): after `busyRetryMs`, the whole
    /// sequence again, at most `busyRetries` more times.
    private func enable(_ fam: ScanFamily, _ gen: Int, busyRetries: Int = Scanner.busyRetries, _ done: @escaping StepDone) {
        let off: any HCICommand, parameters: any HCICommand, on: any HCICommand
        switch fam {
        case .legacy:
            off = LESetScanEnable(false)
            parameters = LESetScanParameters(active: active)
            on = LESetScanEnable(true, filterDuplicates: false)
        case .extended:
            off = LESetExtendedScanEnable(false)
            parameters = LESetExtendedScanParameters(active: active)
            on = LESetExtendedScanEnable(true, filterDuplicates: false)
        }
        let again: (HCICommandFailure?) -> Bool = { [weak self] f in
            guard let self, case .status(let op, .commandDisallowed)? = f, busyRetries > 0 else { return false }
            log.debug("\(op) refused while another scan changes; trying again (\(busyRetries) left)")
            busyRetry.schedule(afterMs: Self.busyRetryMs) { [weak self] in
                guard let self, gen == generation else { return }
                enable(fam, gen, busyRetries: busyRetries - 1, done)
            }
            return true
        }
        run(off, gen, tolerating: [.commandDisallowed]) { [weak self] f in
            guard let self else { return }
            if let f { return done(f) }
            run(parameters, gen) { [weak self] f in
                guard let self else { return }
                if again(f) { return }
                if let f { return done(f) }
                enabling = fam
                run(on, gen) { [weak self] f in
                    guard let self else { return }
                    enabling = nil
                    if again(f) { return }
                    if f == nil { family = fam }
                    done(f)
                }
            }
        }
    }

    /// Disables scanning in the family that was enabled (or is being enabled), each command with
    /// `timeoutMs`, so the controller is left idle; a start in progress goes no further. `done`
    /// runs once, on a later loop turn: nil when scanning is off (or never was on), else why not.
    public func stop(timeoutMs: Int64 = Scanner.stopTimeoutMs, _ done: @escaping StepDone) {
        generation += 1
        busyRetry.cancel()
        let gen = generation
        let target = family ?? enabling
        family = nil
        enabling = nil
        // Whatever is queued or in flight is dropped: the disable goes to the kernel now.
        channel?.abandonAll()
        guard let target else { return loop.post { done(nil) } }
        let off: any HCICommand = target == .legacy ? LESetScanEnable(false) : LESetExtendedScanEnable(false)
        run(off, gen, timeoutMs: timeoutMs, tolerating: [.commandDisallowed], done)
    }

    /// Takes scanning off for a while, the adapter kept open (a connection of ours is being made:
    /// see `resume`); `done` as for `stop`.
    public func pause(_ done: @escaping StepDone) {
        paused = family ?? enabling ?? paused
        stop(done)
    }

    /// Scanning on again after `pause`, in the same family with the same parameters. `done` runs
    /// once, on a later loop turn: nil when scanning, else why not. A `stop` or `close` meanwhile
    /// supersedes it.
    public func resume(_ done: @escaping (ScanFailure?) -> Void) {
        generation += 1
        let gen = generation
        guard let fam = paused else { return loop.post { done(.io(Errno(EBADF))) } }
        enable(fam, gen) { [weak self] f in
            guard let self, gen == generation else { return }
            if f == nil { paused = nil }
            done(f.map { ScanFailure($0) })
        }
    }

    public func close() {
        generation += 1
        busyRetry.cancel()
        paused = nil
        family = nil
        enabling = nil
        channel?.close()
        channel = nil
    }

    /// Runs `command`; a status in `tolerating` counts as success (e.g. Command Disallowed to
    /// "disable" when already disabled).
    private func run(_ command: any HCICommand, _ gen: Int, timeoutMs: Int64 = Scanner.commandTimeoutMs,
                     tolerating: [HCIStatus] = [], _ done: @escaping StepDone) {
        execute(command, gen, timeoutMs: timeoutMs) { [log] r in done(r.failure(tolerating: tolerating, log: log)) }
    }

    /// Sends `command` on the adapter's channel; `done` on a later turn unless a newer sequence
    /// (`gen` no longer current) superseded it. A channel that broke fails it at once.
    private func execute(_ command: any HCICommand, _ gen: Int, timeoutMs: Int64,
                         _ done: @escaping (Result<[UInt8], HCICommandFailure>) -> Void) {
        guard let c = channel, !c.isClosed else {
            let e = lost ?? Errno(EBADF)
            return loop.post { [weak self] in
                if let self, gen == generation { done(.failure(.io(e))) }
            }
        }
        c.send(command, timeoutMs: timeoutMs) { [weak self] r in
            if let self, gen == generation { done(r) }
        }
    }
}
