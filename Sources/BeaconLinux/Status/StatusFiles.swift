import BeaconKit
import CLinux
import Glibc

/// The beacon's health written to a file (SPEC §10): the JSON status file `altbeacond health`
/// reads, or the Prometheus text file node_exporter serves. Written atomically (a temporary file
/// in the same directory, renamed over the old one: a reader never sees half a file) on every
/// change and at least every minute, so a reader can tell a live daemon from a dead one by the
/// file's own timestamp. A write that fails (full disk, no permission) is said once per cause
/// and tried again with back-off; the beacon never waits for it.
public final class StatusFileOutput: StatusOutput, TextFileSource {
    private let file: TextFileWriter
    private let version: String
    private let startTime: Int64
    private let render: (StatusExport) -> String
    private var last: DaemonStatus?
    public var path: String { file.path }

    /// `what` names the file in log lines ("status file", "metrics text file").
    public init(path: String, what: String, loop: EventLoop, log: Logger, version: String, startTime: Int64,
                render: @escaping (StatusExport) -> String) {
        file = TextFileWriter(path: path, what: what, loop: loop, log: log)
        self.version = version; self.startTime = startTime; self.render = render
    }

    public func show(_ status: DaemonStatus) {
        last = status
        file.write(from: self)
    }

    public func textFileContents() -> String? {
        last.map { render(StatusExport(status: $0, version: version, pid: getpid(), startTime: startTime, updated: wallClockSeconds())) }
    }

    /// Stops refreshing; with `remove`, the file goes too (the status file: no daemon, no file).
    public func close(remove: Bool) { file.close(remove: remove) }
}

/// What a `TextFileWriter` writes: asked at every write, the refreshes and retries too, so that
/// the file says what is true then (its `updated` time).
public protocol TextFileSource: AnyObject {
    /// The file's text now; nil: nothing to write yet.
    func textFileContents() -> String?
}

/// A file rewritten atomically from its source on demand (`write(from:)`) and at least every
/// `refreshMs`; a failed write is said once per cause and tried again with back-off (2 s to 1 min).
public final class TextFileWriter {
    public static let refreshMs: Int64 = 60_000
    static let retryMs: ClosedRange<Int64> = 2000...60_000

    public let path: String
    private let what: String
    private let log: Logger
    private let timer: LoopTimer
    private var lastProblem: Errno?
    private var retryDelay = TextFileWriter.retryMs.lowerBound
    /// The last `write(from:)`'s source, asked again at each refresh and retry.
    private weak var source: TextFileSource?

    public init(path: String, what: String, loop: EventLoop, log: Logger) {
        self.path = path; self.what = what; self.log = log
        timer = loop.makeTimer()
    }

    public func close(remove: Bool) {
        timer.cancel()
        if remove { _ = unlink(path) }
    }

    public func write(from source: TextFileSource) {
        self.source = source
        write()
    }

    private func write() {
        guard let text = source?.textFileContents() else { return }
        do throws(Errno) {
            try replaceFile(path, with: Array(text.utf8), mode: 0o644, durability: .running)
            if lastProblem != nil { log.notice("\(what) \(path) written again") }
            lastProblem = nil
            retryDelay = Self.retryMs.lowerBound
            timer.schedule(afterMs: Self.refreshMs) { [weak self] in self?.write() }
        } catch {
            if lastProblem != error {
                log.warning("cannot write the \(what) \(path) (\(error)); going on; trying again with back-off")
            }
            lastProblem = error
            timer.schedule(afterMs: retryDelay) { [weak self] in self?.write() }
            retryDelay = min(retryDelay * 2, Self.retryMs.upperBound)
        }
    }
}

/// Unix time in seconds (the wall clock: what Prometheus and people read).
public func wallClockSeconds() -> Int64 {
    var ts = timespec()
    clock_gettime(CLOCK_REALTIME, &ts)
    return Int64(ts.tv_sec)
}

/// The daemon's runtime directory: systemd's $RUNTIME_DIRECTORY (the first, if several), else
/// /run/altbeacond, made if missing (a daemon started by hand as root).
public func runtimeDirectory() -> String {
    if let d = environment("RUNTIME_DIRECTORY")?.split(separator: ":").first, !d.isEmpty { return String(d) }
    _ = mkdir("/run/altbeacond", 0o755)
    return "/run/altbeacond"
}
