/// When the monitor publishes what over MQTT (SPEC §10, §12): `altbeacond/<node>/status`
/// (retained `online`; the will says `offline`), and, retained: each beacon's JSON, the
/// observer's (adapter, adverts per second), the local beacon daemon's health and its state as a
/// device of its own (`altbeacond/<node>/beacon`, issue 32), and Home Assistant
/// discovery, sent again when `<prefix>/status` says `online` (its birth message: it lost what it
/// knew). A beacon's heard/silent change goes at once; every `refreshMs` each state topic goes
/// again, changed or not, so that HA's `expire_after` (`MonitorExport.expireAfterS`) only fires
/// when the monitor stalled, never because a beacon stayed silent. Pure: the caller reads the
/// health file and sends what this returns, only while the session is connected.
public struct MonitorPublisher: Sendable {
    public static let refreshMs: Int64 = 30_000

    public enum Action: Sendable {
        case publish(MQTTPublish)
        case subscribe(MQTTSubscribe)
        /// The next periodic refresh (`refresh`).
        case scheduleRefresh(afterMs: Int64)
        /// A topic the codec refuses (said in the log; nothing sent).
        case cannotPublish(topic: String)
        /// The set of retained topics announced and not cleared changed: the caller keeps it
        /// (`MonitorAnnounced`, on the state partition) for the next start.
        case remember([String])
    }

    public private(set) var node: String
    public private(set) var discoveryPrefix: String
    public private(set) var expectations: [Expectation]
    /// `[mqtt] control`: off, the local beacon's control entities are cleared.
    public private(set) var control: MQTTControl
    /// The monitor's version: the observer's `sw_version` and every entity's `origin`.
    public private(set) var version: String
    /// The machine, for the devices' registry entries (issue 48): set once by the runner.
    public var board = DeviceBoard()
    /// The card's firmware (issue 39), an update entity on the local beacon's device: set by
    /// the caller (the updater's state read, a release heard) before each call.
    public var firmware: FirmwareUpdate
    private var topics: RetainedTopics
    private var local = LocalBeaconKnown()
    private var changeEvents = LocalChangeEvents()
    private var shownMachine = ShownMachine()
    private var rate = AdvertRate()

    /// Every retained topic published with a payload and not cleared since (`RetainedTopics`).
    public var announced: Set<String> { topics.announced }
    /// The time and the SoC's temperature, for the local beacon's state: set by the caller
    /// before each call.
    public var machine: LocalMachine {
        get { shownMachine.latest }
        set { shownMachine.latest = newValue }
    }
    public static let socStepMilliC = ShownMachine.stepMilliC

    /// `announced`: the topics an earlier run announced (`MonitorAnnounced.parse`); whatever of
    /// them this configuration no longer publishes is cleared at the next connection.
    public init(node: String, discoveryPrefix: String, expectations: [Expectation], control: MQTTControl = .off, version: String = "",
                announced: [String] = []) {
        self.node = node; self.discoveryPrefix = discoveryPrefix; self.expectations = expectations; self.control = control
        self.version = version
        topics = RetainedTopics(announced: announced)
        firmware = FirmwareUpdate(node: node, control: control, authenticated: false, monitorVersion: version)
    }

    /// The same monitor under a new configuration (monitor.toml edited): what this one
    /// announced, and what it knows of the local beacon daemon, carried over. The caller then
    /// starts a session with it (`connected`), which clears what the new one does not publish.
    public func reconfigured(node: String, discoveryPrefix: String, expectations: [Expectation], control: MQTTControl) -> MonitorPublisher {
        var p = self
        p.node = node; p.discoveryPrefix = discoveryPrefix; p.expectations = expectations; p.control = control
        _ = p.topics.newSession()   // nothing of the new configuration published yet
        p.firmware.reconfigure(node: node, releaseTopic: firmware.releaseTopic, control: control, authenticated: firmware.authenticated)
        return p
    }

    public var statusTopic: String { MonitorExport.statusTopic(node: node) }
    /// Home Assistant's birth and last-will topic.
    public var birthTopic: String { discoveryPrefix + "/status" }

    /// A new session: whatever the broker kept, said again; the birth topic subscribed; the
    /// discovery of the IDs before the escaping cleared. `health`: the local beacon daemon's
    /// status file judged (`HealthCheck`), nil when there is none.
    public mutating func connected(_ status: MonitorStatus, health: HealthCheck.Result?, now nowMs: Int64) -> [Action] {
        let before = topics.newSession()
        var out = publish(statusTopic, "online")
        if let s = try? MQTTSubscribe(packetID: 1, subscriptions: [MQTTSubscription(birthTopic)]) { out.append(.subscribe(s)) }
        for e in expectations {
            for t in MonitorExport.legacyDiscoveryTopics(e, node: node, prefix: discoveryPrefix) { out += publish(t, "") }
        }
        local.announced = local.announced || health != nil
        local.note(health)
        out += discovery(force: false)
        rate.count(status.tracker.advertsTotal, now: nowMs)
        out += states(status, health: health, force: true, clearsLocal: false)
        // What an earlier run (or configuration) announced and this one does not: its discovery
        // cleared now, its state topics at the next refresh.
        for t in topics.stale(before: before) { out += publish(t, "") }
        return out + topics.rememberIfChanged() + [.scheduleRefresh(afterMs: Self.refreshMs)]
    }

    /// Whether `message` is Home Assistant's birth message.
    public func isBirth(_ message: MQTTPublish) -> Bool {
        message.topic == birthTopic && message.payload == Array("online".utf8)
    }

    /// Home Assistant came (back) online: discovery and every topic again.
    public mutating func birth(_ status: MonitorStatus, health: HealthCheck.Result?) -> [Action] {
        local.announced = local.announced || health != nil
        local.note(health)
        return discovery(force: true) + states(status, health: health, force: true, clearsLocal: false) + topics.rememberIfChanged()
    }

    /// A beacon's heard/silent change, or the scan's: the topics that changed (the health entity
    /// announced when the status file first appears).
    public mutating func changed(_ status: MonitorStatus, health: HealthCheck.Result?) -> [Action] {
        return announceLocal(health) + states(status, health: health, force: false, clearsLocal: false) + topics.rememberIfChanged()
    }

    /// The periodic refresh: every state topic, changed or not, and the next refresh.
    public mutating func refresh(_ status: MonitorStatus, health: HealthCheck.Result?, now nowMs: Int64) -> [Action] {
        rate.count(status.tracker.advertsTotal, now: nowMs)
        var out = announceLocal(health) + states(status, health: health, force: true, clearsLocal: true)
        for t in topics.staleStatesDue() { out += publish(t, "") }
        return out + topics.rememberIfChanged() + [.scheduleRefresh(afterMs: Self.refreshMs)]
    }

    /// The local beacon's device announced when its status file first appears, and again when
    /// the daemon's version (its `sw_version`) or its frames' identities changed; unchanged
    /// discovery is not sent again.
    private mutating func announceLocal(_ health: HealthCheck.Result?) -> [Action] {
        local.noteAnnouncing(health) ? discovery(force: false) : []
    }

    /// Stopping: `offline` said ourselves (a clean DISCONNECT does not fire the will).
    public mutating func stopping() -> [Action] { publish(statusTopic, "offline", force: true) + topics.rememberIfChanged() }

    /// The observer first, so that the beacons' `via_device` names a device HA already has.
    private mutating func discovery(force: Bool) -> [Action] {
        var out: [Action] = []
        for d in MonitorExport.observerDiscovery(node: node, prefix: discoveryPrefix, board: board, version: version) {
            out += publish(d.topic, d.payload, force: force)
        }
        for d in MonitorExport.localBeaconDiscovery(node: node, prefix: discoveryPrefix, announce: local.announced,
                                                    beaconVersion: local.version, shared: local.shared, board: board,
                                                    beaconAddress: local.address, version: version) {
            out += publish(d.topic, d.payload, force: force)
        }
        let controls = local.announced && control != .off
        for d in MonitorExport.localBeaconControlDiscovery(node: node, prefix: discoveryPrefix, announce: controls,
                                                           beaconVersion: local.version, shared: local.shared, board: board,
                                                    beaconAddress: local.address, version: version) {
            out += publish(d.topic, d.payload, force: force)
        }
        out += firmwareDiscovery(force: force)
        for e in expectations {
            for d in MonitorExport.discovery(e, node: node, prefix: discoveryPrefix, version: version) {
                out += publish(d.topic, d.payload, force: force)
            }
        }
        return out
    }

    /// Every beacon's topic, the observer's and the health topic. The health file gone after it
    /// was read: the beacon daemon stopped (it removes the file), said as `not-running`.
    /// No beacon daemon here at all: the local beacon's retained state is cleared, but only
    /// when `clearsLocal` (a periodic refresh), never in the burst that removes its entities: HA
    /// removes them a moment after their empty discovery, and an empty state reaching them
    /// first is an error per entity in its log (issue 38).
    private mutating func states(_ status: MonitorStatus, health: HealthCheck.Result?, force: Bool, clearsLocal: Bool) -> [Action] {
        var out: [Action] = []
        for (s, e) in zip(status.tracker.states, expectations) {
            out += publish(MonitorExport.beaconTopic(node: node, name: s.name), MonitorExport.beaconJSON(s, expectation: e), force: force)
        }
        out += publish(MonitorExport.observerTopic(node: node), MonitorExport.observerJSON(status, advertsPerS: rate.perS), force: force)
        let gone = HealthCheck.Result(verdict: .unknown, reason: "no status file: the beacon daemon is not running", status: nil,
                                      absence: .notRunning)
        if let h = health ?? (local.announced ? gone : nil) {
            out += publish(MonitorExport.healthTopic(node: node), String(h.json.dropLast()), force: force)
            out += publish(MonitorExport.localBeaconTopic(node: node), MonitorExport.localBeaconJSON(h, machine: shownMachine.shown()), force: force)
            // kept (retained) while the daemon is not running: the entity is unavailable then
            if let started = MonitorExport.localBeaconStarted(h) {
                out += publish(MonitorExport.localBeaconStartedTopic(node: node), started, force: force)
            }
            out += changeEvent(h)
            // Its discovery changes with what the card can do (an Install appears): said first.
            out += firmwareDiscovery(force: false)
            out += publish(FirmwareUpdate.stateTopic(node: node), MonitorExport.firmwareJSON(firmware), force: force)
            out += publish(FirmwareUpdate.detailTopic(node: node), MonitorExport.firmwareDetailJSON(firmware), force: force)
            // the fleet's brake (issue 49): this card's rollback, counted by every other card
            if let r = firmware.rollbackReport { out += publish(r.topic, r.payload, force: force) }
        } else {
            // No beacon daemon here: nothing retained from one that ran before.
            out += publish(MonitorExport.healthTopic(node: node), "")
            if clearsLocal {
                out += publish(MonitorExport.localBeaconTopic(node: node), "")
                out += publish(MonitorExport.localBeaconStartedTopic(node: node), "")
                out += publish(FirmwareUpdate.stateTopic(node: node), "")
                out += publish(FirmwareUpdate.detailTopic(node: node), "")
            }
        }
        return out
    }

    /// The update entity and its outcome sensor, on the local beacon's device (cleared without one).
    private mutating func firmwareDiscovery(force: Bool) -> [Action] {
        var out: [Action] = []
        for d in MonitorExport.firmwareDiscovery(firmware, prefix: discoveryPrefix, announce: local.announced, beaconVersion: local.version,
                                                 shared: local.shared, board: board, beaconAddress: local.address, version: version) {
            out += publish(d.topic, d.payload, force: force)
        }
        return out
    }

    /// Each change of the status file as one event, not retained, once: not again at the next
    /// session, and not for a change made before the monitor first looked (a restarted monitor
    /// would say it twice). Every one a batch made, by its number (`n`) since the daemon started
    /// (issue 48: the file may hold several by the time it is read). Only with `[mqtt] control`
    /// on (the event entity's).
    private mutating func changeEvent(_ h: HealthCheck.Result) -> [Action] {
        changeEvents.look(nowS: machine.nowS)
        guard control != .off else { return [] }
        let events = changeEvents.new(MonitorExport.localBeaconChangeEvents(h), started: h.status?["started"]?.integer ?? 0, nowS: machine.nowS)
        return events.compactMap { e in
            (try? MQTTPublish(topic: MonitorExport.localBeaconChangeTopic(node: node), payload: Array(e.payload.utf8), retain: false)).map { .publish($0) }
        }
    }

    private mutating func publish(_ topic: String, _ payload: String, force: Bool = false) -> [Action] {
        topics.publish(topic, payload, force: force)
    }
}

/// The observer's adverts per second, between two refreshes.
struct AdvertRate: Sendable {
    private var last: (atMs: Int64, total: UInt64)?
    private(set) var perS: Double?

    mutating func count(_ total: UInt64, now nowMs: Int64) {
        if let last, nowMs > last.atMs, total >= last.total {
            perS = Double(total - last.total) * 1000 / Double(nowMs - last.atMs)
        }
        last = (nowMs, total)
    }
}
