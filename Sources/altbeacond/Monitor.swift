import BeaconKit
import BeaconLinux
import Glibc

/// `altbeacond monitor`: the observer daemon of SPEC §10. One loop over the adapter's HCI socket
/// (a passive scan, duplicates reported), the control socket (the adapter going and coming) and
/// signalfd; BeaconKit's `BeaconTracker` decides heard and silent, and says each change once.
/// Outputs: the log, systemd's STATUS=, the Prometheus text file, MQTT (`MonitorMQTT`).
/// `--once` scans for `--timeout` seconds, prints a table and exits 0 (all heard), 2 (any
/// silent) or 3 (no adapter), for cron and Nagios.
final class MonitorSession {
    /// The scan is restarted when nothing at all was heard for this long: some controllers' scans
    /// go deaf without a word (the beacon daemon's probe re-sends its data every few seconds).
    static let deafAfterMs: Int64 = 60_000
    static let retryMs: ClosedRange<Int64> = 1000...30_000
    /// Reports are read in batches this far apart: one wakeup per batch, not per advert (the
    /// CPU at hundreds of adverts a second), and 50 ms late is nothing against `silent_after_s`.
    static let batchMs: Int64 = 50

    let config: MonitorConfig
    let configPath: String
    let node: String
    let once: Bool
    let loop: EventLoop
    let log: Logger
    let control: HCIControlSocket
    let signals: SignalDescriptor
    let notifier = SystemdNotifier()
    var scanner: Scanner?
    var tracker: BeaconTracker
    let tickTimer: LoopTimer
    let retryTimer: LoopTimer
    let deafTimer: LoopTimer
    let watchdogTimer: LoopTimer
    let onceTimer: LoopTimer
    var retryDelay = MonitorSession.retryMs.lowerBound
    var metrics: TextFileWriter?
    var mqtt: MonitorMQTT?
    let startWall = wallClockSeconds()
    var scanning = false
    /// Said once: "scanning on ..." (not at every rescan).
    var rescanned = false
    var lastScanProblem: String?
    var advertsAtLastCheck: UInt64 = 0
    var exitCode = ExitCode.ok
    var finishing = false

    init(config: MonitorConfig, configPath: String, node: String, once: Bool, loop: EventLoop, log: Logger,
         control: HCIControlSocket, signals: SignalDescriptor) {
        self.config = config; self.configPath = configPath; self.node = node; self.once = once
        self.loop = loop; self.log = log; self.control = control; self.signals = signals
        tracker = BeaconTracker(expectations: config.expectations, silentAfterMs: Int64(config.silentAfterS) * 1000, startMs: loop.now)
        tickTimer = loop.makeTimer(); retryTimer = loop.makeTimer(); deafTimer = loop.makeTimer()
        watchdogTimer = loop.makeTimer(); onceTimer = loop.makeTimer()
    }

    func run(timeoutSeconds: UInt32) -> Int32 {
        loop.watch(signals.fd) { [unowned self] in
            for s in signals.read() {
                if s == SIGINT || s == SIGTERM { finish() }
                if s == SIGHUP { log.notice("SIGHUP: the monitor reads \(configPath) at start only; restart it to apply an edit") }
            }
        }
        loop.watch(control.fd) { [unowned self] in deviceEvents() }
        if !once {
            log.info("altbeacond \(version) monitor on \(config.adapter) as node \(node): expecting \(config.expectations.map(\.name).joined(separator: ", ")); silent after \(config.silentAfterS) s")
            if let path = config.metrics.textfile {
                let w = TextFileWriter(path: path, what: "metrics text file", loop: loop, log: log)
                w.contents = { [unowned self] in
                    MonitorExport.prometheus(tracker, version: version, node: node, startWall: startWall, nowWall: wallClockSeconds())
                }
                metrics = w
                w.write()
            }
            if let settings = config.mqtt {
                let m = MonitorMQTT(settings: settings, node: node, config: config, loop: loop, log: log) { [unowned self] in tracker }
                mqtt = m
                m.start()
            }
            if let ms = notifier.watchdogIntervalMs { pingWatchdog(everyMs: ms) }
        } else {
            onceTimer.schedule(afterMs: Int64(timeoutSeconds) * 1000) { [unowned self] in finish() }
        }
        startScan()
        tick()
        loop.run()
        scanner?.close()
        return exitCode
    }

    // MARK: scanning

    private func startScan() {
        guard !finishing else { return }
        scanner?.close()
        let s = Scanner(control: control, index: config.adapterIndex, loop: loop, log: log, coalesceMs: Self.batchMs)
        scanner = s
        s.active = false
        s.onReports = { [unowned self] in received($0) }
        s.onLost = { [unowned self] e in scanLost("\(config.adapter) stopped answering (\(e))") }
        s.start { [unowned self] f in
            if let f { return scanFailed(f) }
            scanning = true
            retryDelay = Self.retryMs.lowerBound
            if lastScanProblem != nil || (!once && !rescanned) {
                rescanned = true
                log.info("scanning on \(config.adapter) (\(s.family?.rawValue ?? "?") commands, passive, duplicates reported)")
            }
            lastScanProblem = nil
            advertsAtLastCheck = tracker.advertsTotal
            deafTimer.schedule(afterMs: config.rescanS > 0 ? Int64(config.rescanS) * 1000 : Self.deafAfterMs) { [unowned self] in checkDeaf() }
            publishStatus()
            if !once { notifier.notify("READY=1\nSTATUS=\(statusText)") }
        }
    }

    private func scanFailed(_ f: ScanFailure) {
        scanning = false
        if once {
            writeStandardError("altbeacond: cannot scan on \(config.adapter): \(f)\n")
            exitCode = f == .permission ? ExitCode.permission : 3
            return finish()
        }
        if f == .permission {
            log.error("permission denied on \(config.adapter): scanning needs CAP_NET_RAW and CAP_NET_ADMIN")
            exitCode = ExitCode.permission
            return finish()
        }
        scanLost(f == .missing ? "no adapter \(config.adapter); waiting for it" : "cannot scan on \(config.adapter) (\(f))")
    }

    /// Scanning ended (adapter gone, down, failing): said once per cause, tried again with back-off.
    private func scanLost(_ why: String) {
        guard !finishing else { return }
        scanning = false
        scanner?.close()
        deafTimer.cancel()
        if lastScanProblem != why { log.warning("\(why); scanning again with back-off") }
        lastScanProblem = why
        publishStatus()
        retryTimer.schedule(afterMs: retryDelay) { [unowned self] in startScan() }
        retryDelay = min(retryDelay * 2, Self.retryMs.upperBound)
    }

    private func deviceEvents() {
        for (kind, i) in (try? control.readDeviceEvents()) ?? [] where i == config.adapterIndex {
            switch kind {
            case .down where scanning, .unregistered where scanning:
                scanLost("\(config.adapter) went \(kind == .down ? "down" : "away")")
            case .up where !scanning, .registered where !scanning:
                // Back: no need to wait for the back-off.
                retryDelay = Self.retryMs.lowerBound
                retryTimer.schedule(afterMs: 200) { [unowned self] in startScan() }
            default: break
            }
        }
    }

    /// Nothing at all heard for a minute while scanning: restart the scan (a deaf scanner is what
    /// `altbeacond_scan_adverts_total` shows; this is the cure when one is).
    private func checkDeaf() {
        guard scanning, !finishing else { return }
        if config.rescanS > 0, let scanner {
            // [monitor] rescan_s: the controller reports an advertiser once per scan: off and on.
            scanner.pause { [unowned self] _ in
                scanner.resume { [unowned self] f in
                    if let f { return scanLost("cannot scan again on \(config.adapter) (\(f))") }
                    deafTimer.schedule(afterMs: Int64(config.rescanS) * 1000) { [unowned self] in checkDeaf() }
                }
            }
            return
        }
        if tracker.advertsTotal == advertsAtLastCheck {
            log.notice("nothing heard on \(config.adapter) for \(Self.deafAfterMs / 1000) s; restarting the scan")
            scanner?.stop { [unowned self] _ in startScan() }
            return
        }
        advertsAtLastCheck = tracker.advertsTotal
        deafTimer.schedule(afterMs: Self.deafAfterMs) { [unowned self] in checkDeaf() }
    }

    private func received(_ reports: [AdvertisingReport]) {
        let now = loop.now, wall = wallClockSeconds()
        var events: [TrackerEvent] = []
        for r in reports { events += tracker.record(r, atMs: now, wallSeconds: wall) }
        handle(events)
    }

    private func tick() {
        handle(tracker.tick(nowMs: loop.now))
        guard !finishing else { return }
        if let next = tracker.nextDeadlineMs {
            tickTimer.schedule(afterMs: max(0, next - loop.now)) { [unowned self] in tick() }
        }
    }

    /// One log line per change, never one per advert; the outputs follow.
    private func handle(_ events: [TrackerEvent]) {
        guard !events.isEmpty else { return }
        for e in events {
            switch e {
            case .heard(let name, let first):
                if !once { log.notice("beacon \(name) heard\(first ? "" : " again")") }
            case .silent(let name, let last):
                if !once {
                    log.warning("beacon \(name) silent: " + (last.map { "last heard \(wallClockSeconds() - $0) s ago" } ?? "never heard since the monitor started"))
                }
            case .rebooted(let name, let uptime):
                if !once { log.notice("beacon \(name) rebooted (its TLM uptime went back to \(Int(uptime)) s)") }
            }
        }
        tick()
        publishStatus()
        mqtt?.changed()
    }

    private var statusText: String {
        let heard = tracker.states.filter(\.heard).count
        let scan = scanning ? "scanning on \(config.adapter)" : (lastScanProblem ?? "not scanning")
        return "\(scan); \(heard) of \(tracker.states.count) expected beacons heard"
            + (tracker.allHeard ? "" : " (silent: \(tracker.states.filter { !$0.heard }.map(\.name).joined(separator: ", ")))")
    }

    private func publishStatus() {
        guard !once else { return }
        notifier.notify("STATUS=\(statusText)")
        metrics?.write()
    }

    private func pingWatchdog(everyMs ms: Int64) {
        notifier.notify("WATCHDOG=1")
        watchdogTimer.schedule(afterMs: ms) { [unowned self] in pingWatchdog(everyMs: ms) }
    }

    // MARK: the end

    private func finish() {
        guard !finishing else { return }
        finishing = true
        tickTimer.cancel(); retryTimer.cancel(); deafTimer.cancel(); onceTimer.cancel()
        if once {
            writeStandardOutput(MonitorExport.table(tracker, nowMs: loop.now))
            if exitCode == ExitCode.ok { exitCode = tracker.allHeard ? 0 : 2 }
        } else {
            notifier.notify("STOPPING=1\nSTATUS=stopping")
            metrics?.write()
        }
        let bound = loop.makeTimer()
        var left = 2
        let done = { [unowned self] in
            left -= 1
            if left == 0 { bound.cancel(); loop.stop() }
        }
        // MQTT says "offline" itself (a clean DISCONNECT does not fire the will).
        if let mqtt { mqtt.stop(done) } else { done() }
        if scanning, let scanner { scanner.stop { _ in done() } } else { done() }
        bound.schedule(afterMs: 1500) { [unowned self] in loop.stop() }
    }
}

/// `altbeacond monitor [--config PATH] [--once] [--timeout S]`.
func monitorCommand(configPath: String, once: Bool, timeoutSeconds: UInt32?) -> Int32 {
    let bytes: [UInt8]
    do throws(Errno) {
        bytes = try readFile(configPath, limit: TOML.maxInputBytes + 1)
    } catch {
        writeStandardError("altbeacond: cannot read \(configPath): \(error)\n")
        return ExitCode.config
    }
    let config: MonitorConfig
    switch MonitorConfigFile.parse(bytes, path: configPath) {
    case .failure(let d):
        writeStandardError("\(d)\n")
        return ExitCode.config
    case .success(let c): config = c
    }
    if let code = requireBluetoothCapabilities(for: "the monitor") { return code == ExitCode.permission && once ? 3 : code }
    let control: HCIControlSocket, signals: SignalDescriptor
    switch openObserverSockets(signals: [SIGTERM, SIGINT, SIGHUP]) {
    case .success(let s): (control, signals) = s
    case .failure(let e): return once ? 3 : e.code
    }
    let loop = EventLoop()
    let log = Logger()
    return withExtendedLifetime(loop) {
        MonitorSession(config: config, configPath: configPath, node: config.node(hostname: hostName()), once: once, loop: loop, log: log,
                       control: control, signals: signals)
            .run(timeoutSeconds: timeoutSeconds ?? 10)
    }
}

/// The machine's name as an MQTT topic level: letters, digits, '-' and '_' (others become '_').
func hostName() -> String {
    var buf = [CChar](repeating: 0, count: 256)
    guard gethostname(&buf, buf.count - 1) == 0 else { return "altbeacond" }
    let cleaned = String(decoding: buf.prefix { $0 != 0 }.prefix(64).map { c -> UInt8 in
        let b = UInt8(bitPattern: c)
        let ok = (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5a) || (b >= 0x61 && b <= 0x7a) || b == 0x2d || b == 0x5f
        return ok ? b : 0x5f
    }, as: UTF8.self)
    return cleaned.isEmpty ? "altbeacond" : cleaned
}
