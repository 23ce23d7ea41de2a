import BeaconKit
import Glibc

/// Commands to one controller without ever waiting for it: one command in flight at a time (as
/// BlueZ's shared/hci.c does), the rest queued; each has a deadline kept as a loop timer, and
/// completes when its Command Complete (or a failing Command Status) is read off the socket, which
/// the loop watches. A controller that never answers costs timers, never a blocked loop.
public final class HCICommandChannel {
    public typealias Completion = (Result<[UInt8], HCICommandFailure>) -> Void
    private struct Pending {
        let opcode: HCIOpcode
        let packet: [UInt8]
        let parameters: [UInt8]
        let timeoutMs: Int64
        let done: Completion
    }

    public let socket: HCIDeviceSocket
    public var index: UInt16 { socket.index }
    private let loop: EventLoop
    private let timerName: String
    private var queue: [Pending] = []
    private var inFlight: Pending?
    private var closed = false
    /// Called with each command as written, so the monitor can tell ours from others'.
    public var onSend: ((HCIOpcode, [UInt8]) -> Void)?
    /// A Hardware Error event from the controller.
    public var onHardwareError: ((UInt8) -> Void)?
    /// The socket broke (the controller went away under it): every pending command has failed.
    public var onLost: ((Errno) -> Void)?

    public init(index: UInt16, loop: EventLoop) throws(Errno) {
        socket = try HCIDeviceSocket(index: index)
        self.loop = loop
        timerName = "hci\(index)-command"
        loop.watch(socket.fd, lost: { [unowned self] e in broken(e) }) { [unowned self] in readable() }
    }

    public var isIdle: Bool { inFlight == nil && queue.isEmpty }

    /// Queues `command`; `done` runs on the loop with its return parameters (status success) or
    /// why it failed. Never called after `close()`.
    public func send(_ command: any HCICommand, timeoutMs: Int64, _ done: @escaping Completion) {
        guard !closed else { return }
        queue.append(Pending(opcode: type(of: command).opcode, packet: command.packet, parameters: command.parameters,
                             timeoutMs: timeoutMs, done: done))
        pump()
    }

    /// Drops the queued commands without completing them (a newer sequence replaces them); the
    /// one in flight still completes or times out.
    public func dropQueued() { queue.removeAll() }

    /// For stopping: forget everything queued or in flight (without completing it), so `command`
    /// goes to the kernel now instead of behind a command a hung controller never answers.
    public func sendNow(_ command: any HCICommand, timeoutMs: Int64, _ done: @escaping Completion) {
        queue.removeAll()
        inFlight = nil
        loop.cancel(timerName)
        send(command, timeoutMs: timeoutMs, done)
    }

    public func close() {
        closed = true
        queue.removeAll()
        inFlight = nil
        loop.cancel(timerName)
        loop.unwatch(socket.fd)
        socket.close()
    }

    private func pump() {
        while inFlight == nil, !closed, !queue.isEmpty {
            let p = queue.removeFirst()
            do {
                _ = try socket.fd.write(p.packet)
            } catch {
                p.done(.failure(.io(error)))
                continue
            }
            onSend?(p.opcode, p.parameters)
            inFlight = p
            loop.schedule(timerName, afterMs: p.timeoutMs) { [unowned self] in timedOut() }
        }
    }

    private func finish(_ r: Result<[UInt8], HCICommandFailure>) {
        guard let p = inFlight else { return }
        inFlight = nil
        loop.cancel(timerName)
        p.done(r)
        pump()
    }

    private func timedOut() {
        guard let p = inFlight else { return }
        finish(.failure(.timeout(p.opcode)))
    }

    /// Reads every event queued on the socket. Would-block ends the read; any other error means
    /// the controller is gone.
    private func readable() {
        var buf = [UInt8](repeating: 0, count: 300)
        while !closed {
            let n: Int
            do {
                n = try socket.fd.read(into: &buf)
            } catch let e where e == .wouldBlock {
                return
            } catch {
                broken(error)
                return
            }
            if n == 0 { broken(.brokenPipe); return }
            guard case .success(let event) = HCIEvent.decode(buf[0..<n]) else { continue }
            switch event {
            case .commandComplete(let op, let rp) where op == inFlight?.opcode:
                let st = HCIStatus(rawValue: rp.first ?? 0xff)
                finish(st == .success ? .success(rp) : .failure(.status(op, st)))
            case .commandStatus(let op, let st) where op == inFlight?.opcode && st != .success:
                finish(.failure(.status(op, st)))
            case .hardwareError(let code):
                onHardwareError?(code)
            default:
                break   // a late answer to a command that timed out, or a pending Command Status
            }
        }
    }

    private func broken(_ e: Errno) {
        guard !closed else { return }
        let pending = (inFlight.map { [$0] } ?? []) + queue
        close()
        for p in pending { p.done(.failure(.io(e))) }
        onLost?(e)
    }
}
