import BeaconKit
import Glibc

/// Whoever uses a channel hears what is not a command's completion here.
public protocol HCICommandChannelDelegate: AnyObject {
    /// Each command as written, at once (the beacon tells ours from others' on the monitor).
    func channel(_ channel: HCICommandChannel, sent opcode: HCIOpcode, _ parameters: [UInt8])
    /// Every event that is not a command's completion: Hardware Error, LE Meta (advertising reports).
    func channel(_ channel: HCICommandChannel, received event: HCIEvent)
    /// The transport broke (the controller went away under it): every pending command has failed.
    func channel(_ channel: HCICommandChannel, lost error: Errno)
}

extension HCICommandChannelDelegate {
    public func channel(_ channel: HCICommandChannel, sent opcode: HCIOpcode, _ parameters: [UInt8]) {}
}

/// The one command path to a controller, for the beacon and `scan` alike: one command in flight at
/// a time (as BlueZ's shared/hci.c does), the rest queued; each has a deadline kept as a loop
/// timer, and completes when its Command Complete (or a failing Command Status) is read off the
/// transport. Completions always run on a later loop turn than the `send` that started them, so a
/// caller never re-enters itself; a controller that never answers costs a timer, never a blocked loop.
public final class HCICommandChannel {
    public typealias Completion = (Result<[UInt8], HCICommandFailure>) -> Void
    private struct Pending {
        let opcode: HCIOpcode
        let packet: [UInt8]
        let parameters: [UInt8]
        let timeoutMs: Int64
        let done: Completion
    }

    public let index: UInt16
    private let transport: HCITransport
    private let loop: EventLoop
    private let deadline: LoopTimer
    private var queue: [Pending] = []
    private var inFlight: Pending?
    public private(set) var isClosed = false
    public weak var delegate: HCICommandChannelDelegate?

    public init(index: UInt16, transport: HCITransport, loop: EventLoop, delegate: HCICommandChannelDelegate?) {
        self.index = index
        self.transport = transport
        self.loop = loop
        self.delegate = delegate
        deadline = loop.makeTimer()
        transport.start(onPacket: { [weak self] p in self?.received(p) }, onLost: { [weak self] e in self?.broken(e) })
    }

    public var isIdle: Bool { inFlight == nil && queue.isEmpty }

    /// Queues `command`; `done` runs on a later loop turn with its reply, decoded as the command's
    /// own `Reply` (`decodedReply`: a short one is a failure), or why it failed. Never called after
    /// `close()` or `abandonAll()`. What the runners use.
    public func send(_ command: any HCICommand, timeoutMs: Int64, reply done: @escaping (Result<any HCIReply, HCICommandFailure>) -> Void) {
        sendRaw(command, timeoutMs: timeoutMs) { r in done(decodedReply(of: command, r)) }
    }

    /// `send` with the return parameters as bytes (status success): the channel's own tests.
    func sendRaw(_ command: any HCICommand, timeoutMs: Int64, _ done: @escaping Completion) {
        guard !isClosed else { return }
        queue.append(Pending(opcode: type(of: command).opcode, packet: command.packet, parameters: command.parameters,
                             timeoutMs: timeoutMs, done: done))
        pump()
    }

    /// Forgets everything queued or in flight without completing it: a newer sequence (a re-arm
    /// after a deadline, a stop) goes to the kernel now instead of behind a command that a hung
    /// controller never answers. A late answer to a forgotten command is ignored.
    public func abandonAll() {
        queue.removeAll()
        inFlight = nil
        deadline.cancel()
    }

    public func close() {
        guard !isClosed else { return }
        isClosed = true
        abandonAll()
        transport.close()
    }

    private func pump() {
        while inFlight == nil, !isClosed, !queue.isEmpty {
            let p = queue.removeFirst()
            do {
                try transport.write(p.packet)
            } catch {
                loop.post { p.done(.failure(.io(error))) }
                continue
            }
            delegate?.channel(self, sent: p.opcode, p.parameters)
            inFlight = p
            deadline.schedule(afterMs: p.timeoutMs) { [weak self] in
                guard let self, let p = inFlight else { return }
                finish(.failure(.timeout(p.opcode)))
            }
        }
    }

    private func finish(_ r: Result<[UInt8], HCICommandFailure>) {
        guard let p = inFlight else { return }
        inFlight = nil
        deadline.cancel()
        p.done(r)
        pump()
    }

    /// One event packet, already on a turn of its own (the transport read it).
    private func received(_ packet: ArraySlice<UInt8>) {
        guard !isClosed, case .success(let event) = HCIEvent.decode(packet) else { return }
        switch event {
        case .commandComplete(let op, let rp) where op == inFlight?.opcode:
            let st = HCIStatus(rawValue: rp.first ?? 0xff)
            finish(st == .success ? .success(rp) : .failure(.status(op, st)))
        case .commandStatus(let op, let st) where op == inFlight?.opcode && st != .success:
            finish(.failure(.status(op, st)))
        case .commandComplete, .commandStatus:
            break   // a late answer to a command that timed out, or a pending Command Status
        default:
            delegate?.channel(self, received: event)
        }
    }

    private func broken(_ e: Errno) {
        guard !isClosed else { return }
        let pending = (inFlight.map { [$0] } ?? []) + queue
        close()
        for p in pending { loop.post { p.done(.failure(.io(e))) } }
        delegate?.channel(self, lost: e)
    }
}

extension Result where Success == [UInt8], Failure == HCICommandFailure {
    /// nil on success or on a status in `tolerating` (e.g. Command Disallowed to "disable" when
    /// already disabled: not a failure there), the failure otherwise; both logged at debug level.
    public func failure(tolerating: [HCIStatus], log: Logger) -> HCICommandFailure? {
        switch self {
        case .success: return nil
        case .failure(.status(let op, let st)) where tolerating.contains(st):
            log.debug("\(op): \(st), not a failure here")
            return nil
        case .failure(let f):
            log.debug("\(f)")
            return f
        }
    }
}
