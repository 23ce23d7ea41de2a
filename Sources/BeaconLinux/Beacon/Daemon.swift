import BeaconKit
import Glibc

/// `altbeacond run` (issue 50: in BeaconLinux, no longer the executable's): wires the kernel's event sources into one loop, routes each adapter's events
/// to its `AdapterSession`, and shows one `DaemonStatus` on every output. Only the first config
/// read and missing permissions end it (and SPEC §5's last escalation step, which restarts it).
///
/// Size (about 370 lines over 4 files, 19 stored fields): the process's root: the descriptors it
/// watches and reopens (control, monitor, signalfd, inotify, rfkill), the watchdog timer, the
/// outputs it closes at the end; the decisions are AdapterSessions'.
public final class Daemon {
    let configPath: String
    /// The daemon's version: the log's first line, the status file and the metrics.
    let version: String
    let log = Logger()
    public let loop = EventLoop()
    /// Replaced when it breaks (DaemonDescriptors.swift); the controllers read the current one.
    let currentControl: CurrentControlSocket
    var control: HCIControlSocket {
        get { currentControl.socket }
        set { currentControl.socket = newValue }
    }
    var monitor: HCIMonitorSocket
    var signals: SignalDescriptor
    let notifier = SystemdNotifier()
    /// Every adapter session, the config generations, the status and its outputs.
    public let sessions: AdapterSessions
    var lights: LEDStatusOutput?
    /// The JSON status file (`altbeacond health`) and the Prometheus text file (`[metrics]`).
    var statusFile: StatusFileOutput?
    var metricsFile: StatusFileOutput?
    let startTime = wallClockSeconds()
    /// config.toml's edits, read again once they settle (DaemonReload.swift).
    let edits: ConfigEdits
    var rfkill: RfkillWatcher?
    /// Changes from afar (DaemonRemote.swift), this daemon their host.
    lazy var remoteChanges = RemoteChanges(configPath: configPath, requestsPath: runtimeDirectory() + "/requests", loop: loop,
                                           log: log, host: self)
    let watchdogTimer: LoopTimer
    lazy var reopener = DescriptorReopener(loop: loop, log: log)
    /// Between SIGTERM (or the last escalation step) and exit.
    var stopping: Bool { sessions.stopping }
    var exitCode = ExitCode.ok

    public init(configPath: String, version: String, config: BeaconConfig, control: HCIControlSocket, monitor: HCIMonitorSocket,
                signals: SignalDescriptor) {
        // The parameters are the first descriptors only: a broken one is replaced (DaemonDescriptors.swift).
        self.configPath = configPath
        self.version = version
        let currentControl = CurrentControlSocket(control)
        self.currentControl = currentControl
        self.monitor = monitor
        self.signals = signals
        edits = ConfigEdits(loop: loop)
        watchdogTimer = loop.makeTimer()
        let loop = loop
        // One for every session: what it gave each adapter is logged once.
        let addressRepair = AddressRepair(loop: loop, log: log)
        sessions = AdapterSessions(config: config, loop: loop, log: log,
                                   board: TelemetrySource()) { index in
            let c = KernelController(index: index, loop: loop) { currentControl.socket.fd.rawValue }
            c.addressRepair = addressRepair
            return c
        }
        loop.observer = self
        sessions.outputs.append(SystemdStatusOutput(notifier: notifier))
        sessions.host = self
        sessions.gatt = GATTIdentityService(loop: loop, log: log, bluetoothd: BlueZGATTApplication(loop: loop, log: log)) { index in
            try? currentControl.socket.deviceAddress(index: index)
        }
    }

    var config: BeaconConfig { sessions.config }

    func start(bytes: [UInt8]?) {
        log.info("altbeacond \(version): beacon \(describe(config)) on \(config.bluetooth.adapter), every \(config.bluetooth.intervalMs) ms")
        if let leds = config.leds { setLights(StatusLights(settings: leds, loop: loop, log: log)) }
        let status = StatusFileOutput(path: runtimeDirectory() + "/status.json", what: "status file", loop: loop, log: log,
                                      version: version, startTime: startTime) { $0.json }
        statusFile = status
        sessions.outputs.append(status)
        setMetrics(config.metrics.textfile)
        watchSignals()
        watchControl()
        watchMonitorFirst()
        watchConfig()
        watchRfkill()
        remoteChanges.start()
        if let ms = notifier.watchdogIntervalMs { scheduleWatchdogPing(everyMs: ms) }
        sessions.start(bytes: bytes)
        notifier.notify("READY=1\nSTATUS=\(sessions.status.text)")
    }

    private func watchMonitorFirst() {
        do {
            try monitor.watchCommands(index: config.bluetooth.adapterIndex)
        } catch {
            log.warning("cannot filter the HCI monitor (\(error)); watching all controllers")
        }
        watchMonitor()
    }

    /// The Prometheus text file at `path` (nil: none); the old one stays as it was last written.
    func setMetrics(_ path: String?) {
        guard path != metricsFile?.path else { return }
        if let old = metricsFile {
            old.close(remove: false)
            sessions.outputs.removeAll { $0 === old }
        }
        metricsFile = path.map {
            StatusFileOutput(path: $0, what: "metrics text file", loop: loop, log: log, version: version, startTime: startTime) { $0.prometheus }
        }
        if let metricsFile { sessions.outputs.append(metricsFile) }
    }

    func setLights(_ l: StatusLights?) {
        sessions.outputs.removeAll { $0 === lights }
        lights = l.map(LEDStatusOutput.init)
        if let lights { sessions.outputs.append(lights) }
    }

    /// Runs until SIGTERM/SIGINT; the adapter never ends it (but for SPEC §5's last step).
    public func run(bytes: [UInt8]?) -> Int32 {
        start(bytes: bytes)
        loop.run()
        return exitCode
    }

    // MARK: events

    func onSignals() {
        for s in signals.read() {
            switch s {
            case SIGHUP:
                log.info("SIGHUP: reloading \(configPath)")
                reload()
            case SIGTERM, SIGINT:
                log.info("\(s == SIGTERM ? "SIGTERM" : "SIGINT"): taking the beacon off air")
                stop(exitCode: ExitCode.ok)
                return
            case SIGUSR1:
                let (us, turns) = loop.takeLongestTurn()
                log.notice("loop: longest busy turn \(us / 1000).\(us % 1000 / 100) ms over \(turns) turns since the last report")
            default: break
            }
        }
    }

    func onDeviceEvents() {
        let events: [(HCIDeviceEventKind, UInt16)]
        do {
            events = try control.readDeviceEvents()
        } catch {
            return controlLost(error)
        }
        for (kind, index) in events { sessions.deviceEvent(kind, index: index) }
    }

    func onMonitor() {
        let packets: [MonitorPacket]
        do {
            packets = try monitor.readPackets()
        } catch {
            return monitorLost(error)
        }
        for packet in packets {
            guard let (op, params) = packet.command else { continue }
            sessions.monitored(op, params, index: packet.index)
        }
    }

    func retargetMonitor() {
        do {
            try monitor.watchCommands(index: sessions.session.index)
        } catch {
            log.warning("cannot filter the HCI monitor (\(error)); watching all controllers")
        }
    }

    private func scheduleWatchdogPing(everyMs ms: Int64) {
        // From the loop itself: if the loop stalls, the pings stop and systemd restarts us.
        watchdogTimer.schedule(afterMs: ms) { [weak self] in
            guard let self else { return }
            notifier.notify("WATCHDOG=1")
            scheduleWatchdogPing(everyMs: ms)
        }
    }

    // MARK: stop and restart

    /// SIGTERM must end the daemon within 0.5 s even with a hung controller (SPEC §5): a
    /// controller that answers takes a few ms per command (tens under emulation); the rest of the
    /// stop (LEDs, status files, exit) needs its share too (300 ms left 0.2 s: 501-508 ms to exit
    /// under emulation). A controller known hung is not waited for at all (AdapterSession.retire).
    static let stopDeadlineMs: Int64 = 200

    /// SPEC §5's last step, at once: under systemd, take the beacon off air and exit non-zero, and
    /// the unit (Restart=on-failure, RestartSec=2) starts a fresh process: no watchdog period off
    /// air, no core dump. Run by hand there is nobody to restart it: keep retrying.
    func restartNow() {
        guard notifier.isEnabled else {
            return log.warning("not under systemd: nobody to restart the service; retrying")
        }
        log.error("exiting with status \(ExitCode.software) so that systemd restarts the service now")
        // STATUS= says why until the process is gone (the last step, SPEC §5), not just "stopping".
        stop(exitCode: ExitCode.software, status: sessions.status.text)
    }

    /// Takes every adapter's beacon off air (within `stopDeadlineMs`), then the LEDs dark, then exit.
    func stop(exitCode code: Int32, status: String = "stopping") {
        guard !stopping else { return }
        exitCode = code
        edits.cancel()
        notifier.notify("STOPPING=1\nSTATUS=\(status)")
        if let systemd = sessions.outputs.first(where: { $0 is SystemdStatusOutput }) {
            sessions.outputs.removeAll { $0 === systemd }   // the line above is the last word
        }
        sessions.stop(deadlineMs: Self.stopDeadlineMs) { [weak self] in
            guard let self else { return }
            // Dark only now: the LED said "on air" for as long as the beacon was.
            lights?.release()
            // No daemon, no status file (health: unknown); the metrics say "off air" and age.
            statusFile?.close(remove: true)
            metricsFile?.close(remove: false)
            loop.stop()
        }
    }
}

extension Daemon: AdapterSessionsHost {
    public func restartRequested() { restartNow() }
    public func adapterChanged(to index: UInt16) { retargetMonitor() }
    public func adapterBroughtUp(index: UInt16) { _ = try? monitor.readPackets() }
}

extension Daemon: EventLoopObserver {
    public func eventLoop(_ loop: EventLoop, pollFailed error: Errno) {
        log.error("poll() failed: \(error); dropping broken descriptors and going on")
    }
}
