import BeaconKit
import BeaconLinux
import Glibc

/// Reports are read in batches this far apart: one wakeup per batch, not per advert (the CPU at
/// hundreds of adverts a second), and 50 ms late is nothing against `silent_after_s`.
let monitorBatchMs: Int64 = 50

/// `altbeacond monitor`: the observer daemon of SPEC §10 (BeaconLinux's `MonitorSession`, its
/// outputs: the log, systemd, the Prometheus text file, MQTT). One loop over the adapter's HCI
/// socket, the control socket (the adapter going and coming) and signalfd. `--once` scans for
/// `--timeout` seconds, prints a table and exits 0 (all heard), 2 (any silent) or 3 (no
/// adapter), for cron and Nagios.
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
    // A password file others can read is refused at start, plainly (as ssh refuses such a key).
    if !once, let file = config.mqtt?.passwordFile, case .failure(let e) = readPasswordFile(file), e.refused {
        writeStandardError("altbeacond: \(e.text)\n")
        return ExitCode.config
    }
    // The TLS files likewise, and any that cannot be used at all: a CA file that does not parse
    // is a mistake in the setup, not a broker that is down.
    if !once, let tls = config.mqtt?.tls, case .failure(let e) = TLSClientConfig.load(tls) {
        writeStandardError("altbeacond: \(e.text)\n")
        return ExitCode.config
    }
    // No [expect] tables (issue 32): only this Pi's own beacon is published, nothing is scanned,
    // and no Bluetooth socket or capability is needed.
    let scans = !config.expectations.isEmpty
    if once && !scans {
        writeStandardError("altbeacond: \(configPath) expects no beacon: --once needs [expect.NAME] tables to scan for\n")
        return ExitCode.config
    }
    if scans, let code = requireBluetoothCapabilities(for: "the monitor") { return code == ExitCode.permission && once ? 3 : code }
    var control: HCIControlSocket?
    let signals: SignalDescriptor
    if scans {
        switch openObserverSockets(signals: [SIGTERM, SIGINT, SIGHUP]) {
        case .success(let s): (control, signals) = (s.0, s.1)
        case .failure(let e): return once ? 3 : e.code
        }
    } else {
        do throws(Errno) {
            signals = try SignalDescriptor(signals: [SIGTERM, SIGINT, SIGHUP])
        } catch {
            return reportSocketFailure(error)
        }
    }
    let loop = EventLoop()
    let log = Logger()
    let node = config.node(hostname: hostName())
    var outputs: [MonitorOutput] = []
    var mqttOutput: MonitorMQTTOutput?
    var metricsOutput: MonitorMetricsOutput?
    if !once {
        if scans {
            log.info("altbeacond \(version) monitor on \(config.adapter) as node \(node): expecting \(config.expectations.map(\.name).joined(separator: ", ")); silent after \(config.silentAfterS) s")
        } else {
            log.info("altbeacond \(version) monitor as node \(node): no [expect] tables, so no scan; publishing this machine's beacon daemon only")
        }
        outputs = [MonitorLogOutput(log: log), MonitorSystemdOutput(notifier: SystemdNotifier(), loop: loop, scans: scans)]
        // What was announced, remembered in the state directory (issue 38), as the beacon
        // daemon's last good config: the unit's StateDirectory=, else /var/lib/altbeacond.
        let announced = StateFile(directory: LastGoodConfig.directory(environment: environment("STATE_DIRECTORY")),
                                  name: MonitorAnnounced.fileName(configPath: configPath))
        let mqtt = config.mqtt.map { MonitorMQTTOutput(settings: $0, node: node, config: config, healthPath: defaultStatusPath(), version: version,
                                                       announced: announced, updatePaths: firmwareUpdatePaths(), loop: loop, log: log) }
        mqttOutput = mqtt
        if let path = config.metrics.textfile {
            let figures: (() -> MonitorMQTTFigures?)? = mqtt.map { m in { [weak m] in m?.figures } }
            let m = MonitorMetricsOutput(path: path, version: version, node: node, startWall: wallClockSeconds(), loop: loop, log: log,
                                         mqtt: figures)
            metricsOutput = m
            outputs.append(m)
        }
        if let mqtt { outputs.append(mqtt) }
    }
    let session = MonitorSession(config: config, once: once, loop: loop, log: log, outputs: outputs) { events in
        // Only called with expectations, when the control socket is open.
        Scanner.monitorScan(control: control!, index: config.adapterIndex, loop: loop, log: log, coalesceMs: monitorBatchMs, events: events)
    }
    // monitor.toml edits apply without a restart (issue 38): SIGHUP, or the file's inotify watch.
    let reloader = MonitorReloader(configPath: configPath, config: config, session: session, mqtt: mqttOutput, metrics: metricsOutput,
                                   loop: loop, log: log)
    if !once { reloader.watch() }
    loop.watch(signals.fd) {
        for s in signals.read() {
            if s == SIGINT || s == SIGTERM { session.stop() }
            if s == SIGHUP && !once {
                log.notice("SIGHUP: reading \(configPath) again")
                reloader.reload()
            }
        }
    }
    if let control {
        loop.watch(control.fd) {
            for (kind, i) in (try? control.readDeviceEvents()) ?? [] where i == config.adapterIndex { session.deviceEvent(kind) }
        }
    }
    let onceTimer = loop.makeTimer()
    if once { onceTimer.schedule(afterMs: Int64(timeoutSeconds ?? 10) * 1000) { session.stop() } }
    session.start()
    loop.run()
    session.close()
    if once { writeStandardOutput(MonitorExport.table(session.tracker, now: loop.now)) }
    switch session.fatalFailure {
    case .permission?: return ExitCode.permission
    case _?: return 3
    case nil: return once && !session.tracker.allHeard ? 2 : ExitCode.ok
    }
}


/// Where the card's updater and image are (issue 39): /run/altbeacon-update and
/// /usr/lib/altbeacon-image, or, for the live Home Assistant check and the testbed,
/// ALTBEACOND_UPDATE_DIR and ALTBEACOND_IMAGE_MARKER.
func firmwareUpdatePaths() -> FirmwareUpdatePaths {
    var p = FirmwareUpdatePaths.standard
    if let d = environment("ALTBEACOND_UPDATE_DIR"), !d.isEmpty { p.directory = d }
    if let m = environment("ALTBEACOND_IMAGE_MARKER"), !m.isEmpty { p.imageMarker = m }
    return p
}
