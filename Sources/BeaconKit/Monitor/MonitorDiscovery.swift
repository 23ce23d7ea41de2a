// Home Assistant MQTT discovery (SPEC §10): per entity, `<prefix>/<component>/<id>/<object>/config`,
// retained, each payload naming the same device so HA groups the entities of one expected beacon.

extension MonitorExport {
    /// What goes on air as published: the retained JSON of the beacon topic carries every value,
    /// each entity picks its own with a template.
    struct Entity {
        var component: String
        var object: String
        var name: String
        var members: [(String, String)]   // key, JSON value
    }

    /// `altbeacond_<node>_<name>`, with every byte outside `A-Z a-z 0-9 _ -` as `_`: HA's
    /// discovery topics allow no other in the node ID (a node name may hold `.`).
    public static func discoveryID(node: String, name: String) -> String { idSafe("altbeacond_\(node)_\(name)") }

    /// `altbeacond_<node>`: the observer, as `via_device` names it.
    public static func discoveryID(node: String) -> String { idSafe("altbeacond_\(node)") }

    private static func idSafe(_ s: String) -> String {
        String(decoding: s.utf8.map { isBareKeyByte($0) ? $0 : UInt8(ascii: "_") }, as: UTF8.self)
    }

    /// The (topic, retained JSON payload) pairs announcing one expected beacon to Home
    /// Assistant: a device per beacon, and its entities: connectivity (binary_sensor, ON while
    /// heard, expiring after twice `silentAfterS` without an update), RSSI, and the TLM
    /// temperature, battery voltage and uptime (unknown until a TLM frame is heard). Every entity
    /// is unavailable while `statusTopic` says "offline" (the monitor's will).
    public static func discovery(_ e: Expectation, node: String, prefix: String, silentAfterS: Int) -> [(topic: String, payload: String)] {
        let id = discoveryID(node: node, name: e.name)
        let state = jsonString(beaconTopic(node: node, name: e.name))
        let device = "{\"identifiers\":[\(jsonString(id))],\"name\":\(jsonString(e.name)),"
            + "\"model\":\"altbeacond monitor\",\"manufacturer\":\"altbeacond\","
            + "\"via_device\":\(jsonString(discoveryID(node: node)))}"
        func tlm(_ key: String) -> String { jsonString("{{ value_json.tlm.\(key) if value_json.tlm else None }}") }
        let entities: [Entity] = [
            Entity(component: "binary_sensor", object: "connectivity", name: "On air", members: [
                ("device_class", "\"connectivity\""),
                ("value_template", jsonString("{{ 'ON' if value_json.heard else 'OFF' }}")),
                ("payload_on", "\"ON\""), ("payload_off", "\"OFF\""),
                ("expire_after", "\(max(1, silentAfterS) * 2)"),
                ("json_attributes_topic", state),
            ]),
            Entity(component: "sensor", object: "rssi", name: "RSSI", members: [
                ("device_class", "\"signal_strength\""), ("unit_of_measurement", "\"dBm\""), ("state_class", "\"measurement\""),
                ("value_template", jsonString("{{ value_json.rssi }}")), ("entity_category", "\"diagnostic\""),
            ]),
            Entity(component: "sensor", object: "temperature", name: "Temperature", members: [
                ("device_class", "\"temperature\""), ("unit_of_measurement", jsonString("°C")), ("state_class", "\"measurement\""),
                ("value_template", tlm("temperature_c")),
            ]),
            Entity(component: "sensor", object: "battery", name: "Battery voltage", members: [
                ("device_class", "\"voltage\""), ("unit_of_measurement", "\"mV\""), ("state_class", "\"measurement\""),
                ("value_template", tlm("battery_mv")),
            ]),
            Entity(component: "sensor", object: "uptime", name: "Uptime", members: [
                ("device_class", "\"duration\""), ("unit_of_measurement", "\"s\""), ("state_class", "\"measurement\""),
                ("value_template", tlm("uptime_s")), ("entity_category", "\"diagnostic\""),
            ]),
        ]
        return entities.map { ent in
            var m: [(String, String)] = [
                ("name", jsonString(ent.name)),
                ("unique_id", jsonString("\(id)_\(ent.object)")),
                ("state_topic", state),
            ]
            m += ent.members
            m += [
                ("availability_topic", jsonString(statusTopic(node: node))),
                ("payload_available", "\"online\""), ("payload_not_available", "\"offline\""),
                ("device", device),
                ("origin", "{\"name\":\"altbeacond\"}"),
            ]
            let payload = "{" + m.map { jsonString($0.0) + ":" + $0.1 }.joined(separator: ",") + "}"
            return (topic: "\(prefix)/\(ent.component)/\(id)/\(ent.object)/config", payload: payload)
        }
    }
}
