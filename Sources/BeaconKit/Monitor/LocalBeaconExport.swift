// Issue 32: the beacon daemon on the monitor's own Pi as a Home Assistant device of its own,
// read from its status file (as `altbeacond health` judges it) and the board beside it (the SoC
// temperature), published by the monitor's MQTT client: the beacon daemon has no network.

/// What the monitor reads beside the status file: the time and the SoC's temperature.
public struct LocalMachine: Equatable, Sendable {
    /// Unix seconds.
    public var nowS: Int64
    /// `/sys/class/thermal/thermal_zone0/temp`, millidegrees; nil without one.
    public var socTemperatureMilliC: Int64?
    public init(nowS: Int64 = 0, socTemperatureMilliC: Int64? = nil) { self.nowS = nowS; self.socTemperatureMilliC = socTemperatureMilliC }
}

extension MonitorExport {
    /// `altbeacond/<node>/beacon`: the local beacon's state, one flat JSON object.
    public static func localBeaconTopic(node: String) -> String { "altbeacond/\(node)/beacon" }

    /// `altbeacond_beacon__<node>`: never an observer's or an expected beacon's ID (those begin
    /// `altbeacond__`).
    public static func localBeaconID(node: String) -> String { "altbeacond_beacon__\(idPart(node))" }

    /// `altbeacond/<node>/beacon/change`: one message, not retained, per change from afar the
    /// daemon applied or refused (issue 38), read by the "Change" event entity.
    public static func localBeaconChangeTopic(node: String) -> String { localBeaconTopic(node: node) + "/change" }

    /// `altbeacond/<node>/beacon/started`: when the running daemon started (`UTCTimestamp`),
    /// retained, the "Started" timestamp sensor's own topic: it changes only at a restart (one
    /// recorder row), and holds only times, never the null of a daemon that is not running
    /// (Home Assistant 2024.1 logs a warning for a timestamp sensor's unknown); that entity is
    /// unavailable then instead (`config`'s `daemonRunning`).
    public static func localBeaconStartedTopic(node: String) -> String { localBeaconTopic(node: node) + "/started" }

    /// The local beacon's Bluetooth address as its status file says (AA:BB:CC:DD:EE:FF), nil
    /// without one: the address on air, the device's `bluetooth` connection (`DeviceBoard`).
    public static func localBeaconAddress(_ status: JSONValue?) -> String? {
        guard let a = status?["address"]?.string, a.utf8.count == 17 else { return nil }
        return a
    }

    /// The running daemon's start for `localBeaconStartedTopic`; nil when it is not running.
    public static func localBeaconStarted(_ h: HealthCheck.Result) -> String? {
        guard h.verdict != .unknown, let started = h.status?["started"]?.integer else { return nil }
        return UTCTimestamp.rfc3339(started)
    }

    /// The local beacon's state: every value its entities show, null when not known. Whenever
    /// the daemon is not running (no status file, the file's pid dead, the file stale or no
    /// status file at all: `HealthCheck`'s verdict unknown), every value is null but `health`
    /// (`HealthCheck.Result.homeAssistantWord`: not-running, stale, unreadable), `on_air`
    /// (false) and `reason`: whatever the file left behind says is no longer true.
    public static func localBeaconJSON(_ h: HealthCheck.Result, machine: LocalMachine) -> String {
        let s = h.verdict == .unknown ? nil : h.status
        func text(_ key: String) -> String { s?[key]?.string.map(jsonString) ?? "null" }
        func number(_ key: String) -> String { s?[key]?.integer.map { "\($0)" } ?? "null" }
        var rearms = "null"
        if case .object(let m)? = s?["rearms"] { rearms = "\(m.reduce(Int64(0)) { $0 + ($1.1.integer ?? 0) })" }
        var frames = "null"
        if case .array(let items)? = s?["frames"] {
            frames = jsonString(items.compactMap { $0["on_air"] == .bool(true) ? $0["frame"]?.string : nil }.joined(separator: ", "))
        }
        var refused = "null"
        if case .bool(let b)? = s?["config_refused"] { refused = b ? "true" : "false" }
        let started = s?["started"]?.integer
        // The board's, not the daemon's: known whether the daemon runs or not.
        let soc = machine.socTemperatureMilliC.map { t in
            let tenths = (t + (t >= 0 ? 50 : -50)) / 100
            return "\(tenths < 0 ? "-" : "")\(abs(tenths) / 10).\(abs(tenths) % 10)"
        } ?? "null"
        func flag(_ key: String) -> String {
            guard case .bool(let b)? = s?[key] else { return "null" }
            return b ? "true" : "false"
        }
        let members: [(String, String)] = [
            ("health", jsonString(h.homeAssistantWord)),
            ("on_air", h.verdict == .onAir || h.verdict == .degraded ? "true" : "false"),
            ("reason", jsonString(h.reason)),
            ("phase", text("state")),
            ("fault", text("fault")),
            ("rearms", rearms),
            ("frames_on_air", frames),
            ("adapter", text("adapter")),
            ("interval_ms", number("interval_ms")),
            ("config_refused", refused),
            ("refused_edit", text("refused_edit")),
            ("version", text("version")),
            ("started", started.map { jsonString(UTCTimestamp.rfc3339($0)) } ?? "null"),
            ("soc_temperature_c", soc),
            // What the control entities show (issue 32): the configured values.
            ("uuid", text("uuid")),
            ("major", number("major")),
            ("minor", number("minor")),
            ("power", number("power")),
            ("configured_interval_ms", number("configured_interval_ms")),
            ("advertising", flag("advertising")),
            ("identifying", flag("identifying")),
        ] + configuredFrames(s) + [("change", lastChange(s)), ("change_time", s?["change"]?["time"]?.integer.map { "\($0)" } ?? "null")]
        return "{" + members.map { jsonString($0.0) + ":" + $0.1 }.joined(separator: ",") + "}"
    }

    /// The "Change" event of the status file's last change (issue 38): `event_type` applied or
    /// refused, `request`, `origin`, `message` and its `time` (Unix seconds), which makes two
    /// identical refusals two events; nil without one (or without a running daemon).
    public static func localBeaconChangeEvent(_ h: HealthCheck.Result) -> (time: Int64, payload: String)? {
        guard h.verdict != .unknown, let c = h.status?["change"] else { return nil }
        return changeEvent(c)
    }

    /// Every change the status file keeps (`changes`, issue 48: a batch's every outcome), oldest
    /// first, each with its number since the daemon started; a file without `changes` (a daemon
    /// before it) gives its last change with no number.
    public static func localBeaconChangeEvents(_ h: HealthCheck.Result) -> [(n: Int64?, time: Int64, payload: String)] {
        guard h.verdict != .unknown, let s = h.status else { return [] }
        guard case .array(let items)? = s["changes"] else {
            return localBeaconChangeEvent(h).map { [(n: nil, time: $0.time, payload: $0.payload)] } ?? []
        }
        return items.compactMap { c in changeEvent(c).flatMap { e in c["n"]?.integer.map { (n: $0, time: e.time, payload: e.payload) } } }
    }

    static func changeEvent(_ c: JSONValue) -> (time: Int64, payload: String)? {
        guard let request = c["request"]?.string, let outcome = c["outcome"]?.string, let time = c["time"]?.integer else { return nil }
        return (time, "{\"event_type\":\(jsonString(outcome)),\"request\":\(jsonString(request)),"
                + "\"origin\":\(jsonString(c["origin"]?.string ?? "")),\"message\":\(jsonString(c["message"]?.string ?? "")),"
                + "\"time\":\(time)}")
    }

    // MARK: value templates (issue 38)
    //
    // Every template reads `value_json` only once it is defined: an empty message on the state
    // topic (the retained state cleared) renders no error in HA's log. A null shows as HA's
    // unknown: `None` for a binary_sensor, switch, number or numeric sensor (HA 2024.1's
    // components/mqtt: PAYLOAD_NONE), and `unknown` for a text sensor, whose rendered string HA
    // takes verbatim as the state (sensor.py `_update_state`; no result makes it None), and
    // `unknown` is the very string HA writes for a None state (helpers/entity.py `_stringify_state`).

    /// `value_json.<key>`, none when the payload is no JSON.
    static func jinjaValue(_ key: String) -> String { "(value_json.\(key) if value_json is defined else none)" }

    /// A numeric sensor's or a number's template: the value, `None` when null.
    static func numericTemplate(_ key: String) -> String {
        "{% set v = \(jinjaValue(key)) %}{{ 'None' if v is none else v }}"
    }

    /// A binary_sensor's or a switch's template: ON, OFF, or `None` when null.
    static func onOffTemplate(_ key: String) -> String {
        "{% set v = \(jinjaValue(key)) %}{{ 'None' if v is none else ('ON' if v else 'OFF') }}"
    }

    /// A text sensor's template: the value (`absent` when it is null while the daemon runs),
    /// `unknown` while the daemon is not running (`phase` null).
    static func textTemplate(_ key: String, absent: String? = nil, limit: Int = 255) -> String {
        var unknown = "value_json is not defined or value_json.phase is none"
        if absent == nil { unknown += " or value_json.\(key) is none" }
        let value = absent.map { "(value_json.\(key) or '\($0)')" } ?? "value_json.\(key)"
        return "{% if \(unknown) %}unknown{% else %}{{ \(value)[:\(limit)] }}{% endif %}"
    }

    /// The local beacon's device block: its daemon's version as `sw_version` when known; its
    /// `via_device` the observer (the monitor is its only way to Home Assistant); and, beside
    /// its own ID, the identity of each AltBeacon and iBeacon frame it has on air (`shared`),
    /// so that another monitor expecting that frame adds its entities to this device (Home
    /// Assistant merges devices that share an identifier; issue 38), named as every announcer
    /// of that beacon names it (issue 48). "<node> beacon" with no such frame.
    /// `board` and `address` (its Bluetooth address, from the status file): `DeviceBoard`.
    static func localBeaconDevice(node: String, version: String?, shared: SharedBeaconDevice = .none, board: DeviceBoard = DeviceBoard(),
                                  address: String? = nil) -> String {
        let named = shared.identifiers.isEmpty ? (name: "\(node) beacon", model: "altbeacond (beacon)") : (name: shared.name, model: shared.model)
        return "{\"identifiers\":[" + ([localBeaconID(node: node)] + shared.identifiers).map(jsonString).joined(separator: ",") + "],"
            + "\"name\":\(jsonString(named.name)),\"model\":\(jsonString(named.model)),\"manufacturer\":\"altbeacond\""
            + (version.map { ",\"sw_version\":" + jsonString($0) } ?? "")
            + board.deviceMembers(address: address)
            + ",\"via_device\":" + jsonString(discoveryID(node: node)) + "}"
    }

    /// The device IDs (`beaconDeviceID`) of the AltBeacon and iBeacon frames the daemon's
    /// status file lists as configured (`SharedBeaconDevice.local`).
    public static func localBeaconFrameIDs(_ status: JSONValue?) -> [String] { SharedBeaconDevice.local(status).identifiers }

    /// The local beacon's device and its entities, all read from `localBeaconTopic`. `announce`
    /// false: every pair has an empty payload, which removes the entity (no beacon daemon here).
    /// `beaconVersion`: the daemon's (the device's `sw_version`); `shared`: its frames' identities,
    /// name and model (`SharedBeaconDevice.local`); `version`: the monitor's (`origin`).
    public static func localBeaconDiscovery(node: String, prefix: String, announce: Bool, beaconVersion: String? = nil,
                                            shared: SharedBeaconDevice = .none, board: DeviceBoard = DeviceBoard(), beaconAddress: String? = nil,
                                            version: String = "") -> [(topic: String, payload: String)] {
        let id = localBeaconID(node: node)
        let state = jsonString(localBeaconTopic(node: node))
        let device = localBeaconDevice(node: node, version: beaconVersion, shared: shared, board: board, address: beaconAddress)
        func v(_ t: String) -> (String, String) { ("value_template", jsonString(t)) }
        let diagnostic = ("entity_category", "\"diagnostic\"")
        let entities: [Entity] = [
            Entity(component: "binary_sensor", object: "on_air", name: "On air", members: [
                ("device_class", "\"connectivity\""), v("{{ 'ON' if value_json is defined and value_json.on_air else 'OFF' }}"),
                ("payload_on", "\"ON\""), ("payload_off", "\"OFF\""),
            ]),
            // No attributes: `reason` of a stale file changes at each refresh (a recorder row each).
            Entity(component: "sensor", object: "health", name: "Health", members: [
                ("device_class", "\"enum\""), ("options", "[" + healthOptions.map(jsonString).joined(separator: ",") + "]"),
                v("{{ value_json.health if value_json is defined else 'not-running' }}"),
            ]),
            Entity(component: "sensor", object: "phase", name: "Phase", members: [v(textTemplate("phase")), diagnostic]),
            Entity(component: "sensor", object: "fault", name: "Fault", members: [v(textTemplate("fault", absent: "none"))]),
            Entity(component: "sensor", object: "rearms", name: "Re-arms", members: [
                ("state_class", "\"total_increasing\""), v(numericTemplate("rearms")), diagnostic,
            ]),
            Entity(component: "sensor", object: "frames", name: "Frames on air", members: [v(textTemplate("frames_on_air", absent: "none"))]),
            Entity(component: "sensor", object: "adapter", name: "Adapter", members: [v(textTemplate("adapter")), diagnostic]),
            Entity(component: "sensor", object: "interval", name: "Interval on air", members: [
                ("device_class", "\"duration\""), ("unit_of_measurement", "\"ms\""), v(numericTemplate("interval_ms")), diagnostic,
            ]),
            Entity(component: "binary_sensor", object: "config_refused", name: "Config refused", members: [
                ("device_class", "\"problem\""), v(onOffTemplate("config_refused")),
                ("payload_on", "\"ON\""), ("payload_off", "\"OFF\""), ("json_attributes_topic", state),
                // The refused edit's headline: it changes only with the config.
                ("json_attributes_template", jsonString("{{ ({'refused_edit': value_json.refused_edit} if value_json is defined else {}) | tojson }}")),
            ]),
            Entity(component: "sensor", object: "soc_temperature", name: "SoC temperature", members: [
                ("device_class", "\"temperature\""), ("unit_of_measurement", jsonString("°C")), ("state_class", "\"measurement\""),
                v(numericTemplate("soc_temperature_c")), diagnostic,
            ]),
            Entity(component: "sensor", object: "version", name: "Version", members: [v(textTemplate("version")), diagnostic]),
        ]
        var out = entities.map { e in
            let c = config(e, id: id, node: node, prefix: prefix, state: state, device: device, version: version)
            return announce ? c : (topic: c.topic, payload: "")
        }
        // When the daemon started, as a timestamp (HA shows "3 hours ago"), on a topic of its own
        // and published only when it changes: an uptime in seconds was a recorder row at every
        // publish (issue 48). No expire_after: nothing is republished while nothing changes.
        let started = config(Entity(component: "sensor", object: "started", name: "Started", members: [
            ("device_class", "\"timestamp\""), diagnostic,
        ]), id: id, node: node, prefix: prefix, state: jsonString(localBeaconStartedTopic(node: node)), device: device,
            expires: false, daemonRunning: state, version: version)
        out.append(announce ? started : (topic: started.topic, payload: ""))
        // The Uptime sensor of earlier versions: removed (an empty retained config).
        out.append((topic: "\(prefix)/sensor/\(id)/uptime/config", payload: ""))
        return out
    }

    /// The Health entity's options: never HA's reserved `unknown`.
    public static let healthOptions = ["on-air", "degraded", "off-air"] + HealthCheck.Absence.allCases.map(\.rawValue)
}
