import BeaconKit
import BeaconLinux
import Glibc

/// `altbeacond run`: wires the kernel's event sources into one loop, routes each adapter's events
/// to its `AdapterSession`, and shows one `DaemonStatus` on every output. Only the first config
/// read and missing permissions end it (and SPEC §5's last escalation step, which restarts it).
final class Daemon {
    let configPath: String
    /// The newest accepted config, and its generation (bumped per applied config).
    var config: BeaconConfig
    var generation = 1
    /// The last refused edit (or a deleted file): the old beacon stays on air meanwhile.
    var refusedEdit: String?
    /// Where the last good config is kept (SPEC §6), written once the controller confirmed it.
    var lastGood: LastGoodStore?
    /// The applied file's bytes per generation not yet confirmed on air (at most a few).
    var unconfirmedBytes: [(generation: Int, bytes: [UInt8])] = []
    let log = Logger()
    let loop = EventLoop()
    var control: HCIControlSocket
    var monitor: HCIMonitorSocket
    var signals: SignalDescriptor
    let notifier = SystemdNotifier()
    /// The adapter the config names; sessions of adapters left behind, until they are off air.
    var session: AdapterSession!
    var retiring: [AdapterSession] = []
    var lights: LEDStatusOutput?
    var outputs: [StatusOutput] = []
    var lastStatus: DaemonStatus?
    var watcher: ConfigWatcher?
    var rfkill: RfkillWatcher?
    var debouncer = Debouncer()
    let reloadTimer: LoopTimer
    let rewatchTimer: LoopTimer
    let watchdogTimer: LoopTimer
    var reopenTimers: [String: LoopTimer] = [:]
    let telemetry = TelemetrySource()
    var stopping = false
    var exitCode = ExitCode.ok

    init(configPath: String, config: BeaconConfig, control: HCIControlSocket, monitor: HCIMonitorSocket,
         signals: SignalDescriptor) {
        self.configPath = configPath
        self.config = config
        self.control = control
        self.monitor = monitor
        self.signals = signals
        reloadTimer = loop.makeTimer()
        rewatchTimer = loop.makeTimer()
        watchdogTimer = loop.makeTimer()
        loop.onPollError = { [unowned self] e in log.error("poll() failed: \(e); dropping broken descriptors and going on") }
        outputs.append(SystemdStatusOutput(notifier: notifier))
        session = makeSession(config)
    }

    func makeSession(_ config: BeaconConfig) -> AdapterSession {
        let controller = KernelController(index: config.bluetooth.adapterIndex, loop: loop) { [unowned self] in control.fd.rawValue }
        let s = AdapterSession(config: config, generation: generation, controller: controller, loop: loop, log: log)
        s.advertiser.afterBringUp = { [unowned self] in _ = try? monitor.readPackets() }
        s.advertiser.telemetry = { [telemetry] count in telemetry.read(advertisingCount: count) }
        s.onChange = { [unowned self] in publishStatus() }
        s.onConfirmed = { [unowned self] g in confirmed(g) }
        s.onRestartRequested = { [unowned self] in restartNow() }
        return s
    }

    func start() {
        log.info("altbeacond \(version): beacon \(describe(config)) on \(config.bluetooth.adapter), every \(config.bluetooth.intervalMs) ms")
        if let leds = config.leds { setLights(StatusLights(settings: leds, loop: loop, log: log)) }
        watchSignals()
        watchControl()
        retargetMonitor()
        watchMonitor()
        watchConfig()
        watchRfkill()
        if let ms = notifier.watchdogIntervalMs { scheduleWatchdogPing(everyMs: ms) }
        session.start()
        notifier.notify("READY=1\nSTATUS=\(status.text)")
    }

    func setLights(_ l: StatusLights?) {
        outputs.removeAll { $0 === lights }
        lights = l.map(LEDStatusOutput.init)
        if let lights { outputs.append(lights) }
    }

    /// Runs until SIGTERM/SIGINT; the adapter never ends it (but for SPEC §5's last step).
    func run() -> Int32 {
        start()
        loop.run()
        return exitCode
    }

    // MARK: events, routed by adapter index

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
        for (kind, index) in events where !stopping && index == session.index { session.deviceEvent(kind) }
    }

    func onMonitor() {
        let packets: [MonitorPacket]
        do {
            packets = try monitor.readPackets()
        } catch {
            return monitorLost(error)
        }
        for packet in packets where !stopping {
            guard packet.index == session.index, let (op, params) = packet.command else { continue }
            session.monitored(op, params)
        }
    }

    func retargetMonitor() {
        do {
            try monitor.watchCommands(index: session.index)
        } catch {
            log.warning("cannot filter the HCI monitor (\(error)); watching all controllers")
        }
    }

    // MARK: the status and its outputs

    var status: DaemonStatus {
        let p = session.policy
        let phase: DaemonStatus.Phase
        switch p.phase {
        case _ where stopping: phase = .stopping
        case .starting: phase = .starting
        case .arming: phase = .arming
        case .advertising: phase = .advertising
        case .fault(let f): phase = .fault(f)
        case .stopped: phase = .stopping
        }
        let a = session.advertiser
        return DaemonStatus(phase: phase, escalation: p.escalation, ladderFailures: p.ladderFailures, rearms: p.rearms,
                            refusedEdit: refusedEdit, adapter: session.adapter, beacon: describe(session.config),
                            mode: a.mode, intervalMs: Int(a.effectiveIntervalMs), frames: session.config.frames.map(\.name))
    }

    /// Computes the status once; every output sees it only when it changed.
    func publishStatus() {
        let s = status
        guard s != lastStatus else { return }
        lastStatus = s
        for o in outputs { o.show(s) }
    }

    /// The controller confirmed config generation `g` on air: now it is the last good one.
    func confirmed(_ g: Int) {
        guard let i = unconfirmedBytes.lastIndex(where: { $0.generation <= g }) else { return }
        let bytes = unconfirmedBytes[i].bytes
        unconfirmedBytes.removeFirst(i + 1)
        lastGood?.store(bytes)
    }

    private func scheduleWatchdogPing(everyMs ms: Int64) {
        // From the loop itself: if the loop stalls, the pings stop and systemd restarts us.
        watchdogTimer.schedule(afterMs: ms) { [unowned self] in
            notifier.notify("WATCHDOG=1")
            scheduleWatchdogPing(everyMs: ms)
        }
    }

    // MARK: stop and restart

    /// SIGTERM must end the daemon within 0.5 s even with a hung controller (SPEC §5).
    static let stopDeadlineMs: Int64 = 300

    /// SPEC §5's last step, at once: under systemd, take the beacon off air and exit non-zero, and
    /// the unit (Restart=on-failure, RestartSec=2) starts a fresh process: no watchdog period off
    /// air, no core dump. Run by hand there is nobody to restart it: keep retrying.
    func restartNow() {
        guard notifier.isEnabled else {
            return log.warning("not under systemd: nobody to restart the service; retrying")
        }
        log.error("exiting with status \(ExitCode.software) so that systemd restarts the service now")
        stop(exitCode: ExitCode.software)
    }

    /// Takes every adapter's beacon off air (within `stopDeadlineMs`), then the LEDs dark, then exit.
    func stop(exitCode code: Int32) {
        guard !stopping else { return }
        stopping = true
        exitCode = code
        reloadTimer.cancel()
        notifier.notify("STOPPING=1\nSTATUS=stopping")
        var left = 1 + retiring.count
        let finish: (Bool) -> Void = { [unowned self] _ in
            left -= 1
            guard left == 0 else { return }
            // Dark only now: the LED said "on air" for as long as the beacon was.
            lights?.release()
            loop.stop()
        }
        for s in [session!] + retiring {
            s.retire(commandTimeoutMs: Self.stopDeadlineMs, deadlineMs: Self.stopDeadlineMs, finish)
        }
        publishStatus()
    }
}
