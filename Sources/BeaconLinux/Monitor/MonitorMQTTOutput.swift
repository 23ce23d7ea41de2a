import BeaconKit
import Glibc

/// The monitor's MQTT output (SPEC §10): what to publish decided by BeaconKit's
/// `MonitorPublisher`, sent over the link to the broker (`MQTTBrokerLink`: the connection, its
/// name, its back-off). What arrives goes to its part: the node's own topic to `MonitorNodeClash`
/// (another monitor under our node name, or our client ID, said once), the `set` topics to
/// `LocalBeaconControlInput`, the release and Install to `FirmwareUpdateInput`, Home Assistant's
/// birth to the publisher. The client ID is one per machine and adapter. The local beacon
/// daemon's status file is watched (`FileChangeWatch`) and what was announced is remembered
/// (`MonitorAnnouncedFile`).
public final class MonitorMQTTOutput: MonitorOutput, MQTTConnectionDelegate {
    private let loop: EventLoop
    private let log: Logger
    private let link: MQTTBrokerLink
    private var publisher: MonitorPublisher
    private let refreshTimer: LoopTimer
    private var clash: MonitorNodeClash
    /// `[mqtt] control`: the `set` topics, forwarded to the beacon daemon as request files.
    private var control: LocalBeaconControlInput
    /// The card's firmware (issue 39): the fleet's release, Home Assistant's Install.
    private let firmware: FirmwareUpdateInput
    /// What was announced, remembered on the state partition; nil: not kept.
    private let announced: MonitorAnnouncedFile?
    /// The local beacon daemon's status file, published as the health topic when there is one.
    private let statusFile: FileChangeWatch
    /// Where the client ID came from, for the log.
    private let clientIDSource: String
    private weak var source: MonitorStatusSource?

    /// `version`: the monitor's, for Home Assistant (the observer's `sw_version`, `origin`).
    /// `announced`: where what was announced is remembered (`MonitorAnnounced`); nil: nowhere.
    /// `updatePaths`: where the card's updater and image are found (issue 39).
    public init(settings: MQTTSettings, node: String, config: MonitorConfig, healthPath: String, version: String = "",
                announced: StateFile? = nil, updatePaths: FirmwareUpdatePaths = .standard, loop: EventLoop, log: Logger) {
        self.loop = loop; self.log = log
        self.announced = announced.map { MonitorAnnouncedFile(file: $0, log: log) }
        publisher = MonitorPublisher(node: node, discoveryPrefix: settings.discoveryPrefix, expectations: config.expectations,
                                     control: settings.control, version: version, announced: self.announced?.read() ?? [])
        publisher.board = machineBoard(area: config.area)
        control = LocalBeaconControlInput(control: LocalBeaconControl(node: node, mode: settings.control), statusPath: healthPath, log: log)
        firmware = FirmwareUpdateInput(paths: updatePaths, node: node, settings: settings, version: version, log: log)
        statusFile = FileChangeWatch(path: healthPath, loop: loop)
        let machine = machineIdentity()
        clientIDSource = "from \(machine.from); adapter \(config.adapter)"
        clash = MonitorNodeClash(node: node, clientID: MonitorNodeClash.clientID(machine: machine.id, adapter: config.adapter))
        link = MQTTBrokerLink(settings: settings, clientID: clash.clientID, willTopic: publisher.statusTopic, loop: loop, log: log)
        refreshTimer = loop.makeTimer()
        link.delegate = self
    }

    /// For the metrics file.
    public var figures: MonitorMQTTFigures {
        MonitorMQTTFigures(connected: link.isConnected, droppedTotal: link.droppedTotal, nodeClash: clash.nodeClash)
    }

    // MARK: MonitorOutput

    public func start(_ source: MonitorStatusSource) {
        self.source = source
        log.info("MQTT: client ID \(clash.clientID) (\(clientIDSource))")
        link.start()
        control.start(tls: link.settings.tls != nil)
        firmware.start(loop: loop) { [weak self] in self?.localFileChanged() }
        // The status file is rewritten at each change (a change from afar applied or refused,
        // advertising off, a fault): it goes out at once, not at the next refresh.
        statusFile.start { [weak self] in self?.localFileChanged() }
    }

    /// The beacon daemon's status file or the updater's state file changed: said at once.
    private func localFileChanged() {
        guard link.isConnected, let status = source?.status else { return }
        let h = health()
        perform(publisher.changed(status, health: h))
    }

    /// A heard/silent change (or a reboot), or the scan's: the changed topics at once; sightings
    /// without a change are picked up by the next refresh.
    public func show(_ status: MonitorStatus, changes: [TrackerEvent]) {
        guard link.isConnected else { return }
        let h = health()
        perform(publisher.changed(status, health: h))
    }

    /// `offline` said ourselves (a clean DISCONNECT does not fire the will), then DISCONNECT.
    public func stop(_ status: MonitorStatus, _ done: @escaping () -> Void) {
        refreshTimer.cancel()
        statusFile.stop()
        firmware.stop()
        if link.isConnected { perform(publisher.stopping()) }
        link.stop()
        loop.post(done)
    }

    // MARK: MQTTConnectionDelegate (the link's)

    public func mqttConnection(_ event: MQTTConnectionEvent) {
        switch event {
        case .connected:
            firmware.connection(up: true)
            if let status = source?.status {
                let h = health()
                perform(publisher.connected(status, health: h, now: loop.now))
            }
            // Packet identifier 1 is the publisher's subscription, 2 the clash's, 3 the control
            // topics', 4 the release's and Install's.
            perform(clash.connected(packetID: 2))
            if let s = control.control.subscribe(packetID: 3) { link.send(.subscribe(s)) }
            if let s = firmware.model.subscribe(packetID: 4) { link.send(.subscribe(s)) }
        case .received(let p) where p.topic == clash.topic:
            perform(clash.received(p))
        case .received(let p) where control.control.handles(p.topic):
            control.received(p)
        case .received(let p) where firmware.model.handles(p.topic):
            firmware.received(p, nowS: wallClockSeconds())
            localFileChanged()
        case .received(let p):
            // Home Assistant's birth message: it lost what it knew, discovery goes again.
            guard publisher.isBirth(p), let status = source?.status else { return }
            log.info("MQTT: Home Assistant is online; sending discovery again")
            let h = health()
            perform(publisher.birth(status, health: h))
        case .closed:
            refreshTimer.cancel()
            if let lived = link.connectedForMs { perform(clash.sessionEnded(connectedForMs: lived)) }
            firmware.connection(up: false)
        }
    }

    private func refresh() {
        statusFile.rewatch()
        guard link.isConnected, let status = source?.status else { return }
        let h = health()
        perform(publisher.refresh(status, health: h, now: loop.now))
    }

    /// The local beacon daemon's status file judged as `altbeacond health` does; nil without one.
    /// Also sets what the publisher reads beside it (the time, the SoC's temperature, the
    /// card's firmware).
    private func health() -> HealthCheck.Result? {
        publisher.machine = LocalMachine(nowS: wallClockSeconds(), socTemperatureMilliC: TelemetrySource().millidegrees())
        publisher.firmware = firmware.read(nowS: publisher.machine.nowS)
        guard let bytes = try? readFile(statusFile.path, limit: 1 << 16) else { return nil }
        return HealthCheck.evaluate(path: statusFile.path, file: bytes, now: wallClockSeconds()) { pid in
            kill(pid, 0) == 0 || errno == EPERM
        }
    }

    private func perform(_ actions: [MonitorPublisher.Action]) {
        for a in actions {
            switch a {
            case .publish(let p): link.send(.publish(p))
            case .subscribe(let s): link.send(.subscribe(s))
            case .scheduleRefresh(let ms): refreshTimer.schedule(afterMs: ms) { [weak self] in self?.refresh() }
            case .cannotPublish(let topic): log.warning("MQTT: cannot publish to '\(topic)'")
            case .remember(let topics): announced?.remember(topics)
            }
        }
    }

    private func perform(_ actions: [MonitorNodeClash.Action]) {
        for a in actions {
            switch a {
            case .subscribe(let s): link.send(.subscribe(s))
            case .publish(let p): link.send(.publish(p))
            case .say(let text): log.warning("MQTT: \(text)")
            }
        }
    }

    // MARK: monitor.toml edited

    /// An accepted edit of monitor.toml: the expectations, the node and `[mqtt]` as they now
    /// are. A new node or `[mqtt]` (the will's topic, the broker, the credentials, the control
    /// topics are the CONNECT's and the subscriptions'): `offline` said under the old node and
    /// a new session; otherwise the session stays and says everything again. Either way the new
    /// configuration's first burst clears what it no longer publishes (`MonitorPublisher.connected`).
    public func reconfigure(settings new: MQTTSettings, node newNode: String, config: MonitorConfig) {
        guard !link.stopping else { return }
        let old = link.settings
        let reconnects = new != old || newNode != clash.node
        if reconnects, link.isConnected { perform(publisher.stopping()) }
        publisher = publisher.reconfigured(node: newNode, discoveryPrefix: new.discoveryPrefix, expectations: config.expectations,
                                           control: new.control)
        firmware.reconfigure(node: newNode, settings: new)
        guard reconnects else {
            guard link.isConnected, let status = source?.status else { return }
            let h = health()
            perform(publisher.connected(status, health: h, now: loop.now))
            return
        }
        clash = MonitorNodeClash(node: newNode, clientID: clash.clientID)
        if control.control.mode != new.control || control.control.node != newNode || (old.tls != nil) != (new.tls != nil) {
            control = LocalBeaconControlInput(control: LocalBeaconControl(node: newNode, mode: new.control), statusPath: statusFile.path, log: log)
            control.start(tls: new.tls != nil)
        }
        refreshTimer.cancel()
        link.reconnect(settings: new, willTopic: publisher.statusTopic)
        log.info("MQTT: [mqtt] or the node changed: connecting again to \(link.broker) as node \(newNode)")
    }
}
