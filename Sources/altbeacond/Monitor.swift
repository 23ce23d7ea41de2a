import BeaconKit
import BeaconLinux
import Glibc

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
    if let (code, message) = MonitorStart.refusal(config, once: once, configPath: configPath) {
        writeStandardError(message + "\n")
        return code
    }
    // No [expect] tables (issue 32): only this Pi's own beacon is published, nothing is scanned,
    // and no Bluetooth socket or capability is needed.
    let scans = !config.expectations.isEmpty
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
                                                       announced: announced, updatePaths: .fromEnvironment(), loop: loop, log: log) }
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
        Scanner.monitorScan(control: control!, index: config.adapterIndex, loop: loop, log: log, coalesceMs: MonitorStart.batchMs, events: events)
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
    return MonitorStart.exitCode(session, once: once)
}
