import BeaconKit

/// SPEC §5, robust loop edges: a descriptor the kernel says broke (a signalfd, an HCI socket, an
/// inotify or rfkill descriptor) is logged once by its owner and opened again after a pause, and
/// again every `afterMs` until it opens: never polled in a busy loop, never given up. One timer
/// per descriptor: a second break while one is pending replaces the pending attempt.
public final class DescriptorReopener {
    public static let defaultAfterMs: Int64 = 1000
    private let loop: EventLoop
    private let log: Logger
    public let afterMs: Int64
    private var timers: [String: LoopTimer] = [:]
    /// Failed attempts since the last break, by descriptor (for tests and the log).
    public private(set) var failures: [String: Int] = [:]

    public init(loop: EventLoop, log: Logger, afterMs: Int64 = DescriptorReopener.defaultAfterMs) {
        self.loop = loop; self.log = log; self.afterMs = afterMs
    }

    /// Runs `open` after a pause, and again every `afterMs` until it does not throw; says once
    /// when it is open again.
    public func reopen(_ what: String, _ open: @escaping () throws(Errno) -> Void) {
        let timer = timers[what] ?? loop.makeTimer()
        timers[what] = timer
        timer.schedule(afterMs: afterMs) { [weak self] in
            guard let self else { return }
            do {
                try open()
                failures[what] = nil
                log.notice("\(what) descriptor open again")
            } catch {
                failures[what, default: 0] += 1
                reopen(what, open)
            }
        }
    }

    /// True while `what` waits for its next attempt.
    public func isPending(_ what: String) -> Bool { timers[what]?.isScheduled ?? false }
}
