import CLinux
import Glibc

/// The daemon's one event loop: poll(2) over file descriptors, with named one-shot timers folded
/// into poll's timeout. Nothing runs between wakeups, so a healthy daemon is idle. Handlers must
/// not block: controller commands complete as events (HCICommandChannel), and calls that can
/// block in the kernel run on a helper thread (BlockingCall).
public final class EventLoop {
    private struct Source {
        let owner: ObjectIdentifier
        let fd: Int32
        let handler: () -> Void
        let lost: ((Errno) -> Void)?
    }
    /// Keyed by the descriptor object, not its number: a descriptor closed elsewhere is still
    /// found and removed, and a reused number never inherits an old handler.
    private var sources: [Source] = []
    private var timers: [String: (deadline: Int64, handler: () -> Void)] = [:]
    private var stopped = false
    /// How many times poll returned: wakeups, for the benchmarks.
    public private(set) var wakeups: UInt64 = 0
    /// The longest time one turn spent in handlers (µs), since `takeLongestTurn()`.
    public private(set) var longestTurnMicros: Int64 = 0
    public private(set) var turnsSinceReport: UInt64 = 0
    /// Told about a failing poll() (once per distinct errno until it works again).
    public var onPollError: ((Errno) -> Void)?
    private var lastPollError: Errno?

    public init() {}

    /// Watches `fd` for input. `lost` is called (and the descriptor unwatched) when the kernel
    /// says the descriptor is broken: POLLNVAL, or POLLERR/POLLHUP with nothing left to read.
    public func watch(_ fd: FileDescriptor, lost: ((Errno) -> Void)? = nil, _ handler: @escaping () -> Void) {
        unwatch(fd)
        sources.append(Source(owner: ObjectIdentifier(fd), fd: fd.rawValue, handler: handler, lost: lost))
    }

    public func unwatch(_ fd: FileDescriptor) {
        let id = ObjectIdentifier(fd)
        sources.removeAll { $0.owner == id }
    }

    /// Schedules (or reschedules) the timer `name` to fire once after `ms`.
    public func schedule(_ name: String, afterMs ms: Int64, _ handler: @escaping () -> Void) {
        timers[name] = (monotonicMilliseconds() + max(0, ms), handler)
    }

    public func cancel(_ name: String) { timers[name] = nil }
    public func isScheduled(_ name: String) -> Bool { timers[name] != nil }
    public var timerNames: [String] { Array(timers.keys) }

    public func stop() { stopped = true }

    /// Runs until `stop()`.
    public func run() {
        stopped = false
        while !stopped { runOnce() }
    }

    /// The longest turn (µs) and the turns since the last call; starts a new measurement.
    public func takeLongestTurn() -> (micros: Int64, turns: UInt64) {
        defer { longestTurnMicros = 0; turnsSinceReport = 0 }
        return (longestTurnMicros, turnsSinceReport)
    }

    /// One poll and the handlers it made ready; `maxWaitMs` caps the wait (tests).
    public func runOnce(maxWaitMs: Int64? = nil) {
        let now = monotonicMilliseconds()
        var timeout: Int64 = -1
        if let next = timers.values.map(\.deadline).min() { timeout = max(0, next - now) }
        if let cap = maxWaitMs { timeout = timeout < 0 ? cap : min(timeout, cap) }
        var fds = sources.map { pollfd(fd: $0.fd, events: Int16(POLLIN), revents: 0) }
        let r = poll(&fds, nfds_t(fds.count), Int32(clamping: timeout))
        wakeups &+= 1
        let busyFrom = monotonicMicroseconds()
        defer { noteTurn(since: busyFrom) }
        if r < 0 {
            let e = Errno.current
            if e != .interrupted { pollFailed(e) }
            return
        }
        lastPollError = nil
        if r > 0 {
            for p in fds where p.revents != 0 {
                // Handlers may add or remove sources: look each one up again before calling it.
                guard let s = sources.first(where: { $0.fd == p.fd }) else { continue }
                let broken = p.revents & Int16(POLLNVAL) != 0
                    || (p.revents & Int16(POLLERR | POLLHUP) != 0 && p.revents & Int16(POLLIN) == 0)
                if broken && s.lost != nil || p.revents & Int16(POLLNVAL) != 0 {
                    // A broken descriptor would make poll return at once forever: drop it.
                    sources.removeAll { $0.fd == p.fd }
                    s.lost?(p.revents & Int16(POLLNVAL) != 0 ? Errno(EBADF) : Errno(EIO))
                } else {
                    s.handler()
                }
                if stopped { return }
            }
        }
        fireDueTimers()
    }

    /// poll() itself failed (EFAULT, ENOMEM, EINVAL): drop descriptors that are no longer
    /// valid, say so once, and pause briefly so a persistent failure never becomes a busy loop.
    private func pollFailed(_ e: Errno) {
        if lastPollError != e { onPollError?(e) }
        lastPollError = e
        for s in sources where fcntl(s.fd, F_GETFD) < 0 {
            sources.removeAll { $0.fd == s.fd }
            s.lost?(Errno(EBADF))
        }
        var ts = timespec(tv_sec: 0, tv_nsec: 100_000_000)
        nanosleep(&ts, nil)
        fireDueTimers()
    }

    private func noteTurn(since from: Int64) {
        let busy = monotonicMicroseconds() - from
        if busy > longestTurnMicros { longestTurnMicros = busy }
        turnsSinceReport &+= 1
    }

    private func fireDueTimers() {
        let now = monotonicMilliseconds()
        let due = timers.filter { $0.value.deadline <= now }.sorted { $0.value.deadline < $1.value.deadline }
        for (name, t) in due {
            // A handler may have cancelled or rescheduled it.
            guard let current = timers[name], current.deadline == t.deadline else { continue }
            timers[name] = nil
            t.handler()
            if stopped { return }
        }
    }
}

/// Blocks `signals` for the whole process: done first thing at start, so a signal that arrives
/// before the loop runs waits in the signalfd instead of killing the daemon half set up.
public func blockSignals(_ signals: [Int32]) {
    var set = sigset_t()
    sigemptyset(&set)
    for s in signals { sigaddset(&set, s) }
    sigprocmask(SIG_BLOCK, &set, nil)
}

/// Termination and reload signals as a descriptor (signalfd), so they are events like any other.
public final class SignalDescriptor {
    public let fd: FileDescriptor

    public init(signals: [Int32]) throws(Errno) {
        var set = sigset_t()
        sigemptyset(&set)
        for s in signals { sigaddset(&set, s) }
        _ = try syscall { sigprocmask(SIG_BLOCK, &set, nil) }
        fd = FileDescriptor(try syscall { signalfd(-1, &set, Int32(SFD_NONBLOCK | SFD_CLOEXEC)) })
        signal(SIGPIPE, SIG_IGN)
    }

    /// Signal numbers received since the last call.
    public func read() -> [Int32] {
        var out: [Int32] = []
        var buf = [UInt8](repeating: 0, count: MemoryLayout<signalfd_siginfo>.size)
        while let n = try? fd.read(into: &buf), n == buf.count {
            let signo = buf.withUnsafeBytes { $0.load(as: UInt32.self) }
            out.append(Int32(bitPattern: signo))
        }
        return out
    }
}
