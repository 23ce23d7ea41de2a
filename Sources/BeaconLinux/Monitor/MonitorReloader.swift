import BeaconKit

/// monitor.toml edits applied without a restart (issue 38), as the beacon daemon applies
/// config.toml's (altbeacond/Reload.swift): SIGHUP, or an inotify watch on the file's directory, debounced;
/// the file read again and validated. A refused file keeps the running configuration and is
/// said once (FILE:LINE:COL) until it changes; an accepted one goes to the session (the expected
/// beacons) and the outputs (the node, `[mqtt]`: `MonitorMQTTOutput.reconfigure`). What only a
/// restart can change (`MonitorConfig.applying`) is said, and waits for one.
public final class MonitorReloader {
    private let configPath: String
    private let loop: EventLoop
    private let log: Logger
    private let session: MonitorSession
    private let mqtt: MonitorMQTTOutput?
    private let metrics: MonitorMetricsOutput?
    private var config: MonitorConfig
    private let edits: ConfigEdits
    /// The refusal said last (its first line), not said again while the file says the same.
    private var refused: String?
    private var saidWaiting: [String] = []

    /// `hostName`: the machine's name, for the node when monitor.toml names none.
    private let machineName: () -> String

    public init(configPath: String, config: MonitorConfig, session: MonitorSession, mqtt: MonitorMQTTOutput?,
                metrics: MonitorMetricsOutput?, loop: EventLoop, log: Logger, hostName: @escaping () -> String = BeaconLinux.hostName) {
        self.configPath = configPath; self.config = config; self.session = session; self.mqtt = mqtt; self.metrics = metrics
        self.loop = loop; self.log = log; self.machineName = hostName
        edits = ConfigEdits(loop: loop)
    }

    public func watch() {
        do {
            let w = try ConfigWatcher(path: configPath)
            edits.use(w)
            edits.delegate = self
            loop.watch(w.fd) { [weak self] in
                guard let self else { return }
                if w.drain() { changed() }
            }
        } catch {
            log.warning("cannot watch \(configPath) for edits (\(error)); SIGHUP still reloads it")
        }
    }

    /// The file (or its directory) changed: read again once the edits settle.
    public func changed() { edits.changed() }

    public func reload() {
        edits.cancel()
        guard !session.isStopping else { return }
        var parsed: MonitorConfig?
        var message = ""
        do throws(Errno) {
            let bytes = try readFile(configPath, limit: TOML.maxInputBytes + 1)
            switch MonitorConfigFile.parse(bytes, path: configPath) {
            case .success(let c): parsed = c
            case .failure(let d): message = "\(d)"
            }
        } catch {
            message = "cannot read \(configPath): \(error)"
        }
        switch parsed {
        case nil:
            let first = firstLine(message)
            if !(refused?.utf8.elementsEqual(first.utf8) ?? false) {
                log.error("monitor config edit refused, keeping the running one: \(message)")
            }
            refused = first
        case let new?:
            if refused != nil {
                refused = nil
                log.notice("monitor config accepted again: \(configPath)")
            }
            let (applied, waiting) = config.applying(new)
            if waiting != saidWaiting {
                saidWaiting = waiting
                if !waiting.isEmpty {
                    log.notice("monitor config: \(waiting.joined(separator: ", ")) changed; applied at the next restart (systemctl restart altbeacond-monitor)")
                }
            }
            guard applied != config else { return }
            let oldNode = config.node(hostname: machineName())
            let node = applied.node(hostname: machineName())
            config = applied
            log.notice("monitor config applied: \(configPath): node \(node)"
                + (node != oldNode ? " (was \(oldNode))" : "") + "; expecting "
                + (applied.expectations.isEmpty ? "no beacon" : applied.expectations.map(\.name).joined(separator: ", "))
                + "; silent after \(applied.silentAfterS) s")
            session.reconfigure(applied) {
                metrics?.node = node
                if let m = applied.mqtt { mqtt?.reconfigure(settings: m, node: node, config: applied) }
            }
        }
    }
}

extension MonitorReloader: ConfigEditsDelegate {
    public func configEditsSettled() { reload() }
}
