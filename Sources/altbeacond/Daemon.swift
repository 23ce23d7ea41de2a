import BeaconKit
import BeaconLinux
import Glibc

/// `altbeacond run`: wires the kernel's event sources into one loop and performs what the
/// recovery supervisor decides. Only the first config read and missing permissions end it.
final class Daemon {
    let configPath: String
    var config: BeaconConfig
    /// The last refused edit (or a deleted file): the old beacon stays on air meanwhile.
    var refusedEdit: String?
    /// Where the last good config is kept (SPEC §6), and its bytes as stored (nil: none yet).
    var lastGood: StateFile?
    var storedLastGood: [UInt8]?
    /// The applied file's bytes, stored once the beacon has been armed at start.
    var pendingStore: [UInt8]?
    let log = Logger()
    let loop = EventLoop()
    var control: HCIControlSocket
    var monitor: HCIMonitorSocket
    var signals: SignalDescriptor
    let notifier = SystemdNotifier()
    let advertiser: Advertiser
    var supervisor: Supervisor
    var lights: StatusLights?
    var watcher: ConfigWatcher?
    var rfkill: RfkillWatcher?
    var debouncer = Debouncer()
    var lastStatus = ""
    /// The escalation's last step: systemd's watchdog is no longer pinged (SPEC §5).
    var restartRequested = false
    var stopping = false
    var exitCode = ExitCode.ok

    init(configPath: String, config: BeaconConfig, control: HCIControlSocket, monitor: HCIMonitorSocket,
         signals: SignalDescriptor) {
        self.configPath = configPath
        self.config = config
        self.control = control
        self.monitor = monitor
        self.signals = signals
        advertiser = Advertiser(control: control, loop: loop, log: log)
        supervisor = Supervisor(probeIntervalMs: Int64(config.watchdog.checkIntervalS) * 1000)
        let telemetry = TelemetrySource()
        advertiser.telemetry = { [unowned self] in
            telemetry.read(intervalMs: advertiser.effectiveIntervalMs, sets: advertiser.plan?.slotCount ?? 1)
        }
        advertiser.afterBringUp = { [unowned self] in _ = try? monitor.readPackets() }
        advertiser.onHardwareError = { [unowned self] code in
            log.warning("\(self.config.bluetooth.adapter): hardware error 0x\(hexString(CollectionOfOne(code)))")
            handle(.hardwareError)
        }
        loop.onPollError = { [unowned self] e in log.error("poll() failed: \(e); dropping broken descriptors and going on") }
    }

    func start() {
        log.info("altbeacond \(version): beacon \(describe(config)) on \(config.bluetooth.adapter), every \(config.bluetooth.intervalMs) ms")
        if let leds = config.leds { lights = StatusLights(settings: leds, loop: loop, log: log) }
        lights?.show(.starting)
        watchSignals()
        watchControl()
        retargetMonitor()
        watchMonitor()
        watchConfig()
        watchRfkill()
        if let ms = notifier.watchdogIntervalMs { scheduleWatchdogPing(everyMs: ms) }
        handle(.start)
        notifier.notify("READY=1\nSTATUS=\(statusText)")
        // After arming: the fsyncs of the state file must not delay the beacon.
        if let bytes = pendingStore { storeLastGood(bytes) }
        pendingStore = nil
    }

    /// Runs until SIGTERM/SIGINT; the adapter never ends it (but for SPEC §5's last step).
    func run() -> Int32 {
        start()
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
                stop()
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
        for (kind, index) in events where index == config.bluetooth.adapterIndex {
            log.debug("\(config.bluetooth.adapter): kernel reports \(kind)")
            // Our own HCIDEVUP/HCIDEVDOWN, still in progress: the arm goes on by itself.
            if kind == .up || kind == .down, advertiser.isChangingPower { continue }
            switch kind {
            case .registered: handle(.adapterRegistered)
            case .unregistered: handle(.adapterUnregistered)
            case .up: handle(.adapterUp)
            case .down: handle(.adapterDown)
            }
        }
    }

    func onMonitor() {
        let now = monotonicMilliseconds()
        let packets: [MonitorPacket]
        do {
            packets = try monitor.readPackets()
        } catch {
            return monitorLost(error)
        }
        for packet in packets {
            guard packet.index == config.bluetooth.adapterIndex, let (op, params) = packet.command else { continue }
            if advertiser.sent.consume(op, params, at: now) { continue }
            if let what = classifyForeignCommand(op, params, onAir: advertiser.onAir) {
                log.debug("foreign \(op): \(what.rawValue)")
                handle(.interference(what))
            }
        }
    }

    // MARK: the supervisor's decisions

    func handle(_ event: SupervisorEvent) {
        var queue = [event]
        while !queue.isEmpty {
            let e = queue.removeFirst()
            for action in supervisor.handle(e, now: monotonicMilliseconds()) {
                if let follow = perform(action) { queue.append(follow) }
            }
        }
        refreshHealth()
    }

    /// Performs one action; returns the event it produced at once, if any. Controller work
    /// completes later, as an event of its own (`.armed`, `.probed`).
    private func perform(_ action: SupervisorAction) -> SupervisorEvent? {
        switch action {
        case .arm(let scope):
            refreshHealth()
            let wasAdvertising = supervisor.phase == .advertising
            advertiser.arm(config, scope: scope) { [unowned self] result in
                if result == nil, scope != .data || !wasAdvertising {
                    log.info("on air: \(describe(config)) on \(config.bluetooth.adapter) (\(advertiser.mode), every \(advertiser.effectiveIntervalMs) ms)")
                }
                if result == nil { scheduleFrameTimers() }
                handle(.armed(result))
            }
        case .probe:
            advertiser.probe { [unowned self] in handle(.probed($0)) }
        case .scheduleRearm(let ms):
            loop.schedule("rearm", afterMs: ms) { [unowned self] in handle(.rearmTimer) }
        case .cancelRearm:
            loop.cancel("rearm")
        case .scheduleProbe(let ms):
            loop.schedule("probe", afterMs: ms) { [unowned self] in handle(.probeTimer) }
        case .cancelProbe:
            loop.cancel("probe")
        case .closeAdapter:
            advertiser.close()
        case .disableAdvertising:
            // Only on stop: the loop ends when the controller confirmed, or at the deadline.
            advertiser.disable(deadlineMs: Self.stopDeadlineMs) { [unowned self] in loop.stop() }
        case .notice(let m): log.notice(m)
        case .warning(let m): log.warning(m)
        case .requestRestart(let on): requestRestart(on)
        }
        return nil
    }

    /// SPEC §5's last step: under systemd's watchdog, stop pinging it (systemd restarts the
    /// service); under systemd without one, exit non-zero (Restart=on-failure); run by hand,
    /// there is nobody to restart it: keep retrying.
    private func requestRestart(_ on: Bool) {
        restartRequested = on
        guard on else { return log.notice("pinging systemd's watchdog again") }
        if notifier.watchdogIntervalMs != nil {
            log.error("no longer pinging systemd's watchdog: systemd restarts the service within WatchdogSec")
        } else if notifier.isEnabled {
            log.error("exiting so that systemd restarts the service")
            stopping = true
            lights?.release()
            exitCode = ExitCode.software
            loop.stop()
        } else {
            log.warning("not under systemd: nobody to restart the service; retrying")
        }
    }

    func retargetMonitor() {
        do {
            try monitor.watchCommands(index: config.bluetooth.adapterIndex)
        } catch {
            log.warning("cannot filter the HCI monitor (\(error)); watching all controllers")
        }
    }

    // MARK: health, status, stop

    var health: BeaconHealth {
        switch supervisor.phase {
        case .starting, .arming: .starting
        case .advertising: refusedEdit == nil ? .advertising : .advertisingWithRefusedEdit
        case .fault: .adapterFault
        case .stopped: .stopped
        }
    }

    var statusText: String {
        let beacon = "\(describe(config)) on \(config.bluetooth.adapter)"
        var s: String
        switch supervisor.phase {
        case .starting, .arming: s = "arming \(beacon)"
        case .advertising: s = "advertising \(beacon)"
        case .fault(let f):
            s = "\(f.rawValue) (\(config.bluetooth.adapter)); beacon off air, "
            switch supervisor.escalation {
            case .retrying: s += supervisor.ladderFailures > 0 ? "retrying (\(supervisor.ladderFailures) failed re-arms)" : "retrying"
            case .powerCycled: s += "took the adapter down and up, retrying (\(supervisor.ladderFailures) failed re-arms)"
            case .restartRequested: s += "asked systemd to restart the service (\(supervisor.ladderFailures) failed re-arms)"
            }
        case .stopped: s = "stopped"
        }
        if refusedEdit != nil { s += "; last config edit refused, see log" }
        let rearms = supervisor.rearmSummary
        if !rearms.isEmpty { s += "; re-arms: \(rearms)" }
        return s
    }

    func refreshHealth() {
        lights?.show(health)
        let s = statusText
        if s != lastStatus {
            lastStatus = s
            notifier.notify("STATUS=\(s)")
        }
    }

    private func scheduleWatchdogPing(everyMs ms: Int64) {
        // From the loop itself: if the loop stalls, the pings stop and systemd restarts us.
        loop.schedule("watchdog", afterMs: ms) { [unowned self] in
            if !restartRequested { notifier.notify("WATCHDOG=1") }
            scheduleWatchdogPing(everyMs: ms)
        }
    }

    /// SIGTERM must end the daemon within 0.5 s even with a hung controller (SPEC §5).
    static let stopDeadlineMs: Int64 = 300

    func stop() {
        guard !stopping else { return }
        stopping = true
        notifier.notify("STOPPING=1\nSTATUS=stopping")
        lights?.release()
        handle(.stop)
    }
}

func describe(_ b: BeaconIdentity) -> String {
    "\(b.uuidString) major \(b.major) minor \(b.minor) power \(b.power)"
}

/// The AltBeacon identity, then the other frames by name.
func describe(_ c: BeaconConfig) -> String {
    let altbeacon = c.frames.contains { $0.frame is AltBeaconFrame }
    let others = c.frames.filter { !($0.frame is AltBeaconFrame) }.map(\.name)
    if !altbeacon { return others.joined(separator: " + ") }
    return describe(c.beacon) + (others.isEmpty ? "" : " + " + others.joined(separator: " + "))
}
