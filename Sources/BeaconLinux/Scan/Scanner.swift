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

/// What a `Scanner` tells its delegate.
public enum ScannerEvent: Sendable {
    /// Advertising reports as the channel reads them (only while scanning).
    case reports([AdvertisingReport])
    /// The adapter's socket broke while scanning (it went away under us).
    case lost(Errno)
}

public protocol ScannerDelegate: AnyObject {
    func scanner(_ event: ScannerEvent)
}

/// An LE observer on one controller, over the same command path as the beacon (an
/// `HCICommandChannel` on the adapter's raw HCI socket, with LE Meta events let through). The
/// decisions are BeaconKit's `ScanProcedure`; this opens the adapter, brings it up (off the
/// loop), sends the commands, keeps the retry timer, and feeds every answer back. Nothing here
/// waits: every `done` runs on a later loop turn than its call.
///
/// Size: 14 stored fields: the runner of `ScanProcedure`, which decides: how it reaches the adapter
/// (controller, exists, openTransport, the channel and why it broke), the retry timer, the owner's
/// call awaiting its outcome, and the one way back in (`answer`).
public final class Scanner {
    public typealias StepDone = (HCICommandFailure?) -> Void
    public static let commandTimeoutMs = ScanProcedure.commandTimeoutMs
    /// How long `stop` gives the controller to confirm scanning is off.
    public static let stopTimeoutMs = ScanProcedure.stopTimeoutMs
    static let busyRetries = ScanProcedure.busyRetries
    /// Command Complete/Status, Hardware Error, LE Meta (advertising reports).
    static let events: [UInt8] = [0x0e, 0x0f, 0x10, 0x3e]

    /// The call whose outcome the procedure's current sequence ends with.
    private enum Waiting {
        case start((ScanFailure?) -> Void)
        case stop(StepDone)
        case resume((ScanFailure?) -> Void)
    }
    /// Everything that comes back from the loop, the controller and the channel.
    private enum Answer {
        case opened(Errno?, generation: Int)
        case powered(Errno?, generation: Int)
        case replied(Result<any HCIReply, HCICommandFailure>, generation: Int)
        case retryDue
        case event(HCIEvent)
        case lost(Errno)
    }

    public let index: UInt16
    /// Told the reports while scanning, and a broken socket.
    public weak var delegate: ScannerDelegate?
    /// Active scanning: scan requests go out, so scannable devices' scan responses are reported
    /// too (the GATT identity's name is in its scan response). Set before `start`.
    public var active = false
    /// The family scanning was enabled with; nil before `start` succeeded and after `stop`.
    public var family: ScanFamily? { procedure.family }

    private let controller: ControllerAccess
    private let exists: () throws(Errno) -> Bool
    private let openTransport: () throws(Errno) -> HCITransport
    private let loop: EventLoop
    private let log: Logger
    private var procedure = ScanProcedure()
    private var waiting: Waiting?
    private var channel: HCICommandChannel?
    /// Why the channel broke, for commands sent after it did.
    private var lost: Errno?
    private lazy var busyRetry = loop.makeTimer()
    /// The one way back in: what the loop, the controller and the channel hold does not keep
    /// the scanner alive.
    private lazy var answer: (Answer) -> Void = { [weak self] in self?.handle($0) }

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

    /// Opens the adapter, brings it up, sets scan parameters and enables scanning. `done` runs
    /// once: nil when scanning, else why not (the adapter is then closed). A `stop`, `pause`,
    /// `resume` or `close` meanwhile supersedes it: `done` is not called.
    public func start(_ done: @escaping (ScanFailure?) -> Void) {
        waiting = .start(done)
        perform(procedure.start(active: active), call: true)
    }

    /// Disables scanning in the family that was enabled (or is being enabled), with `timeoutMs`;
    /// a start in progress goes no further. `done` runs once: nil when scanning is off (or never
    /// was on), else why not.
    public func stop(timeoutMs: Int64 = Scanner.stopTimeoutMs, _ done: @escaping StepDone) {
        waiting = .stop(done)
        perform(procedure.stop(timeoutMs: timeoutMs), call: true)
    }

    /// Takes scanning off for a while, the adapter kept open (a connection of ours is being made:
    /// see `resume`); `done` as for `stop`.
    public func pause(_ done: @escaping StepDone) {
        waiting = .stop(done)
        perform(procedure.pause(), call: true)
    }

    /// Scanning on again after `pause`, in the same family with the same parameters. `done` runs
    /// once: nil when scanning, else why not. A `stop` or `close` meanwhile supersedes it.
    public func resume(_ done: @escaping (ScanFailure?) -> Void) {
        waiting = .resume(done)
        perform(procedure.resume(), call: true)
    }

    public func close() {
        waiting = nil
        perform(procedure.close())
    }

    private func handle(_ a: Answer) {
        switch a {
        case .opened(let e, let g): perform(procedure.opened(e, generation: g))
        case .powered(let e, let g): perform(procedure.powered(e, generation: g))
        case .replied(let r, let g): perform(procedure.replied(r, generation: g))
        case .retryDue: perform(procedure.retryDue())
        case .event(.advertisingReports(let r)) where family != nil: delegate?.scanner(.reports(r))
        case .event: break
        case .lost(let e):
            lost = e
            // While starting, the command in flight (or the next one) fails with `e` instead.
            if family != nil { delegate?.scanner(.lost(e)) }
        }
    }

    /// Performs the procedure's actions in order. `call`: they answer a call of the owner's,
    /// whose outcome, when already known, is told on a later turn like every other.
    private func perform(_ actions: [ScanProcedure.Action], call: Bool = false) {
        for action in actions {
            switch action {
            case .openChannel(let g): open(g)
            case .powerUp(let g): controller.setPower(up: true) { [answer] e in answer(.powered(e, generation: g)) }
            case .send(let command, let timeoutMs, let g): send(command, timeoutMs: timeoutMs, g)
            case .abandonCommands: channel?.abandonAll()
            case .scheduleRetry(let ms): busyRetry.schedule(afterMs: ms) { [answer] in answer(.retryDue) }
            case .cancelRetry: busyRetry.cancel()
            case .closeChannel:
                channel?.close()
                channel = nil
            case .debug(let m): log.debug(m)
            case .info(let m): log.info(m)
            case .started(let f):
                guard case .start(let done)? = waiting else { continue }
                tell(call) { done(f.map(ScanFailure.init)) }
            case .stopped(let f):
                guard case .stop(let done)? = waiting else { continue }
                tell(call) { done(f) }
            case .resumed(let f):
                guard case .resume(let done)? = waiting else { continue }
                tell(call) { done(f.map(ScanFailure.init)) }
            }
        }
    }

    private func tell(_ later: Bool, _ outcome: @escaping () -> Void) {
        waiting = nil
        if later { loop.post(outcome) } else { outcome() }
    }

    /// The adapter's channel; its outcome (ENODEV: no such adapter) on a later turn.
    private func open(_ g: Int) {
        var failure: Errno?
        do throws(Errno) {
            if try exists() {
                channel = HCICommandChannel(index: index, transport: try openTransport(), loop: loop, delegate: self)
                lost = nil
            } else {
                failure = .noDevice
            }
        } catch {
            failure = error
        }
        loop.post { [answer, failure] in answer(.opened(failure, generation: g)) }
    }

    /// A channel that broke fails every later command with why, on a later turn.
    private func send(_ command: any HCICommand, timeoutMs: Int64, _ g: Int) {
        guard let c = channel, !c.isClosed else {
            let e = lost ?? Errno(EBADF)
            return loop.post { [answer] in answer(.replied(.failure(.io(e)), generation: g)) }
        }
        c.send(command, timeoutMs: timeoutMs, reply: { [answer] r in answer(.replied(r, generation: g)) })
    }
}

extension Scanner: HCICommandChannelDelegate {
    public func channel(_ channel: HCICommandChannel, received event: HCIEvent) { answer(.event(event)) }
    public func channel(_ channel: HCICommandChannel, lost error: Errno) { answer(.lost(error)) }
}
