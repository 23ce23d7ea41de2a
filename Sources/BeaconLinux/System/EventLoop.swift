import BeaconKit
import CLinux
import Glibc

/// The clock a loop schedules by: the monotonic clock, or (in tests) a virtual one that the loop
/// moves forward to the next deadline whenever nothing else is ready, so scripted scenarios with
/// second-long time-outs run in microseconds and always in the same order.
public final class LoopClock: @unchecked Sendable {
    public let isVirtual: Bool
    private var virtualNow: Int64
    public init(virtualStartingAt start: Int64? = nil) {
        isVirtual = start != nil
        virtualNow = start ?? 0
    }
    public static let monotonic = LoopClock()
    public var now: Int64 { isVirtual ? virtualNow : monotonicMilliseconds() }
    func advance(to t: Int64) { if isVirtual, t > virtualNow { virtualNow = t } }
}

/// Who hears of a failing poll() (the daemon logs it).
public protocol EventLoopObserver: AnyObject {
    /// At once, once per distinct errno until poll() works again, before the loop drops the
    /// descriptors that are no longer valid.
    func eventLoop(_ loop: EventLoop, pollFailed error: Errno)
}

/// The daemon's one event loop: poll(2) over file descriptors, with one-shot timers folded into
/// poll's timeout and work posted for the next turn. Nothing runs between wakeups, so a healthy
/// daemon is idle. Handlers must not block: controller commands complete as events
/// (HCICommandChannel), and calls that can block in the kernel run on a helper thread (BlockingCall).
public final class EventLoop {
    /// One descriptor's interests: input (kept until unwatched), and the next writable moment
    /// (one-shot: a socket is writable nearly always, so the interest lasts only until then).
    private struct Source {
        let owner: ObjectIdentifier
        let fd: Int32
        var readable: (() -> Void)?
        var writable: (() -> Void)?
        var lost: ((Errno) -> Void)?
        var events: Int16 { Int16((readable != nil ? POLLIN : 0) | (writable != nil ? POLLOUT : 0)) }
        /// After its handler runs, the descriptor is left out of poll for this long, so a stream
        /// of small packets is read in batches: one wakeup per batch instead of per packet.
        var coalesceMs: Int64 = 0
        /// Monotonic ms before which the descriptor is not polled (see `coalesceMs`).
        var quietUntil: Int64 = 0
    }
    /// Keyed by the descriptor object, not its number: a descriptor closed elsewhere is still
    /// found and removed, and a reused number never inherits an old handler.
    private var sources: [Source] = []
    fileprivate var timers: [Int: (deadline: Int64, handler: () -> Void)] = [:]
    private var nextTimerID = 0
    private var posted: [() -> Void] = []
    private var stopped = false
    public let clock: LoopClock
    /// How many times poll returned: wakeups, for the benchmarks.
    public private(set) var wakeups: UInt64 = 0
    /// The longest time one turn spent in handlers (µs), since `takeLongestTurn()`.
    public private(set) var longestTurnMicros: Int64 = 0
    public private(set) var turnsSinceReport: UInt64 = 0
    /// Told about a failing poll(); weak, as the observer owns the loop.
    public weak var observer: EventLoopObserver?
    private var lastPollError: Errno?

    public init(clock: LoopClock = .monotonic) { self.clock = clock }

    public var now: Int64 { clock.now }

    /// Watches `fd` for input (replacing an earlier input handler; a writable interest stays).
    /// `lost` is called (and the descriptor unwatched) when the kernel says the descriptor is
    /// broken: POLLNVAL, or POLLERR/POLLHUP with nothing left to read.
    /// `coalesceMs`: after each call of `handler`, `fd` waits this long before it is polled again
    /// (the kernel queues what arrives meanwhile; `handler` must read everything there is). For a
    /// scanner hearing hundreds of adverts a second, where a report read 50 ms late is as good.
    public func watch(_ fd: FileDescriptor, coalesceMs: Int64 = 0, lost: ((Errno) -> Void)? = nil, _ handler: @escaping () -> Void) {
        update(fd) { s in
            s.readable = handler; s.lost = lost; s.coalesceMs = max(0, coalesceMs)
        }
    }

    /// Runs `handler` once, the next time `fd` is writable (a non-blocking connect finished,
    /// either way; a full socket took bytes again), beside any input interest. Errors reach
    /// `handler` too (the caller reads SO_ERROR, or writes and sees the error), not `lost`.
    public func watchWritable(_ fd: FileDescriptor, _ handler: @escaping () -> Void) {
        update(fd) { $0.writable = handler }
    }

    /// Every interest in `fd`.
    public func unwatch(_ fd: FileDescriptor) {
        let id = ObjectIdentifier(fd)
        sources.removeAll { $0.owner == id }
    }

    private func update(_ fd: FileDescriptor, _ change: (inout Source) -> Void) {
        let id = ObjectIdentifier(fd)
        if let i = sources.firstIndex(where: { $0.owner == id }) {
            change(&sources[i])
        } else {
            var s = Source(owner: id, fd: fd.rawValue)
            change(&s)
            sources.append(s)
        }
    }

    /// Runs `work` on the next turn, never inside the caller: a completion posted so cannot nest
    /// in the call that started the work.
    public func post(_ work: @escaping () -> Void) { posted.append(work) }

    /// A timer of the caller's own: no names shared across the daemon.
    public func makeTimer() -> LoopTimer {
        nextTimerID += 1
        return LoopTimer(loop: self, id: nextTimerID)
    }

    fileprivate func schedule(_ id: Int, afterMs ms: Int64, _ handler: @escaping () -> Void) {
        timers[id] = (now + max(0, ms), handler)
    }

    /// Timers scheduled (tests, benchmarks).
    public var scheduledTimerCount: Int { timers.count }

    public func stop() { stopped = true }
    public var isStopped: Bool { stopped }

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

    /// One poll and the handlers it made ready; `maxWaitMs` caps the wait (tests). On a virtual
    /// clock the poll never waits: the clock jumps to the next deadline instead.
    public func runOnce(maxWaitMs: Int64? = nil) {
        let start = now
        var timeout: Int64 = -1
        if let next = timers.values.map(\.deadline).min() { timeout = max(0, next - start) }
        if let cap = maxWaitMs { timeout = timeout < 0 ? cap : min(timeout, cap) }
        var fds: [pollfd] = []
        fds.reserveCapacity(sources.count)
        for s in sources {
            var events = s.events
            if s.quietUntil > start, s.readable != nil {
                // Input resting after a batch: polled again when the rest is over.
                let rest = s.quietUntil - start
                timeout = timeout < 0 ? rest : min(timeout, rest)
                events &= ~Int16(POLLIN)
            }
            if events != 0 { fds.append(pollfd(fd: s.fd, events: events, revents: 0)) }
        }
        if !posted.isEmpty { timeout = 0 }
        let virtualWait = clock.isVirtual ? timeout : 0
        if clock.isVirtual { timeout = 0 }
        // Not through `syscall`: an EINTR ends the turn, and the next one recomputes the timeout.
        let r = poll(&fds, nfds_t(fds.count), Int32(clamping: timeout))
        wakeups &+= 1
        if r == 0, virtualWait > 0 { clock.advance(to: start + virtualWait) }
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
                dispatch(fd: p.fd, revents: p.revents)
                if stopped { return }
            }
        }
        fireDueTimers()
        runPosted()
    }

    /// One descriptor's readiness: the writable handler (one-shot), then the input handler.
    /// Handlers may add or remove sources: each is looked up again before it is called.
    private func dispatch(fd: Int32, revents: Int16) {
        guard let s = sources.first(where: { $0.fd == fd }) else { return }
        let broken = revents & Int16(POLLNVAL) != 0
            || (revents & Int16(POLLERR | POLLHUP) != 0 && revents & Int16(POLLIN | POLLOUT) == 0)
        if broken && s.lost != nil || revents & Int16(POLLNVAL) != 0 {
            // A broken descriptor would make poll return at once forever: drop it.
            sources.removeAll { $0.fd == fd }
            s.lost?(revents & Int16(POLLNVAL) != 0 ? Errno(EBADF) : Errno(EIO))
            return
        }
        // POLLERR/POLLHUP reach whichever handler there is: it sees the error when it acts.
        let failing = revents & Int16(POLLERR | POLLHUP) != 0
        if let w = s.writable, revents & Int16(POLLOUT) != 0 || failing,
           let i = sources.firstIndex(where: { $0.fd == fd && $0.owner == s.owner }) {
            sources[i].writable = nil
            if sources[i].readable == nil { sources.remove(at: i) }
            w()
            if stopped { return }
        }
        guard revents & Int16(POLLIN) != 0 || failing,
              let now = sources.first(where: { $0.fd == fd && $0.owner == s.owner }), let read = now.readable else { return }
        read()
        if now.coalesceMs > 0, let i = sources.firstIndex(where: { $0.fd == fd && $0.owner == s.owner }) {
            sources[i].quietUntil = self.now + now.coalesceMs
        }
    }

    /// poll() itself failed (EFAULT, ENOMEM, EINVAL): drop descriptors that are no longer
    /// valid, say so once, and pause briefly so a persistent failure never becomes a busy loop.
    private func pollFailed(_ e: Errno) {
        if lastPollError != e { observer?.eventLoop(self, pollFailed: e) }
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
        let t = now
        guard timers.values.contains(where: { $0.deadline <= t }) else { return }
        let due = timers.filter { $0.value.deadline <= t }.sorted { ($0.value.deadline, $0.key) < ($1.value.deadline, $1.key) }
        for (id, timer) in due {
            // A handler may have cancelled or rescheduled it.
            guard let current = timers[id], current.deadline == timer.deadline else { continue }
            timers[id] = nil
            timer.handler()
            if stopped { return }
        }
    }

    /// What was posted before this turn; work posted now waits for the next one.
    private func runPosted() {
        guard !posted.isEmpty else { return }
        let work = posted
        posted.removeAll()
        for (i, w) in work.enumerated() {
            w()
            if stopped {
                posted = Array(work[(i + 1)...]) + posted
                return
            }
        }
    }
}

/// One timer of one owner (an adapter session's probe, a LED's blink): scheduling it again
/// replaces it; it is cancelled when its owner lets it go.
public final class LoopTimer {
    /// Weak: an owner may outlive its loop (both are torn down at exit in any order).
    private weak var loop: EventLoop?
    private let id: Int
    fileprivate init(loop: EventLoop, id: Int) { self.loop = loop; self.id = id }
    deinit { loop?.timers[id] = nil }

    /// Fires `handler` once after `ms` (replacing any earlier schedule).
    public func schedule(afterMs ms: Int64, _ handler: @escaping () -> Void) { loop?.schedule(id, afterMs: ms, handler) }
    public func cancel() { loop?.timers[id] = nil }
    public var isScheduled: Bool { loop?.timers[id] != nil }
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
