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
    }

    public let node: String
    public let discoveryPrefix: String
    public let expectations: [Expectation]
    /// `[mqtt] control`: off, the local beacon's control entities are cleared.
    public let control: MQTTControl
    /// What each retained topic last got in this session, so that changes alone go between refreshes.
    private var published: [String: String] = [:]
    /// The adverts counted at the last refresh, for the rate.
    private var lastCount: (atMs: Int64, total: UInt64)?
    private var advertsPerS: Double?
    /// The local beacon's device is announced: once its status file was read.
    private var healthAnnounced = false
    /// The monitor's version: the observer's `sw_version` and every entity's `origin`.
    public let version: String
    /// The beacon daemon's version, from its status file (the local beacon's `sw_version`):
    /// the last one read, kept while the daemon is away so that its discovery does not change.
    private var beaconVersion: String?
    /// The "Change" events (issue 38): the last one sent, never again in a later session; and
    /// when the monitor first looked, so that a change older than that is not sent as new.
    private var lastChangeEvent: String?
    private var firstLookS: Int64?
    /// The time and the SoC's temperature, for the local beacon's state: set by the caller
    /// before each call.
    public var machine = LocalMachine()

    public init(node: String, discoveryPrefix: String, expectations: [Expectation], control: MQTTControl = .off, version: String = "") {
        self.node = node; self.discoveryPrefix = discoveryPrefix; self.expectations = expectations; self.control = control
        self.version = version
    }

    public var statusTopic: String { MonitorExport.statusTopic(node: node) }
    /// Home Assistant's birth and last-will topic.
    public var birthTopic: String { discoveryPrefix + "/status" }

    /// A new session: whatever the broker kept, said again; the birth topic subscribed; the
    /// discovery of the IDs before the escaping cleared. `health`: the local beacon daemon's
    /// status file judged (`HealthCheck`), nil when there is none.
    public mutating func connected(_ status: MonitorStatus, health: HealthCheck.Result?, nowMs: Int64) -> [Action] {
        published = [:]
        var out = publish(statusTopic, "online")
        if let s = try? MQTTSubscribe(packetID: 1, subscriptions: [MQTTSubscription(birthTopic)]) { out.append(.subscribe(s)) }
        for e in expectations {
            for t in MonitorExport.legacyDiscoveryTopics(e, node: node, prefix: discoveryPrefix) { out += publish(t, "") }
        }
        healthAnnounced = healthAnnounced || health != nil
        noteVersion(health)
        out += discovery(force: false)
        count(status, nowMs: nowMs)
        return out + states(status, health: health, force: true, clearsLocal: false) + [.scheduleRefresh(afterMs: Self.refreshMs)]
    }

    /// Whether `message` is Home Assistant's birth message.
    public func isBirth(_ message: MQTTPublish) -> Bool {
        message.topic == birthTopic && message.payload == Array("online".utf8)
    }

    /// Home Assistant came (back) online: discovery and every topic again.
    public mutating func birth(_ status: MonitorStatus, health: HealthCheck.Result?) -> [Action] {
        healthAnnounced = healthAnnounced || health != nil
        noteVersion(health)
        return discovery(force: true) + states(status, health: health, force: true, clearsLocal: false)
    }

    /// A beacon's heard/silent change, or the scan's: the topics that changed (the health entity
    /// announced when the status file first appears).
    public mutating func changed(_ status: MonitorStatus, health: HealthCheck.Result?) -> [Action] {
        return announceLocal(health) + states(status, health: health, force: false, clearsLocal: false)
    }

    /// The periodic refresh: every state topic, changed or not, and the next refresh.
    public mutating func refresh(_ status: MonitorStatus, health: HealthCheck.Result?, nowMs: Int64) -> [Action] {
        count(status, nowMs: nowMs)
        return announceLocal(health) + states(status, health: health, force: true, clearsLocal: true) + [.scheduleRefresh(afterMs: Self.refreshMs)]
    }

    /// The local beacon's device announced when its status file first appears, and again when
    /// the daemon's version changed (its `sw_version`); unchanged discovery is not sent again.
    private mutating func announceLocal(_ health: HealthCheck.Result?) -> [Action] {
        let before = beaconVersion
        noteVersion(health)
        guard (health != nil && !healthAnnounced) || (healthAnnounced && before != beaconVersion) else { return [] }
        healthAnnounced = true
        return discovery(force: false)
    }

    private mutating func noteVersion(_ health: HealthCheck.Result?) {
        if let v = health?.status?["version"]?.string { beaconVersion = v }
    }

    /// Stopping: `offline` said ourselves (a clean DISCONNECT does not fire the will).
    public mutating func stopping() -> [Action] { publish(statusTopic, "offline", force: true) }

    private mutating func count(_ status: MonitorStatus, nowMs: Int64) {
        let total = status.tracker.advertsTotal
        if let last = lastCount, nowMs > last.atMs, total >= last.total {
            advertsPerS = Double(total - last.total) * 1000 / Double(nowMs - last.atMs)
        }
        lastCount = (nowMs, total)
    }

    /// The observer first, so that the beacons' `via_device` names a device HA already has.
    private mutating func discovery(force: Bool) -> [Action] {
        var out: [Action] = []
        for d in MonitorExport.observerDiscovery(node: node, prefix: discoveryPrefix, version: version) {
            out += publish(d.topic, d.payload, force: force)
        }
        for d in MonitorExport.localBeaconDiscovery(node: node, prefix: discoveryPrefix, announce: healthAnnounced,
                                                    beaconVersion: beaconVersion, version: version) {
            out += publish(d.topic, d.payload, force: force)
        }
        let controls = healthAnnounced && control != .off
        for d in MonitorExport.localBeaconControlDiscovery(node: node, prefix: discoveryPrefix, announce: controls,
                                                           beaconVersion: beaconVersion, version: version) {
            out += publish(d.topic, d.payload, force: force)
        }
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
        out += publish(MonitorExport.observerTopic(node: node), MonitorExport.observerJSON(status, advertsPerS: advertsPerS), force: force)
        let gone = HealthCheck.Result(verdict: .unknown, reason: "no status file: the beacon daemon is not running", status: nil,
                                      absence: .notRunning)
        if let h = health ?? (healthAnnounced ? gone : nil) {
            out += publish(MonitorExport.healthTopic(node: node), String(h.json.dropLast()), force: force)
            out += publish(MonitorExport.localBeaconTopic(node: node), MonitorExport.localBeaconJSON(h, machine: machine), force: force)
            out += changeEvent(h)
        } else {
            // No beacon daemon here: nothing retained from one that ran before.
            out += publish(MonitorExport.healthTopic(node: node), "")
            if clearsLocal { out += publish(MonitorExport.localBeaconTopic(node: node), "") }
        }
        return out
    }

    /// The status file's last change as one event, not retained, once: not again at the next
    /// session, and not for a change made before the monitor first looked (a restarted monitor
    /// would say it twice). Only with `[mqtt] control` on (the event entity's).
    private mutating func changeEvent(_ h: HealthCheck.Result) -> [Action] {
        let first = firstLookS ?? machine.nowS
        firstLookS = first
        guard control != .off, let e = MonitorExport.localBeaconChangeEvent(h), e.payload != lastChangeEvent else { return [] }
        lastChangeEvent = e.payload
        guard e.time >= first,
              let p = try? MQTTPublish(topic: MonitorExport.localBeaconChangeTopic(node: node), payload: Array(e.payload.utf8), retain: false)
        else { return [] }
        return [.publish(p)]
    }

    private mutating func publish(_ topic: String, _ payload: String, force: Bool = false) -> [Action] {
        guard force || published[topic] != payload else { return [] }
        guard let p = try? MQTTPublish(topic: topic, payload: Array(payload.utf8), retain: true) else { return [.cannotPublish(topic: topic)] }
        published[topic] = payload
        return [.publish(p)]
    }
}
