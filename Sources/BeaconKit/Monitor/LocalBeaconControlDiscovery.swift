// Issue 32: the local beacon's control entities in Home Assistant (`[mqtt] control` on): each
// sends to a `set` topic (`LocalBeaconControl`) and reads its state from the beacon topic, where
// the daemon's status file says what the config now holds. What the daemon refused shows in
// "Last change" and, one event per change even when two are alike (issue 38), in the "Change"
// event entity; the entity keeps the configured value.

extension MonitorExport {
    /// The frame switches (the frame table's `BeaconFrames.switches`): the setting, and the status
    /// file's frame names that make it ON.
    static let frameSwitches: [(setting: RemoteSetting, name: String, frames: [String])] =
        BeaconFrames.switches.map { (RemoteSetting($0), $0.displayName, BeaconFrames.names(switchedBy: $0)) }

    /// `frame_<setting>`: true when the status file lists the frame as configured (on air or
    /// not), null without a frames list.
    static func configuredFrames(_ s: JSONValue?) -> [(String, String)] {
        guard case .array(let items)? = s?["frames"] else { return frameSwitches.map { ("frame_" + $0.setting.rawValue, "null") } }
        let names = Set(items.compactMap { $0["frame"]?.string })
        return frameSwitches.map { f in ("frame_" + f.setting.rawValue, f.frames.contains(where: names.contains) ? "true" : "false") }
    }

    /// What `beacon.uuid` takes (ConfigSchema's parseUUID): 32 hex digits, plain or 8-4-4-4-12;
    /// and `unknown`, the text entity's state while the daemon is not running (HA checks its
    /// state against the pattern too). A text entity shows `unknown` disabled.
    public static let uuidPattern = "^(unknown|[0-9A-Fa-f]{32}|[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12})$"

    /// The status file's `change` in words: "applied: set power -40", "refused: set power 5:
    /// config.toml:3:9: …"; null when there was none.
    static func lastChange(_ s: JSONValue?) -> String {
        guard let c = s?["change"], let request = c["request"]?.string, let outcome = c["outcome"]?.string else { return "null" }
        let message = c["message"]?.string ?? ""
        return jsonString("\(outcome): \(request)" + (message.isEmpty ? "" : ": " + message))
    }

    /// The control entities, on the local beacon's device. `announce` false (control off, or no
    /// beacon daemon here): every pair has an empty payload, which removes the entity.
    public static func localBeaconControlDiscovery(node: String, prefix: String, announce: Bool, beaconVersion: String? = nil,
                                                   shared: SharedBeaconDevice = .none, board: DeviceBoard = DeviceBoard(), beaconAddress: String? = nil,
                                                   version: String = "") -> [(topic: String, payload: String)] {
        let id = localBeaconID(node: node)
        let state = jsonString(localBeaconTopic(node: node))
        let device = localBeaconDevice(node: node, version: beaconVersion, shared: shared, board: board, address: beaconAddress)
        func command(_ name: String) -> (String, String) { ("command_topic", jsonString(LocalBeaconControl.commandTopic(node: node, name))) }
        func v(_ t: String) -> (String, String) { ("value_template", jsonString(t)) }
        let config = ("entity_category", "\"config\"")
        // `key`: the state's member; the interval's is the configured one (`interval_ms` is on air).
        func number(_ s: RemoteSetting, _ name: String, unit: String?, key: String? = nil) -> Entity {
            let range = s.range ?? 0...0
            var m = [command(s.rawValue), ("command_template", jsonString("{{ value | int }}")), v(numericTemplate(key ?? s.rawValue)),
                     ("min", "\(range.lowerBound)"), ("max", "\(range.upperBound)"), ("step", "1"), ("mode", "\"box\""), config]
            if let unit { m.append(("unit_of_measurement", jsonString(unit))) }
            return Entity(component: "number", object: s.rawValue, name: name, members: m)
        }
        func toggle(_ s: RemoteSetting, _ name: String, key: String) -> Entity {
            Entity(component: "switch", object: s.rawValue, name: name, members: [
                command(s.rawValue), v(onOffTemplate(key)),
                ("payload_on", "\"ON\""), ("payload_off", "\"OFF\""), ("state_on", "\"ON\""), ("state_off", "\"OFF\""), config,
            ])
        }
        var entities: [Entity] = [
            // HA refuses what the config would (`uuidPattern`) before sending; its state is the
            // pattern's too, so unknown shows as `unknown`.
            Entity(component: "text", object: "uuid", name: "UUID", members: [
                command("uuid"), v("{% set v = \(jinjaValue("uuid")) %}{{ 'unknown' if v is none else v }}"),
                ("min", "0"), ("max", "64"), ("pattern", jsonString(uuidPattern)), config,
            ]),
            number(.major, "Major", unit: nil),
            number(.minor, "Minor", unit: nil),
            number(.power, "Power", unit: "dBm"),
            number(.intervalMs, "Advertising interval", unit: "ms", key: "configured_interval_ms"),
            toggle(.advertising, "Advertising", key: "advertising"),
        ]
        entities += frameSwitches.map { toggle($0.setting, $0.name, key: "frame_" + $0.setting.rawValue) }
        entities += [
            Entity(component: "button", object: "identify", name: "Identify", members: [
                command("identify"), ("payload_press", "\"PRESS\""), ("device_class", "\"identify\""),
            ]),
            Entity(component: "button", object: "restart", name: "Restart", members: [
                command("restart"), ("payload_press", "\"PRESS\""), ("device_class", "\"restart\""), config,
            ]),
            Entity(component: "sensor", object: "last_change", name: "Last change", members: [
                v(textTemplate("change", absent: "none")), ("icon", "\"mdi:history\""),
            ]),
            // One event per change the daemon applied or refused, on a topic of its own.
            Entity(component: "event", object: "change", name: "Change", members: [
                ("event_types", "[\"applied\",\"refused\"]"), ("icon", "\"mdi:history\""),
            ]),
        ]
        let changes = jsonString(localBeaconChangeTopic(node: node))
        return entities.map { e in
            // Only the sensor expires: HA's text, number, switch, button and event take no expire_after.
            let stateless = e.component == "button"
            // The controls (text, number, switch, button) unavailable while the daemon is not
            // running (issue 48): nothing would take a change, and the values are not known.
            let control = e.component != "sensor" && e.component != "event"
            let c = MonitorExport.config(e, id: id, node: node, prefix: prefix,
                                         state: stateless ? nil : e.component == "event" ? changes : state, device: device,
                                         expires: e.component == "sensor", daemonRunning: control ? state : nil, version: version)
            return announce ? c : (topic: c.topic, payload: "")
        }
    }
}
