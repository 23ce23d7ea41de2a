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
    let control: HCIControlSocket
    let monitor: HCIMonitorSocket
    let signals: SignalDescriptor
    let notifier = SystemdNotifier()
    let advertiser: Advertiser
    var supervisor: Supervisor
    var lights: StatusLights?
    var watcher: ConfigWatcher?
    var rfkill: RfkillWatcher?
    var debouncer = Debouncer()
    var watchedDeviceFd: FileDescriptor?
    var lastStatus = ""

    init(configPath: String, config: BeaconConfig, control: HCIControlSocket, monitor: HCIMonitorSocket,
         signals: SignalDescriptor) {
        self.configPath = configPath
        self.config = config
        self.control = control
        self.monitor = monitor
        self.signals = signals
        advertiser = Advertiser(control: control, log: log)
        advertiser.afterBringUp = { [unowned monitor] in _ = monitor.readPackets() }
        supervisor = Supervisor(probeIntervalMs: Int64(config.watchdog.checkIntervalS) * 1000)
        let telemetry = TelemetrySource()
        advertiser.telemetry = { [unowned self] in
            telemetry.read(intervalMs: advertiser.effectiveIntervalMs, sets: advertiser.plan?.slotCount ?? 1)
        }
    }

    func start() {
        log.info("altbeacond \(version): beacon \(describe(config)) on \(config.bluetooth.adapter), every \(config.bluetooth.intervalMs) ms")
        if let leds = config.leds { lights = StatusLights(settings: leds, loop: loop, log: log) }
        lights?.show(.starting)
        loop.watch(signals.fd) { [unowned self] in onSignals() }
        loop.watch(control.fd) { [unowned self] in onDeviceEvents() }
        retargetMonitor()
        loop.watch(monitor.fd) { [unowned self] in onMonitor() }
        do {
            let w = try ConfigWatcher(path: configPath)
            watcher = w
            loop.watch(w.fd) { [unowned self] in if w.drain() { configFileChanged() } }
        } catch {
            log.warning("cannot watch \(configPath) for edits (\(error)); SIGHUP still reloads it")
        }
        if let r = try? RfkillWatcher() {
            rfkill = r
            loop.watch(r.fd) { [unowned self] in if r.drain() { handle(.rfkillChanged) } }
        }
        if let ms = notifier.watchdogIntervalMs { scheduleWatchdogPing(everyMs: ms) }
        handle(.start)
        notifier.notify("READY=1\nSTATUS=\(statusText)")
        // After arming: the fsyncs of the state file must not delay the beacon.
        if let bytes = pendingStore { storeLastGood(bytes) }
        pendingStore = nil
    }

    /// Runs until SIGTERM/SIGINT; the adapter never ends it.
    func run() -> Int32 {
        start()
        loop.run()
        return ExitCode.ok
    }

    // MARK: events

    private func onSignals() {
        for s in signals.read() {
            switch s {
            case SIGHUP:
                log.info("SIGHUP: reloading \(configPath)")
                reload()
            case SIGTERM, SIGINT:
                log.info("\(s == SIGTERM ? "SIGTERM" : "SIGINT"): taking the beacon off air")
                stop()
                return
            default: break
            }
        }
    }

    private func onDeviceEvents() {
        for (kind, index) in control.readDeviceEvents() where index == config.bluetooth.adapterIndex {
            log.debug("\(config.bluetooth.adapter): kernel reports \(kind)")
            switch kind {
            case .registered: handle(.adapterRegistered)
            case .unregistered: handle(.adapterUnregistered)
            case .up: handle(.adapterUp)
            case .down: handle(.adapterDown)
            }
        }
    }

    private func onMonitor() {
        let now = monotonicMilliseconds()
        for packet in monitor.readPackets() {
            guard packet.index == config.bluetooth.adapterIndex, let (op, params) = packet.command else { continue }
            if advertiser.sent.consume(op, params, at: now) { continue }
            if let what = classifyForeignCommand(op, params, onAir: advertiser.onAir) {
                log.debug("foreign \(op): \(what.rawValue)")
                handle(.interference(what))
            }
        }
    }

    /// Hardware Error events arrive on the adapter's own socket.
    private func onDeviceSocket() {
        guard let dev = advertiser.device else { return }
        var buf = [UInt8](repeating: 0, count: 300)
        while true {
            do {
                let n = try dev.fd.read(into: &buf)
                if n == 0 { unwatchDevice(); break }
                if case .success(.hardwareError(let code)) = HCIEvent.decode(buf[0..<n]) {
                    log.warning("\(config.bluetooth.adapter): hardware error 0x\(hexString(CollectionOfOne(code)))")
                    handle(.hardwareError)
                }
            } catch let e where e == .wouldBlock {
                break
            } catch {
                // The controller went away under the socket: stop polling it until re-armed.
                unwatchDevice()
                break
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

    /// Performs one action; returns the event it produced, if any.
    private func perform(_ action: SupervisorAction) -> SupervisorEvent? {
        switch action {
        case .arm(let scope):
            refreshHealth()
            let result = advertiser.arm(config, scope: scope)
            watchDevice()
            for case .hardwareError(let code) in advertiser.device?.takeStrayEvents() ?? [] {
                log.warning("\(config.bluetooth.adapter): hardware error 0x\(hexString(CollectionOfOne(code))) while arming")
            }
            if result == nil, scope != .data || supervisor.phase != .advertising {
                log.info("on air: \(describe(config)) on \(config.bluetooth.adapter) (\(advertiser.mode), every \(advertiser.effectiveIntervalMs) ms)")
            }
            if result == nil { scheduleFrameTimers() }
            return .armed(result)
        case .probe:
            return .probed(advertiser.probe())
        case .scheduleRearm(let ms):
            loop.schedule("rearm", afterMs: ms) { [unowned self] in handle(.rearmTimer) }
        case .cancelRearm:
            loop.cancel("rearm")
        case .scheduleProbe(let ms):
            loop.schedule("probe", afterMs: ms) { [unowned self] in handle(.probeTimer) }
        case .cancelProbe:
            loop.cancel("probe")
        case .closeAdapter:
            closeAdapter()
        case .disableAdvertising:
            if let f = advertiser.disable(timeoutMs: 800) { log.warning("could not disable advertising: \(f)") }
        case .notice(let m): log.notice(m)
        case .warning(let m): log.warning(m)
        }
        return nil
    }

    private func watchDevice() {
        guard let dev = advertiser.device, dev.fd !== watchedDeviceFd else { return }
        unwatchDevice()
        watchedDeviceFd = dev.fd
        loop.watch(dev.fd) { [unowned self] in onDeviceSocket() }
    }

    func closeAdapter() {
        unwatchDevice()
        advertiser.close()
    }

    private func unwatchDevice() {
        if let fd = watchedDeviceFd { loop.unwatch(fd) }
        watchedDeviceFd = nil
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
        case .fault(let f): s = "\(f.rawValue) (\(config.bluetooth.adapter)); beacon off air, retrying"
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
            notifier.notify("WATCHDOG=1")
            scheduleWatchdogPing(everyMs: ms)
        }
    }

    func stop() {
        notifier.notify("STOPPING=1\nSTATUS=stopping")
        handle(.stop)
        lights?.release()
        loop.stop()
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
