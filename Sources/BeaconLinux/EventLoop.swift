import CLinux
import Glibc

/// The daemon's one event loop: poll(2) over file descriptors, with named one-shot timers folded
/// into poll's timeout. Nothing runs between wakeups, so a healthy daemon is idle.
public final class EventLoop {
    /// Keyed by the descriptor object, not its number: a descriptor closed elsewhere is still
    /// found and removed, and a reused number never inherits an old handler.
    private var sources: [(owner: ObjectIdentifier, fd: Int32, handler: () -> Void)] = []
    private var timers: [String: (deadline: Int64, handler: () -> Void)] = [:]
    private var stopped = false
    /// How many times poll returned: wakeups, for the benchmarks.
    public private(set) var wakeups: UInt64 = 0

    public init() {}

    public func watch(_ fd: FileDescriptor, _ handler: @escaping () -> Void) {
        unwatch(fd)
        sources.append((ObjectIdentifier(fd), fd.rawValue, handler))
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

    /// One poll and the handlers it made ready; `maxWaitMs` caps the wait (tests).
    public func runOnce(maxWaitMs: Int64? = nil) {
        let now = monotonicMilliseconds()
        var timeout: Int64 = -1
        if let next = timers.values.map(\.deadline).min() { timeout = max(0, next - now) }
        if let cap = maxWaitMs { timeout = timeout < 0 ? cap : min(timeout, cap) }
        var fds = sources.map { pollfd(fd: $0.fd, events: Int16(POLLIN), revents: 0) }
        let r = poll(&fds, nfds_t(fds.count), Int32(clamping: timeout))
        wakeups &+= 1
        if r < 0 && errno != EINTR { return }
        if r > 0 {
            // Handlers may add or remove sources: look each one up again before calling it.
            // A descriptor closed behind our back would otherwise make poll return at once forever.
            let invalid = Set(fds.filter { $0.revents & Int16(POLLNVAL) != 0 }.map(\.fd))
            if !invalid.isEmpty { sources.removeAll { invalid.contains($0.fd) } }
            for p in fds where p.revents != 0 && !invalid.contains(p.fd) {
                if let s = sources.first(where: { $0.fd == p.fd }) { s.handler() }
                if stopped { return }
            }
        }
        fireDueTimers()
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
