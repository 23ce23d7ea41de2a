// Home Assistant MQTT discovery (SPEC §10, §12): per entity, `<prefix>/<component>/<id>/<object>/config`,
// retained. The observer (this monitor) is a device of its own, and each expected beacon a device
// named by its identity (issue 38: one per beacon, however many monitors hear it), to which each
// monitor adds entities of its own.

extension MonitorExport {
    /// One entity, as published: the retained JSON of its state topic carries every value, each
    /// entity picks its own with a template.
    struct Entity {
        var component: String
        var object: String
        var name: String
        var members: [(String, String)]   // key, JSON value
    }

    /// `expire_after` of the entities whose state topic the monitor republishes every
    /// `MonitorPublisher.refreshMs` (changed or not): four periods, so a late or lost refresh
    /// costs nothing, while a monitor that stalls without its will firing (a keep-alive of up to
    /// an hour) still turns them `unavailable` within 2 minutes. Silence is said by the payload
    /// (`heard: false`), never by expiry.
    public static var expireAfterS: Int { Int(MonitorPublisher.refreshMs / 1000) * 4 }

    /// `altbeacond__<node>__<name>`: each part escaped (`idPart`), the parts joined by `__`,
    /// which no escaped part holds (its `_` is always followed by two hex digits). Injective:
    /// node `hall_pi` + beacon `lobby` and node `hall` + beacon `pi_lobby` get different IDs.
    /// The expected beacons' IDs before issue 38 (one device per monitor and name), whose
    /// retained discovery the monitor clears (`legacyDiscoveryTopics`).
    public static func discoveryID(node: String, name: String) -> String { "altbeacond__\(idPart(node))__\(idPart(name))" }

    /// `<type>__<id>__<id>…`: a beacon frame's identity, each part escaped (`idPart`), joined by
    /// `__`; the type says how many IDs follow, so it is injective. The same frame gives the
    /// same key on every monitor, whatever its `[expect.NAME]`.
    public static func frameKey(type: String, ids: [String]) -> String {
        ([type] + ids).map(idPart).joined(separator: "__")
    }

    public static func frameKey(_ e: Expectation) -> String { frameKey(type: e.type, ids: e.fields.map(\.value)) }

    /// `altbeacond_frame__<frameKey>`: the Home Assistant device of an expected beacon (issue
    /// 38), from its identity and nothing else, so that every monitor expecting that frame
    /// names one device, and the local beacon's device, carrying it too, is that device.
    public static func beaconDeviceID(type: String, ids: [String]) -> String { "altbeacond_frame__" + frameKey(type: type, ids: ids) }

    public static func beaconDeviceID(_ e: Expectation) -> String { "altbeacond_frame__" + frameKey(e) }

    /// `altbeacond__<node>__<frameKey>`: one monitor's entities of an expected beacon (their
    /// topic's node ID and their unique_id's stem), so that two monitors hearing one beacon
    /// contribute entities of their own to its one device.
    public static func beaconEntityID(_ e: Expectation, node: String) -> String { "altbeacond__\(idPart(node))__" + frameKey(e) }

    /// What the frame is, for its device's `model` (who made the beacon is not on air).
    static func frameModel(_ type: String) -> String { BeaconFrames.model(type) }

    /// `altbeacond__<node>`: the observer, as `via_device` names it.
    public static func discoveryID(node: String) -> String { "altbeacond__\(idPart(node))" }

    /// `A-Z a-z 0-9 -` kept, any other byte (`_`, `.`, UTF-8) as `_` and two lowercase hex digits:
    /// HA's discovery topics allow only `A-Z a-z 0-9 _ -` in the node ID.
    static func idPart(_ s: String) -> String {
        var out = ""
        for b in s.utf8 {
            if isBareKeyByte(b) && b != UInt8(ascii: "_") { out.unicodeScalars.append(Unicode.Scalar(b)) } else { out += "_" + hexString(CollectionOfOne(b)) }
        }
        return out
    }

    /// The IDs before the escaping (`altbeacond_<node>_<name>`, every byte outside
    /// `A-Z a-z 0-9 _ -` as `_`), whose retained discovery the monitor clears.
    static func legacyDiscoveryID(node: String, name: String) -> String {
        String(decoding: "altbeacond_\(node)_\(name)".utf8.map { isBareKeyByte($0) ? $0 : UInt8(ascii: "_") }, as: UTF8.self)
    }

    static let beaconObjects = [("binary_sensor", "connectivity"), ("sensor", "rssi"), ("sensor", "temperature"),
                                ("sensor", "battery"), ("sensor", "uptime")]

    /// The retained discovery topics of one beacon under the IDs of earlier versions (before
    /// the escaping, and one device per monitor and name before issue 38): the monitor
    /// publishes an empty retained payload to each, which deletes the entity in HA and the
    /// message on the broker.
    public static func legacyDiscoveryTopics(_ e: Expectation, node: String, prefix: String) -> [String] {
        [legacyDiscoveryID(node: node, name: e.name), discoveryID(node: node, name: e.name)].flatMap { id in
            beaconObjects.map { "\(prefix)/\($0.0)/\(id)/\($0.1)/config" }
        }
    }

    /// The (topic, retained JSON payload) pairs announcing one expected beacon: its device,
    /// identified and named by its identity (`beaconDeviceID`, `SharedBeaconDevice`), one
    /// however many monitors hear it (no `via_device`: no one monitor is its way in); and this monitor's own
    /// entities on it, named after the node: connectivity ("Heard by <node>", ON while heard,
    /// OFF while silent), RSSI, and the TLM temperature, battery voltage and uptime (unknown
    /// until a TLM frame is heard, and while the beacon is silent). Every entity is unavailable while `statusTopic` says
    /// "offline" (the monitor's will) or after `expireAfterS` without a refresh.
    public static func discovery(_ e: Expectation, node: String, prefix: String, version: String = "") -> [(topic: String, payload: String)] {
        let id = beaconEntityID(e, node: node)
        let state = jsonString(beaconTopic(node: node, name: e.name))
        // Named by its identity, as every other announcer of it names it (issue 48).
        let shared = SharedBeaconDevice.of(e)
        let device = "{\"identifiers\":[\(jsonString(beaconDeviceID(e)))],\"name\":\(jsonString(shared.name)),"
            + "\"model\":\(jsonString(shared.model))}"
        // Unknown while the beacon is silent (issue 48): the last TLM heard stays in the state
        // JSON, but a silent beacon's temperature or battery is not known any more.
        func tlm(_ key: String) -> String {
            jsonString("{{ value_json.tlm.\(key) if value_json is defined and value_json.heard and value_json.tlm "
                       + "and value_json.tlm.\(key) is not none else 'None' }}")
        }
        let entities: [Entity] = [
            Entity(component: "binary_sensor", object: "connectivity", name: "Heard by \(node)", members: [
                ("device_class", "\"connectivity\""),
                ("value_template", jsonString("{{ 'ON' if value_json is defined and value_json.heard else 'OFF' }}")),
                ("payload_on", "\"ON\""), ("payload_off", "\"OFF\""),
                // What rarely changes (issue 38): the whole JSON (last_seen, rssi, adverts) would
                // be a recorder row per beacon at every refresh.
                ("json_attributes_topic", state),
                // `name`: this monitor's own name for it (`[expect.NAME]`), not the device's.
                ("json_attributes_template", jsonString("{{ ({'name': value_json.name, 'type': value_json.type, "
                                                        + "'address': value_json.address, 'reboots': value_json.reboots} "
                                                        + "if value_json is defined else {}) | tojson }}")),
            ]),
            Entity(component: "sensor", object: "rssi", name: "\(node) RSSI", members: [
                ("device_class", "\"signal_strength\""), ("unit_of_measurement", "\"dBm\""), ("state_class", "\"measurement\""),
                ("value_template", jsonString(numericTemplate("rssi"))), ("entity_category", "\"diagnostic\""),
            ]),
            Entity(component: "sensor", object: "temperature", name: "Temperature via \(node)", members: [
                ("device_class", "\"temperature\""), ("unit_of_measurement", jsonString("°C")), ("state_class", "\"measurement\""),
                ("value_template", tlm("temperature_c")),
            ]),
            Entity(component: "sensor", object: "battery", name: "Battery voltage via \(node)", members: [
                ("device_class", "\"voltage\""), ("unit_of_measurement", "\"mV\""), ("state_class", "\"measurement\""),
                ("value_template", tlm("battery_mv")),
            ]),
            // As ESPHome's uptime sensor: total_increasing (the beacon's reboot begins a new cycle).
            Entity(component: "sensor", object: "uptime", name: "Uptime via \(node)", members: [
                ("device_class", "\"duration\""), ("unit_of_measurement", "\"s\""), ("state_class", "\"total_increasing\""),
                ("value_template", tlm("uptime_s")), ("entity_category", "\"diagnostic\""),
            ]),
        ]
        return entities.map { config($0, id: id, node: node, prefix: prefix, state: state, device: device, version: version) }
    }

    /// The observer's device and entities: "Monitor" (connectivity, read from the status topic
    /// itself, so it is OFF, not unavailable, after the will), adverts per second and the
    /// adapter's state (the observer topic). Last, an empty payload for the "Beacon health"
    /// entity it had before the local beacon became a device of its own (issue 32): HA drops it.
    /// `version`: the monitor's, the observer's `sw_version` and every entity's `origin`.
    /// `board`: the machine's model, serial and area (`DeviceBoard`; no Bluetooth address here).
    public static func observerDiscovery(node: String, prefix: String, board: DeviceBoard = DeviceBoard(),
                                         version: String = "") -> [(topic: String, payload: String)] {
        let id = discoveryID(node: node)
        let observer = jsonString(observerTopic(node: node))
        let device = "{\"identifiers\":[\(jsonString(id))],\"name\":\(jsonString(node)),"
            + "\"model\":\"altbeacond monitor (observer)\",\"manufacturer\":\"altbeacond\""
            + (version.isEmpty ? "" : ",\"sw_version\":" + jsonString(version)) + board.deviceMembers() + "}"
        return [
            config(Entity(component: "binary_sensor", object: "monitor", name: "Monitor", members: [
                ("device_class", "\"connectivity\""), ("payload_on", "\"online\""), ("payload_off", "\"offline\""),
                ("entity_category", "\"diagnostic\""),
            ]), id: id, node: node, prefix: prefix, state: jsonString(statusTopic(node: node)), device: device, availability: false,
               version: version),
            config(Entity(component: "sensor", object: "adverts", name: "Adverts per second", members: [
                ("unit_of_measurement", "\"adverts/s\""), ("state_class", "\"measurement\""),
                ("value_template", jsonString(numericTemplate("adverts_per_s"))), ("entity_category", "\"diagnostic\""),
            ]), id: id, node: node, prefix: prefix, state: observer, device: device, version: version),
            config(Entity(component: "sensor", object: "adapter", name: "Adapter", members: [
                ("value_template", jsonString("{% if value_json is not defined %}unknown{% elif value_json.scanning %}scanning"
                                              + "{% else %}{{ (value_json.scan_problem or 'not scanning')[:255] }}{% endif %}")),
                // What rarely changes (issue 38), not the advert counts of each refresh.
                ("json_attributes_topic", observer),
                ("json_attributes_template", jsonString("{{ ({'adapter': value_json.adapter, 'beacons_expected': value_json.beacons_expected} "
                                                        + "if value_json is defined else {}) | tojson }}")),
                ("entity_category", "\"diagnostic\""),
            ]), id: id, node: node, prefix: prefix, state: observer, device: device, version: version),
            (topic: "\(prefix)/sensor/\(id)/beacon_health/config", payload: ""),
        ]
    }

    /// One entity's discovery message. `availability`: the status topic says whether the values
    /// are current (not for the entity that shows the status itself), and `expireAfterS` bounds
    /// how old they may be (`expires`: for the components that take it). `state` nil: none (a button).
    /// `daemonRunning`: the local beacon's state topic (JSON string), for an entity that is
    /// `unavailable` while the beacon daemon is not running (its `phase` null) as well as after
    /// the monitor's will (issue 48: a control or the start time of a dead daemon shows nothing).
    static func config(_ ent: Entity, id: String, node: String, prefix: String, state: String?, device: String,
                       availability: Bool = true, expires: Bool = true, daemonRunning: String? = nil,
                       version: String = "") -> (topic: String, payload: String) {
        var m: [(String, String)] = [
            ("name", jsonString(ent.name)),
            ("unique_id", jsonString("\(id)__\(ent.object)")),
        ]
        if let state { m.append(("state_topic", state)) }
        m += ent.members
        if availability {
            if expires { m.append(("expire_after", "\(expireAfterS)")) }
            if let daemonRunning {
                // both must say online (HA's availability_mode all)
                let running = jsonString("{{ 'online' if value_json is defined and value_json.phase is not none else 'offline' }}")
                m += [
                    ("availability", "[{\"topic\":\(jsonString(statusTopic(node: node))),\"payload_available\":\"online\","
                        + "\"payload_not_available\":\"offline\"},{\"topic\":\(daemonRunning),\"value_template\":\(running),"
                        + "\"payload_available\":\"online\",\"payload_not_available\":\"offline\"}]"),
                    ("availability_mode", "\"all\""),
                ]
            } else {
                m += [
                    ("availability_topic", jsonString(statusTopic(node: node))),
                    ("payload_available", "\"online\""), ("payload_not_available", "\"offline\""),
                ]
            }
        }
        m += [("device", device), ("origin", "{\"name\":\"altbeacond\"" + (version.isEmpty ? "" : ",\"sw_version\":" + jsonString(version)) + "}")]
        let payload = "{" + m.map { jsonString($0.0) + ":" + $0.1 }.joined(separator: ",") + "}"
        return (topic: "\(prefix)/\(ent.component)/\(id)/\(ent.object)/config", payload: payload)
    }
}
