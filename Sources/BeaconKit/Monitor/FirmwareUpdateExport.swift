// Issue 39: the card's firmware in Home Assistant: an `update` entity (device_class firmware) on
// the local beacon's device, and a diagnostic sensor "Update outcome" so that a rollback shows
// (and can trigger an automation). The entity's state topic, `altbeacond/<node>/update`, holds
// exactly what HA's MQTT_JSON_UPDATE_SCHEMA allows: since 2024.11 HA validates it, and an extra
// key or a null string drops the whole message (the entity stays unknown). The rest is on
// `altbeacond/<node>/update/detail`: the entity's attributes and the outcome sensor's state.

extension MonitorExport {
    /// The release summary's words; HA keeps 255 characters of it.
    static func releaseSummary(_ f: FirmwareUpdate) -> String {
        var parts: [String] = []
        switch f.capability {
        case .package: parts.append("A package install: updated with apt (sudo apt upgrade)")
        case .needsReflash: parts.append("This card's image predates A/B updates: reflash it once to get them")
        case .ab(let s):
            if let busy = progressWords(s) { parts.append(busy) }
            if f.control == .off {
                parts.append("Install needs [mqtt] control = \"beacon\" (or \"fleet\") in this card's monitor.toml")
            } else if !f.authenticated {
                parts.append("Install needs a broker that authenticates who publishes (mqtt.username and password_file)")
            }
            if f.release == nil {
                parts.append("No release known on \(f.releaseTopic)" + (f.releaseProblem.map { " (\($0))" } ?? ""))
            }
            if let r = f.release, r.install, f.control == .fleet, r.version != f.installedVersion {
                if f.rollbacks.halted(r) != nil {
                    parts.append("Rollout stopped: rolled back on \(f.rollbacks.count(r.version)) cards (halt_after \(r.haltAfter))")
                } else if !FleetRollout.inWave(node: f.node, release: r) {
                    parts.append("Rollout at \(r.rollout) %: this card waits for a wider one")
                }
            }
        }
        if let o = f.outcomeText { parts.append("Last: " + o) }
        return String(parts.joined(separator: ". ").prefix(255))
    }

    /// What the updater is doing, in words; nil when idle.
    static func progressWords(_ s: UpdaterState) -> String? {
        switch s.phase {
        case .idle?: return nil
        case .downloading?: return "Downloading"
        case .installing?: return "Installing" + (s.progress.map { ": \($0) %" } ?? "")
        case .rebooting?: return "Rebooting into the new slot"
        case .trial?: return "On trial: kept once its beacon is on air"
        case nil: return "Updating (\(s.phaseWord ?? ""))"
        }
    }

    /// The update entity's state, as HA's schema wants it: strings never null (a member not known
    /// is left out; release_summary is "" when there is nothing to say), `in_progress` a boolean,
    /// `update_percentage` 0...100 or null (the only null HA takes). With no release known the
    /// latest version is the installed one: up to date as far as the card knows, which the
    /// summary says, rather than a stale latest version left from an earlier message.
    public static func firmwareJSON(_ f: FirmwareUpdate) -> String {
        let s = f.updater
        let busy = s.map { !$0.isIdle } ?? false
        let percentage = s.flatMap { $0.phase == .installing ? $0.progress : nil }.map { min(max($0, 0), 100) }
        var members: [(String, String)] = [
            ("installed_version", jsonString(f.installedVersion)),
            ("latest_version", jsonString(f.release?.version ?? f.installedVersion)),
            ("title", "\"altbeacond\""),
            ("release_summary", jsonString(releaseSummary(f))),
        ]
        if let url = f.release?.releaseURL { members.append(("release_url", jsonString(url))) }
        members += [("in_progress", busy ? "true" : "false"), ("update_percentage", percentage.map { "\($0)" } ?? "null")]
        return "{" + members.map { jsonString($0.0) + ":" + $0.1 }.joined(separator: ",") + "}"
    }

    /// What HA's update schema has no place for: the last outcome, the updater's phase and the
    /// booted slot (null where not an A/B card), whether Install can work.
    public static func firmwareDetailJSON(_ f: FirmwareUpdate) -> String {
        let s = f.updater
        let members: [(String, String)] = [
            ("outcome", f.outcomeText.map(jsonString) ?? "null"),
            ("phase", s.map { jsonString($0.phaseWord ?? "idle") } ?? "null"),
            ("slot", s?.slot.map(jsonString) ?? "null"),
            ("can_install", f.installAvailable ? "true" : "false"),
        ]
        return "{" + members.map { jsonString($0.0) + ":" + $0.1 }.joined(separator: ",") + "}"
    }

    /// The update entity and the outcome sensor, on the local beacon's device; the Install
    /// (command topic) only where it can work (`FirmwareUpdate.installAvailable`). `announce`
    /// false (no beacon daemon here): empty payloads, which remove them.
    public static func firmwareDiscovery(_ f: FirmwareUpdate, prefix: String, announce: Bool, beaconVersion: String? = nil,
                                         shared: SharedBeaconDevice = .none, board: DeviceBoard = DeviceBoard(), beaconAddress: String? = nil,
                                         version: String = "") -> [(topic: String, payload: String)] {
        let node = f.node
        let id = localBeaconID(node: node)
        let state = jsonString(FirmwareUpdate.stateTopic(node: node))
        let detail = jsonString(FirmwareUpdate.detailTopic(node: node))
        let device = localBeaconDevice(node: node, version: beaconVersion, shared: shared, board: board, address: beaconAddress)
        var update: [(String, String)] = [("device_class", "\"firmware\""), ("entity_category", "\"config\""),
                                          ("json_attributes_topic", detail)]
        if f.installAvailable {
            update += [("command_topic", jsonString(FirmwareUpdate.commandTopic(node: node))),
                       ("payload_install", jsonString(FirmwareUpdate.installPayload))]
        }
        let entities = [
            // HA's update takes no expire_after; availability says when the monitor is gone.
            config(Entity(component: "update", object: "firmware", name: "Firmware", members: update),
                   id: id, node: node, prefix: prefix, state: state, device: device, expires: false, version: version),
            config(Entity(component: "sensor", object: "update_outcome", name: "Update outcome", members: [
                ("value_template", jsonString("{% if value_json is not defined %}unknown{% else %}{{ (value_json.outcome or 'none')[:255] }}{% endif %}")),
                ("json_attributes_topic", detail),
                ("json_attributes_template", jsonString("{{ ({'slot': value_json.slot, 'phase': value_json.phase} if value_json is defined else {}) | tojson }}")),
                ("icon", "\"mdi:update\""), ("entity_category", "\"diagnostic\""),
            ]), id: id, node: node, prefix: prefix, state: detail, device: device, version: version),
        ]
        return entities.map { announce ? $0 : (topic: $0.topic, payload: "") }
    }
}
