import BeaconKit
import CBlueZ
import Glibc

/// Why a management command did not complete.
public enum ManagementFailure: Error, Equatable, Sendable, CustomStringConvertible {
    case io(Errno)
    case timeout(ManagementOpcode)
    case status(ManagementOpcode, ManagementStatus)

    public var description: String {
        switch self {
        case .io(let e): "\(e)"
        case .timeout(let op): "mgmt command 0x\(String(op.rawValue, radix: 16)) timed out"
        case .status(_, let st): "\(st)"
        }
    }
}

/// The kernel's management interface (an HCI_CHANNEL_CONTROL socket bound to no device) on the
/// loop, like `HCICommandChannel` for HCI: non-blocking, one command in flight, each with a
/// deadline kept as a loop timer, completions on a later loop turn than the `send` that started
/// them. The socket is opened at the first command and again after it broke.
public final class ManagementSocket {
    public typealias Completion = (Result<[UInt8], ManagementFailure>) -> Void
    private struct Pending {
        let command: ManagementCommand
        let timeoutMs: Int64
        let done: Completion
    }

    private let loop: EventLoop
    private var fd: FileDescriptor?
    private let deadline: LoopTimer
    private var queue: [Pending] = []
    private var inFlight: Pending?

    public init(loop: EventLoop) {
        self.loop = loop
        deadline = loop.makeTimer()
    }

    deinit { close() }

    /// Queues `command`; `done` with its return parameters, or why it failed.
    public func send(_ command: ManagementCommand, timeoutMs: Int64 = 3000, _ done: @escaping Completion) {
        queue.append(Pending(command: command, timeoutMs: timeoutMs, done: done))
        if inFlight == nil { next() }
    }

    public func close() {
        deadline.cancel()
        if let fd {
            loop.unwatch(fd)
            fd.close()
        }
        fd = nil
    }

    private func open() throws(Errno) -> FileDescriptor {
        if let fd, fd.isOpen { return fd }
        let s = try openHCISocket(device: UInt16(HCI_DEV_NONE), channel: UInt16(HCI_CHANNEL_CONTROL))
        fd = s
        loop.watch(s, lost: { [weak self] e in self?.broke(e) }) { [weak self] in self?.readable() }
        return s
    }

    private func next() {
        guard inFlight == nil, !queue.isEmpty else { return }
        let p = queue.removeFirst()
        do throws(Errno) {
            _ = try open().write(p.command.bytes)
        } catch {
            finish(p, .failure(.io(error)))
            return next()
        }
        inFlight = p
        deadline.schedule(afterMs: p.timeoutMs) { [weak self] in
            guard let self, let p = inFlight else { return }
            inFlight = nil
            finish(p, .failure(.timeout(p.command.opcode)))
            next()
        }
    }

    private func finish(_ p: Pending, _ r: Result<[UInt8], ManagementFailure>) {
        loop.post { p.done(r) }
    }

    private func readable() {
        guard let fd else { return }
        var buf = [UInt8](repeating: 0, count: 1024)
        while fd.isOpen {
            let n: Int?
            do throws(Errno) {
                n = try readUnlessWouldBlock(fd, &buf)
            } catch {
                return broke(error)
            }
            guard let n, n > 0 else { return }
            guard case .success(let e) = ManagementEvent.decode(buf[0..<n]) else { continue }
            received(e)
        }
    }

    private func received(_ e: ManagementEvent) {
        let reply: (op: UInt16, index: UInt16, status: ManagementStatus, params: [UInt8])
        switch e {
        case .commandComplete(let op, let index, let st, let params): reply = (op, index, st, params)
        case .commandStatus(let op, let index, let st): reply = (op, index, st, [])
        // Events that are no reply (Unconfigured Index Added, New Configuration Options…): the
        // address repair learns what it needs from its commands' replies and the HCI events.
        default: return
        }
        // Replies to other sockets' commands never reach this one; a stale reply to a command
        // that already timed out does not match the one in flight.
        guard let p = inFlight, p.command.opcode.rawValue == reply.op, p.command.index == reply.index else { return }
        inFlight = nil
        deadline.cancel()
        finish(p, reply.status == .success ? .success(reply.params) : .failure(.status(p.command.opcode, reply.status)))
        next()
    }

    private func broke(_ e: Errno) {
        close()
        let all = (inFlight.map { [$0] } ?? []) + queue
        inFlight = nil
        queue = []
        for p in all { finish(p, .failure(.io(e))) }
    }
}
