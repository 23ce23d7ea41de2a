// Issue 39: the card's firmware in Home Assistant: an `update` entity (device_class firmware) on
// the local beacon's device, and a diagnostic sensor "Update outcome" so that a rollback shows
// (and can trigger an automation). Both read one retained JSON, `altbeacond/<node>/update`.
// HA 2024.1's components/mqtt/update.py reads installed_version, latest_version, title,
// release_summary, release_url and entity_picture from it and ignores other members; 2024.11+
// also reads in_progress and update_percentage, sent for it.

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

    /// The update entity's state: what HA reads, then the outcome sensor's, the phase and the
    /// booted slot (null where not an A/B card).
    public static func firmwareJSON(_ f: FirmwareUpdate) -> String {
        let s = f.updater
        let busy = s.map { !$0.isIdle } ?? false
        let percentage = s.flatMap { $0.phase == .installing ? $0.progress : nil }
        let summary = releaseSummary(f)
        let members: [(String, String)] = [
            ("installed_version", jsonString(f.installedVersion)),
            ("latest_version", f.release.map { jsonString($0.version) } ?? "null"),
            ("title", "\"altbeacond\""),
            ("release_summary", summary.isEmpty ? "null" : jsonString(summary)),
            ("release_url", f.release?.releaseURL.map(jsonString) ?? "null"),
            ("in_progress", busy ? "true" : "false"),
            ("update_percentage", percentage.map { "\($0)" } ?? "null"),
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
                                         frameIDs: [String] = [], version: String = "") -> [(topic: String, payload: String)] {
        let node = f.node
        let id = localBeaconID(node: node)
        let state = jsonString(FirmwareUpdate.stateTopic(node: node))
        let device = localBeaconDevice(node: node, version: beaconVersion, frameIDs: frameIDs)
        var update: [(String, String)] = [("device_class", "\"firmware\""), ("entity_category", "\"config\"")]
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
                ("json_attributes_topic", state),
                ("json_attributes_template", jsonString("{{ ({'slot': value_json.slot, 'phase': value_json.phase} if value_json is defined else {}) | tojson }}")),
                ("icon", "\"mdi:update\""), ("entity_category", "\"diagnostic\""),
            ]), id: id, node: node, prefix: prefix, state: state, device: device, version: version),
        ]
        return entities.map { announce ? $0 : (topic: $0.topic, payload: "") }
    }
}
