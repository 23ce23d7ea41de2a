import BeaconKit
import Glibc

/// Where the monitor's status goes: the log, systemd, the metrics file, MQTT. Each output is
/// handed every change and decides what it says; none asks the session anything but its status.
public protocol MonitorOutput: AnyObject {
    /// The session runs: `source` gives the status as it is now, for refreshes between changes.
    func start(_ source: MonitorStatusSource)
    /// The status changed: the scan, or the beacons (`changes`: the tracker's events, or none).
    func show(_ status: MonitorStatus, changes: [TrackerEvent])
    /// The monitor stops: the output's last word; `done` once (now or on a later turn).
    func stop(_ status: MonitorStatus, _ done: @escaping () -> Void)
}

public protocol MonitorStatusSource: AnyObject {
    var status: MonitorStatus { get }
}

/// One log line per beacon change, never one per advert.
public final class MonitorLogOutput: MonitorOutput {
    private let log: Logger
    public init(log: Logger) { self.log = log }

    public func start(_ source: MonitorStatusSource) {}

    public func show(_ status: MonitorStatus, changes: [TrackerEvent]) {
        for e in changes {
            switch e {
            case .heard(let name, let first):
                log.notice("beacon \(name) heard\(first ? "" : " again")")
            case .silent(let name, let last):
                log.warning("beacon \(name) silent: " + (last.map { "last heard \(wallClockSeconds() - $0) s ago" } ?? "never heard since the monitor started"))
            case .rebooted(let name, let uptime):
                log.notice("beacon \(name) rebooted (its TLM uptime went back to \(Int(uptime)) s)")
            }
        }
    }

    public func stop(_ status: MonitorStatus, _ done: @escaping () -> Void) { done() }
}

/// systemd: READY=1 once scanning first worked (at once when there is nothing to scan for: [mqtt]
/// alone), STATUS= on every change of its text, watchdog pings when the unit asks for them,
/// STOPPING=1 at the end.
public final class MonitorSystemdOutput: MonitorOutput {
    private let notifier: SystemdNotifier
    private let watchdogTimer: LoopTimer
    /// False with no [expect] tables: no scan will ever say ready.
    private let scans: Bool
    private var ready = false
    private var lastText = ""

    public init(notifier: SystemdNotifier, loop: EventLoop, scans: Bool = true) {
        self.notifier = notifier
        self.scans = scans
        watchdogTimer = loop.makeTimer()
    }

    public func start(_ source: MonitorStatusSource) {
        if let ms = notifier.watchdogIntervalMs { pingWatchdog(everyMs: ms) }
        if !scans {
            ready = true
            notifier.notify("READY=1\nSTATUS=no [expect] tables: publishing this machine's beacon daemon over MQTT")
        }
    }

    public func show(_ status: MonitorStatus, changes: [TrackerEvent]) {
        guard scans else { return }
        let text = status.text
        let becomesReady = !ready && status.scanning
        guard text != lastText || becomesReady else { return }
        lastText = text
        ready = ready || becomesReady
        notifier.notify((becomesReady ? "READY=1\n" : "") + "STATUS=\(text)")
    }

    public func stop(_ status: MonitorStatus, _ done: @escaping () -> Void) {
        watchdogTimer.cancel()
        notifier.notify("STOPPING=1\nSTATUS=stopping")
        done()
    }

    private func pingWatchdog(everyMs ms: Int64) {
        notifier.notify("WATCHDOG=1")
        watchdogTimer.schedule(afterMs: ms) { [weak self] in self?.pingWatchdog(everyMs: ms) }
    }
}

/// The Prometheus text file (`[metrics] textfile`): written on every change and at least every
/// minute (the writer's refresh reads the status as it is then), failures said once per cause.
public final class MonitorMetricsOutput: MonitorOutput, TextFileSource {
    private let file: TextFileWriter
    private let version: String
    /// The node label (monitor.toml edited: the new one).
    public var node: String
    private let startWall: Int64
    /// The MQTT output's figures, when there is one.
    private let mqtt: (() -> MonitorMQTTFigures?)?
    private weak var source: MonitorStatusSource?

    public init(path: String, version: String, node: String, startWall: Int64, loop: EventLoop, log: Logger,
                mqtt: (() -> MonitorMQTTFigures?)? = nil) {
        file = TextFileWriter(path: path, what: "metrics text file", loop: loop, log: log)
        self.version = version; self.node = node; self.startWall = startWall; self.mqtt = mqtt
    }

    public func start(_ source: MonitorStatusSource) {
        self.source = source
        file.write(from: self)
    }

    public func show(_ status: MonitorStatus, changes: [TrackerEvent]) { file.write(from: self) }

    public func stop(_ status: MonitorStatus, _ done: @escaping () -> Void) {
        file.write(from: self)
        file.close(remove: false)
        done()
    }

    public func textFileContents() -> String? {
        guard let tracker = source?.status.tracker else { return nil }
        return MonitorExport.prometheus(tracker, version: version, node: node, startWall: startWall, nowWall: wallClockSeconds(),
                                        mqtt: mqtt?())
    }
}
