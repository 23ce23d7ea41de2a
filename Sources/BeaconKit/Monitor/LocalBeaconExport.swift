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

    /// The local beacon's state: every value its entities show, null when not known (no status
    /// file: the daemon is not running).
    public static func localBeaconJSON(_ h: HealthCheck.Result, machine: LocalMachine) -> String {
        let s = h.status
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
        let uptime = started.map { "\(max(0, machine.nowS - $0))" } ?? "null"
        let soc = machine.socTemperatureMilliC.map { t in
            let tenths = (t + (t >= 0 ? 50 : -50)) / 100
            return "\(tenths < 0 ? "-" : "")\(abs(tenths) / 10).\(abs(tenths) % 10)"
        } ?? "null"
        func flag(_ key: String) -> String {
            guard case .bool(let b)? = s?[key] else { return "null" }
            return b ? "true" : "false"
        }
        let members: [(String, String)] = [
            ("health", jsonString(h.verdict.word)),
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
            ("uptime_s", uptime),
            ("soc_temperature_c", soc),
            // What the control entities show (issue 32): the configured values.
            ("uuid", text("uuid")),
            ("major", number("major")),
            ("minor", number("minor")),
            ("power", number("power")),
            ("advertising", flag("advertising")),
            ("identifying", flag("identifying")),
        ] + configuredFrames(s) + [("change", lastChange(s))]
        return "{" + members.map { jsonString($0.0) + ":" + $0.1 }.joined(separator: ",") + "}"
    }

    /// The local beacon's device and its entities, all read from `localBeaconTopic`. `announce`
    /// false: every pair has an empty payload, which removes the entity (no beacon daemon here).
    public static func localBeaconDiscovery(node: String, prefix: String, announce: Bool) -> [(topic: String, payload: String)] {
        let id = localBeaconID(node: node)
        let state = jsonString(localBeaconTopic(node: node))
        let device = "{\"identifiers\":[\(jsonString(id))],\"name\":\(jsonString("\(node) beacon")),"
            + "\"model\":\"altbeacond (beacon)\",\"manufacturer\":\"altbeacond\"}"
        func v(_ t: String) -> (String, String) { ("value_template", jsonString(t)) }
        let diagnostic = ("entity_category", "\"diagnostic\"")
        let entities: [Entity] = [
            Entity(component: "binary_sensor", object: "on_air", name: "On air", members: [
                ("device_class", "\"connectivity\""), v("{{ 'ON' if value_json.on_air else 'OFF' }}"),
                ("payload_on", "\"ON\""), ("payload_off", "\"OFF\""),
            ]),
            Entity(component: "sensor", object: "health", name: "Health", members: [
                ("device_class", "\"enum\""), ("options", "[\"on-air\",\"degraded\",\"off-air\",\"unknown\"]"),
                v("{{ value_json.health }}"), ("json_attributes_topic", state),
                ("json_attributes_template", jsonString("{{ {'reason': value_json.reason} | tojson }}")),
            ]),
            Entity(component: "sensor", object: "phase", name: "Phase", members: [v("{{ value_json.phase or 'stopped' }}"), diagnostic]),
            Entity(component: "sensor", object: "fault", name: "Fault", members: [v("{{ value_json.fault or 'none' }}")]),
            Entity(component: "sensor", object: "rearms", name: "Re-arms", members: [
                ("state_class", "\"total_increasing\""), v("{{ value_json.rearms }}"), diagnostic,
            ]),
            Entity(component: "sensor", object: "frames", name: "Frames on air", members: [v("{{ value_json.frames_on_air }}")]),
            Entity(component: "sensor", object: "adapter", name: "Adapter", members: [v("{{ value_json.adapter }}"), diagnostic]),
            Entity(component: "sensor", object: "interval", name: "Interval", members: [
                ("device_class", "\"duration\""), ("unit_of_measurement", "\"ms\""), v("{{ value_json.interval_ms }}"), diagnostic,
            ]),
            Entity(component: "binary_sensor", object: "config_refused", name: "Config refused", members: [
                ("device_class", "\"problem\""), v("{{ 'ON' if value_json.config_refused else 'OFF' }}"),
                ("payload_on", "\"ON\""), ("payload_off", "\"OFF\""), ("json_attributes_topic", state),
                ("json_attributes_template", jsonString("{{ {'refused_edit': value_json.refused_edit} | tojson }}")),
            ]),
            Entity(component: "sensor", object: "soc_temperature", name: "SoC temperature", members: [
                ("device_class", "\"temperature\""), ("unit_of_measurement", jsonString("°C")), ("state_class", "\"measurement\""),
                v("{{ value_json.soc_temperature_c }}"), diagnostic,
            ]),
            Entity(component: "sensor", object: "uptime", name: "Uptime", members: [
                ("device_class", "\"duration\""), ("unit_of_measurement", "\"s\""), ("state_class", "\"measurement\""),
                v("{{ value_json.uptime_s }}"), diagnostic,
            ]),
            Entity(component: "sensor", object: "version", name: "Version", members: [v("{{ value_json.version }}"), diagnostic]),
        ]
        return entities.map { e in
            let c = config(e, id: id, node: node, prefix: prefix, state: state, device: device)
            return announce ? c : (topic: c.topic, payload: "")
        }
    }
}
