import BeaconKit
import Glibc

/// The monitor's MQTT output (SPEC §10): one `MQTTConnection` to the broker, what to publish
/// decided by BeaconKit's `MonitorPublisher`. Reconnects with back-off (`SessionRetry`: a session
/// the broker ends within 5 s of accepting it makes the wait grow), one log line per cause;
/// the password file and the TLS files are read again at every attempt. The client ID is one per machine and
/// adapter, and another monitor under our node name (or our client ID) is said once
/// (`MonitorNodeClash`).
public final class MonitorMQTTOutput: MonitorOutput, MQTTConnectionDelegate, ResolverDelegate {
    public static let retryMs: ClosedRange<Int64> = 1000...60_000

    private var settings: MQTTSettings
    private var node: String
    private let adapter: String
    private let loop: EventLoop
    private let log: Logger
    private let connection: MQTTConnection
    /// The broker's name, found again at each connect (DNS, mDNS: Resolver).
    private lazy var resolver = Resolver(loop: loop, delegate: self)
    private let retryTimer: LoopTimer
    private let refreshTimer: LoopTimer
    /// A session that lives `MonitorNodeClash.shortSessionMs` starts the back-off again.
    private let settleTimer: LoopTimer
    private var retry = SessionRetry(range: MonitorMQTTOutput.retryMs, settleMs: MonitorNodeClash.shortSessionMs)
    private var publisher: MonitorPublisher
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
    private let identitySource: String
    /// When the current session was accepted; nil between sessions.
    private var connectedAtMs: Int64?
    /// Drops are said once per session.
    private var saidDrops = false
    private weak var source: MonitorStatusSource?
    private var stopping = false

    /// `version`: the monitor's, for Home Assistant (the observer's `sw_version`, `origin`).
    /// `announced`: where what was announced is remembered (`MonitorAnnounced`); nil: nowhere.
    /// `updatePaths`: where the card's updater and image are found (issue 39).
    public init(settings: MQTTSettings, node: String, config: MonitorConfig, healthPath: String, version: String = "",
                announced: StateFile? = nil, updatePaths: FirmwareUpdatePaths = .standard, loop: EventLoop, log: Logger) {
        self.settings = settings; self.node = node; self.loop = loop; self.log = log
        self.announced = announced.map { MonitorAnnouncedFile(file: $0, log: log) }
        publisher = MonitorPublisher(node: node, discoveryPrefix: settings.discoveryPrefix, expectations: config.expectations,
                                     control: settings.control, version: version, announced: self.announced?.read() ?? [])
        publisher.board = machineBoard(area: config.area)
        control = LocalBeaconControlInput(control: LocalBeaconControl(node: node, mode: settings.control), statusPath: healthPath, log: log)
        firmware = FirmwareUpdateInput(paths: updatePaths, node: node, settings: settings, version: version, log: log)
        statusFile = FileChangeWatch(path: healthPath, loop: loop)
        adapter = config.adapter
        let machine = machineIdentity()
        identitySource = machine.from
        clash = MonitorNodeClash(node: node, clientID: MonitorNodeClash.clientID(machine: machine.id, adapter: config.adapter))
        connection = MQTTConnection(loop: loop)
        retryTimer = loop.makeTimer()
        refreshTimer = loop.makeTimer()
        settleTimer = loop.makeTimer()
        connection.delegate = self
    }

    private var broker: String { "\(settings.host):\(settings.port)" }

    /// For the metrics file.
    public var figures: MonitorMQTTFigures {
        MonitorMQTTFigures(connected: connection.state == .connected, droppedTotal: connection.droppedTotal, nodeClash: clash.nodeClash)
    }

    // MARK: MonitorOutput

    public func start(_ source: MonitorStatusSource) {
        self.source = source
        log.info("MQTT: client ID \(clash.clientID) (from \(identitySource); adapter \(adapter))")
        if let t = settings.tls {
            let client = t.certFile.map { "; client certificate \($0)" } ?? ""
            log.info("MQTT: TLS with \(TLSClientConfig.library): the broker's certificate checked against \(t.caFile) for \(t.expectedName(host: settings.host))\(client)")
        }
        control.start(tls: settings.tls != nil)
        firmware.start(loop: loop) { [weak self] in self?.localFileChanged() }
        // The status file is rewritten at each change (a change from afar applied or refused,
        // advertising off, a fault): it goes out at once, not at the next refresh.
        statusFile.start { [weak self] in self?.localFileChanged() }
        connect()
    }

    /// The beacon daemon's status file or the updater's state file changed: said at once.
    private func localFileChanged() {
        guard connection.state == .connected, let status = source?.status else { return }
        let h = health()
        perform(publisher.changed(status, health: h))
    }

    /// A heard/silent change (or a reboot), or the scan's: the changed topics at once; sightings
    /// without a change are picked up by the next refresh.
    public func show(_ status: MonitorStatus, changes: [TrackerEvent]) {
        guard connection.state == .connected else { return }
        let h = health()
        perform(publisher.changed(status, health: h))
    }

    /// `offline` said ourselves (a clean DISCONNECT does not fire the will), then DISCONNECT.
    public func stop(_ status: MonitorStatus, _ done: @escaping () -> Void) {
        stopping = true
        retryTimer.cancel(); refreshTimer.cancel(); settleTimer.cancel(); resolver.cancel()
        statusFile.stop()
        firmware.stop()
        if connection.state == .connected {
            perform(publisher.stopping())
            connection.disconnect()
        } else {
            connection.close()
        }
        loop.post(done)
    }

    // MARK: MQTTConnectionDelegate

    public func mqttConnection(_ event: MQTTConnectionEvent) {
        switch event {
        case .connected:
            let over = connection.tlsAgreed.map { " over \($0), the certificate of \(settings.tls?.expectedName(host: settings.host) ?? "") verified" } ?? ""
            // Not said again while the broker ends each session at once (the clash says why).
            let accepted = retry.accepted(atMs: loop.now)
            if accepted.say { log.info("MQTT: connected to \(broker)\(over)\(accepted.again ? " again" : "")") }
            settleTimer.schedule(afterMs: accepted.settleAfterMs) { [weak self] in self?.settled() }
            connectedAtMs = loop.now
            saidDrops = false
            firmware.connection(up: true)
            if let status = source?.status {
                let h = health()
                perform(publisher.connected(status, health: h, now: loop.now))
            }
            // Packet identifier 1 is the publisher's subscription, 2 the clash's, 3 the control
            // topics', 4 the release's and Install's.
            perform(clash.connected(packetID: 2))
            if let s = control.control.subscribe(packetID: 3) { connection.send(.subscribe(s)) }
            if let s = firmware.model.subscribe(packetID: 4) { connection.send(.subscribe(s)) }
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
        case .closed(let why):
            settleTimer.cancel()
            if let at = connectedAtMs { perform(clash.sessionEnded(connectedForMs: loop.now - at)) }
            connectedAtMs = nil
            firmware.connection(up: false)
            lost(why)
        }
    }

    // MARK: the session

    private func connect() {
        guard !stopping else { return }
        resolver.resolve(settings.host)
    }

    public func resolver(_ resolver: Resolver, finished outcome: ResolverOutcome) {
        switch outcome {
        case .failed(let why): lost("cannot resolve '\(settings.host)': \(why)")
        case .resolved(let address, _): open(address)
        }
    }

    private func open(_ address: String) {
        guard !stopping else { return }
        var password: [UInt8]?
        if let file = settings.passwordFile {
            switch readPasswordFile(file) {
            case .success(let p): password = p
            case .failure(let why): return lost(why.text)
            }
        }
        // The TLS files are loaded again at each attempt too: a renewed certificate is used
        // without a restart.
        var tls: (config: TLSClientConfig, serverName: String)?
        if let t = settings.tls {
            switch TLSClientConfig.load(t) {
            case .success(let c): tls = (c, t.expectedName(host: settings.host))
            case .failure(let why): return lost(why.text)
            }
        }
        let packet: MQTTConnect
        do throws(MQTTWireError) {
            let will = try MQTTWill(topic: publisher.statusTopic, message: Array("offline".utf8), retain: true)
            packet = try MQTTConnect(clientID: clash.clientID, keepAlive: settings.keepAliveS, will: will,
                                     username: settings.username, password: password)
        } catch {
            return lost("cannot make the CONNECT packet (\(error))")
        }
        connection.open(address: address, port: settings.port, connect: packet, tls: tls)
    }

    /// Unreachable, refused (wrong credentials), broken: said once per cause, tried again.
    private func lost(_ why: String) {
        guard !stopping else { return }
        refreshTimer.cancel()
        let (say, afterMs) = retry.failed(why, atMs: loop.now)
        if say { log.warning("MQTT: \(broker): \(why); trying again with back-off") }
        retryTimer.schedule(afterMs: afterMs) { [weak self] in self?.connect() }
    }

    /// The session has lived `MonitorNodeClash.shortSessionMs`: the back-off starts again from
    /// its lower bound; said when sessions had ended at once before it.
    private func settled() {
        guard connection.state == .connected, let short = retry.settled(atMs: loop.now), short > 0 else { return }
        log.info("MQTT: the session with \(broker) has lasted \(MonitorNodeClash.shortSessionMs / 1000) s, after \(short) that the broker ended within \(MonitorNodeClash.shortSessionMs / 1000) s; "
            + "the back-off starts again from \(Self.retryMs.lowerBound / 1000) s")
    }

    private func refresh() {
        statusFile.rewatch()
        guard connection.state == .connected, let status = source?.status else { return }
        let h = health()
        perform(publisher.refresh(status, health: h, now: loop.now))
    }

    /// The local beacon daemon's status file judged as `altbeacond health` does; nil without one.
    /// Also sets what the publisher reads beside it (the time, the SoC's temperature, the
    /// card's firmware).
    private func health() -> HealthCheck.Result? {
        publisher.machine = LocalMachine(nowS: wallClockSeconds(), socTemperatureMilliC: socTemperature())
        publisher.firmware = firmware.read(nowS: publisher.machine.nowS)
        guard let bytes = try? readFile(statusFile.path, limit: 1 << 16) else { return nil }
        return HealthCheck.evaluate(path: statusFile.path, file: bytes, now: wallClockSeconds()) { pid in
            kill(pid, 0) == 0 || errno == EPERM
        }
    }

    /// The SoC's temperature (millidegrees), nil where the board has no thermal zone.
    private func socTemperature() -> Int64? {
        guard let bytes = try? readFile("/sys/class/thermal/thermal_zone0/temp", limit: 64) else { return nil }
        return Int64(String(decoding: bytes.prefix { $0 != 0x0a }, as: UTF8.self))
    }

    private func perform(_ actions: [MonitorPublisher.Action]) {
        let dropped = connection.droppedTotal
        for a in actions {
            switch a {
            case .publish(let p): connection.send(.publish(p))
            case .subscribe(let s): connection.send(.subscribe(s))
            case .scheduleRefresh(let ms): refreshTimer.schedule(afterMs: ms) { [weak self] in self?.refresh() }
            case .cannotPublish(let topic): log.warning("MQTT: cannot publish to '\(topic)'")
            case .remember(let topics): announced?.remember(topics)
            }
        }
        if connection.droppedTotal > dropped && !saidDrops {
            saidDrops = true
            log.warning("MQTT: \(broker) takes no more bytes; older messages are left out (the newest state of each topic is kept)")
        }
    }

    // MARK: monitor.toml edited

    /// An accepted edit of monitor.toml: the expectations, the node and `[mqtt]` as they now
    /// are. A new node or `[mqtt]` (the will's topic, the broker, the credentials, the control
    /// topics are the CONNECT's and the subscriptions'): `offline` said under the old node and
    /// a new session; otherwise the session stays and says everything again. Either way the new
    /// configuration's first burst clears what it no longer publishes (`MonitorPublisher.connected`).
    public func reconfigure(settings new: MQTTSettings, node newNode: String, config: MonitorConfig) {
        guard !stopping else { return }
        let reconnects = new != settings || newNode != node
        if reconnects, connection.state == .connected { perform(publisher.stopping()) }
        publisher = publisher.reconfigured(node: newNode, discoveryPrefix: new.discoveryPrefix, expectations: config.expectations,
                                           control: new.control)
        firmware.reconfigure(node: newNode, settings: new)
        guard reconnects else {
            guard connection.state == .connected, let status = source?.status else { return }
            let h = health()
            perform(publisher.connected(status, health: h, now: loop.now))
            return
        }
        let tlsBefore = settings.tls != nil
        settings = new; node = newNode
        clash = MonitorNodeClash(node: newNode, clientID: clash.clientID)
        if control.control.mode != new.control || control.control.node != newNode || tlsBefore != (new.tls != nil) {
            control = LocalBeaconControlInput(control: LocalBeaconControl(node: newNode, mode: new.control), statusPath: statusFile.path, log: log)
            control.start(tls: new.tls != nil)
        }
        log.info("MQTT: [mqtt] or the node changed: connecting again to \(broker) as node \(newNode)")
        connection.disconnect()
        retryTimer.cancel(); refreshTimer.cancel(); settleTimer.cancel(); resolver.cancel()
        connectedAtMs = nil
        retry = SessionRetry(range: MonitorMQTTOutput.retryMs, settleMs: MonitorNodeClash.shortSessionMs)
        connect()
    }

    private func perform(_ actions: [MonitorNodeClash.Action]) {
        for a in actions {
            switch a {
            case .subscribe(let s): connection.send(.subscribe(s))
            case .publish(let p): connection.send(.publish(p))
            case .say(let text): log.warning("MQTT: \(text)")
            }
        }
    }
}
