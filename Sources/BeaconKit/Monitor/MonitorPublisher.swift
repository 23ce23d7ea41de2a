/// When the monitor publishes what over MQTT (SPEC §10): `altbeacond/<node>/status` (retained
/// `online`; the will says `offline`), each beacon's retained JSON on every heard/silent change
/// and, while it changes, at most every `refreshMs`, the local beacon daemon's health, and Home
/// Assistant discovery, sent again when `<prefix>/status` says `online` (its birth message: it
/// lost what it knew). Only what changed goes, except after a birth message. Pure: the caller
/// reads the health file and sends what this returns, only while the session is connected.
public struct MonitorPublisher: Sendable {
    public static let refreshMs: Int64 = 30_000

    public enum Action: Sendable {
        case publish(MQTTPublish)
        case subscribe(MQTTSubscribe)
        /// The next refresh of the beacons' topics.
        case scheduleRefresh(afterMs: Int64)
        /// A topic the codec refuses (said in the log; nothing sent).
        case cannotPublish(topic: String)
    }

    public let node: String
    public let discoveryPrefix: String
    public let expectations: [Expectation]
    public let silentAfterS: Int
    /// What each retained topic last got in this session, so only changes are sent.
    private var published: [String: String] = [:]

    public init(node: String, discoveryPrefix: String, expectations: [Expectation], silentAfterS: Int) {
        self.node = node; self.discoveryPrefix = discoveryPrefix; self.expectations = expectations; self.silentAfterS = silentAfterS
    }

    public var statusTopic: String { MonitorExport.statusTopic(node: node) }
    /// Home Assistant's birth and last-will topic.
    public var birthTopic: String { discoveryPrefix + "/status" }

    /// A new session: whatever the broker kept, said again; the birth topic subscribed.
    public mutating func connected(_ tracker: BeaconTracker, health: String?) -> [Action] {
        published = [:]
        var out = publish(statusTopic, "online")
        if let s = try? MQTTSubscribe(packetID: 1, subscriptions: [MQTTSubscription(birthTopic)]) { out.append(.subscribe(s)) }
        out += discovery(force: false)
        return out + beacons(tracker, health: health, force: false)
    }

    /// Whether `message` is Home Assistant's birth message.
    public func isBirth(_ message: MQTTPublish) -> Bool {
        message.topic == birthTopic && message.payload == Array("online".utf8)
    }

    /// Home Assistant came (back) online: discovery and every topic again, changed or not.
    public mutating func birth(_ tracker: BeaconTracker, health: String?) -> [Action] {
        discovery(force: true) + beacons(tracker, health: health, force: true)
    }

    /// A heard/silent change, or the refresh: the topics that changed.
    public mutating func refresh(_ tracker: BeaconTracker, health: String?) -> [Action] {
        beacons(tracker, health: health, force: false)
    }

    /// Stopping: `offline` said ourselves (a clean DISCONNECT does not fire the will).
    public mutating func stopping() -> [Action] { publish(statusTopic, "offline", force: true) }

    private mutating func discovery(force: Bool) -> [Action] {
        var out: [Action] = []
        for e in expectations {
            for d in MonitorExport.discovery(e, node: node, prefix: discoveryPrefix, silentAfterS: silentAfterS) {
                out += publish(d.topic, d.payload, force: force)
            }
        }
        return out
    }

    /// Every beacon's topic and the health topic, then the next refresh.
    private mutating func beacons(_ tracker: BeaconTracker, health: String?, force: Bool) -> [Action] {
        var out: [Action] = []
        for (s, e) in zip(tracker.states, expectations) {
            out += publish(MonitorExport.beaconTopic(node: node, name: s.name), MonitorExport.beaconJSON(s, expectation: e), force: force)
        }
        if let health { out += publish(MonitorExport.healthTopic(node: node), health, force: force) }
        return out + [.scheduleRefresh(afterMs: Self.refreshMs)]
    }

    private mutating func publish(_ topic: String, _ payload: String, force: Bool = false) -> [Action] {
        guard force || published[topic] != payload else { return [] }
        guard let p = try? MQTTPublish(topic: topic, payload: Array(payload.utf8), retain: true) else { return [.cannotPublish(topic: topic)] }
        published[topic] = payload
        return [.publish(p)]
    }
}
