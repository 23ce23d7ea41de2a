// Issue 32: changes from afar. The monitor, the Pi's one MQTT client, listens on the local
// beacon's `set` topics and hands each message to the beacon daemon (no network) as a request
// file (`RemoteRequest`); the daemon judges it as a config edit. This decides, per message,
// which request to write or why none: no I/O here (BeaconLinux's RequestWriter writes it).

public struct LocalBeaconControl: Sendable {
    /// A larger payload is ignored: no value a setting takes is longer (a UUID is 36 bytes).
    public static let maximumPayload = 128
    /// The fleet topic's node level.
    public static let fleetNode = "all"

    public enum Decision: Equatable, Sendable {
        /// Write this request into the daemon's requests directory.
        case forward(RemoteRequest)
        /// Nothing to do; why, for the log.
        case ignore(String)
    }

    public let node: String
    public let mode: MQTTControl

    public init(node: String, mode: MQTTControl) { self.node = node; self.mode = mode }

    /// `altbeacond/<node>/beacon/set`.
    public static func setPrefix(node: String) -> String { MonitorExport.localBeaconTopic(node: node) + "/set" }

    /// The command topic of a setting or an action (`identify`, `restart`) on this beacon.
    public static func commandTopic(node: String, _ name: String) -> String { setPrefix(node: node) + "/" + name }

    /// The filters to subscribe to: none when off, this beacon's, and the fleet's.
    public var filters: [String] {
        switch mode {
        case .off: []
        case .beacon: [Self.setPrefix(node: node) + "/+"]
        case .fleet: [Self.setPrefix(node: node) + "/+", Self.setPrefix(node: Self.fleetNode) + "/+"]
        }
    }

    /// The SUBSCRIBE for `filters` (QoS 1: the session acknowledges what the broker sends at
    /// QoS 1, so a change is not lost to a dropped packet on the way); nil when off.
    public func subscribe(packetID: UInt16) -> MQTTSubscribe? {
        guard !filters.isEmpty else { return nil }
        return try? MQTTSubscribe(packetID: packetID, subscriptions: filters.map { MQTTSubscription($0, qos: .atLeastOnce) })
    }

    /// Whether `topic` is one of ours (else it is another subscription's message).
    public func handles(_ topic: String) -> Bool { mode != .off && name(in: topic) != nil }

    /// The last level of a `set` topic we listen on, and whether it came by the fleet topic.
    /// A node called "all" takes the fleet's rules: its own topic is the fleet's.
    private func name(in topic: String) -> (name: String, fleet: Bool)? {
        let fleetPrefix = Self.setPrefix(node: Self.fleetNode) + "/"
        let ownPrefix = Self.setPrefix(node: node) + "/"
        var rest: Substring
        var fleet = false
        if mode == .fleet, topic.hasPrefix(fleetPrefix) {
            rest = topic.dropFirst(fleetPrefix.count)
            fleet = true
        } else if topic.hasPrefix(ownPrefix) {
            rest = topic.dropFirst(ownPrefix.count)
            fleet = node == Self.fleetNode
        } else {
            return nil
        }
        guard !rest.isEmpty, !rest.contains("/") else { return nil }
        return (String(rest), fleet)
    }

    /// What to do with a message on a `set` topic.
    public func decide(topic: String, payload: [UInt8], retained: Bool) -> Decision {
        guard mode != .off, let (name, fleet) = name(in: topic) else { return .ignore("\(topic): not a control topic") }
        guard payload.count <= Self.maximumPayload else {
            return .ignore("\(topic): a payload of \(payload.count) bytes (at most \(Self.maximumPayload))")
        }
        // An empty message is how a retained one is cleared; the broker also forwards it live.
        guard !payload.isEmpty else { return .ignore("\(topic): an empty payload (a retained message cleared)") }
        let origin = "mqtt " + topic
        switch name {
        case "identify", "restart":
            // A retained button would fire again at every reconnect.
            if retained { return .ignore("\(topic): a retained \(name) (pressed once, not at every connection)") }
            return .forward(RemoteRequest(name == "identify" ? .identify : .restart, origin: origin))
        default:
            guard let setting = RemoteSetting(rawValue: name) else {
                return .ignore("\(topic): \(RemoteRequestError.unknownSetting(name)), identify or restart")
            }
            if fleet && setting.isIdentity {
                return .ignore("\(topic): \(name) is the beacon's identity, set one beacon at a time, never by the fleet topic")
            }
            // Retained settings are applied: idempotent, and how a new Pi gets the fleet's settings.
            return .forward(RemoteRequest(.set(setting, String(decoding: payload, as: UTF8.self)), origin: origin))
        }
    }
}
