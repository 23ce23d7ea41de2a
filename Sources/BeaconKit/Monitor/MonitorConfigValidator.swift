// monitor.toml against `MonitorSchema`, with the beacon config's typed-key readers, ranking and
// diagnostics (`ConfigValidator`): every problem collected, the real mistake first.

extension ConfigValidator {
    mutating func validateMonitor(_ root: TOMLTable) -> MonitorConfig? {
        var tables: [String: TOMLTable] = [:]
        for e in root.entries {
            guard let keys = MonitorSchema.keys(of: e.key) else {
                reportUnknownInMonitor(table: nil, entry: e)
                continue
            }
            guard case .table(let t) = e.value else {
                report("expected a table for \(e.key), found \(e.value.typeDescription)", at: e.valuePosition)
                continue
            }
            if !sameKey(e.key, "expect") {
                for k in t.entries where !keys.contains(where: { sameKey($0, k.key) }) { reportUnknownInMonitor(table: e.key, entry: k) }
            }
            tables[e.key] = t   // e.key is byte-equal to a schema name here
        }
        var config = readMonitorTable(tables["monitor"] ?? TOMLTable())
        // No [expect] at all is fine with [mqtt]: the monitor then publishes this Pi's own beacon
        // (issue 32); an [expect] table without beacons is a mistake either way.
        config.expectations = readExpectations(tables["expect"], defined: root.entry("expect") != nil || tables["mqtt"] != nil)
        config.metrics = tables["metrics"].map { readMetrics($0) } ?? MetricsSettings()
        config.mqtt = tables["mqtt"].flatMap { readMQTT($0) }
        guard problems.isEmpty, !config.expectations.isEmpty || config.mqtt != nil else { return nil }
        return config
    }

    // MARK: - [monitor]

    mutating func readMonitorTable(_ t: TOMLTable) -> MonitorConfig {
        var out = MonitorConfig(expectations: [])
        if let (s, p) = string(t, "monitor", "adapter") {
            if let n = parseAdapterIndex(s) {
                out.adapter = s
                out.adapterIndex = n
            } else {
                report("monitor.adapter must be hciN with N from 0 to 65534 and no leading zeros, like \"hci0\"", at: p)
            }
        }
        if let v = integer(t, "monitor", "silent_after_s", MonitorConfig.silentAfterRange) { out.silentAfterS = Int(v) }
        if let v = integer(t, "monitor", "rescan_s", MonitorConfig.rescanRange) { out.rescanS = Int(v) }
        if let (s, p) = string(t, "monitor", "node") {
            if MonitorConfig.isValidNode(s) {
                out.node = s
            } else {
                report("monitor.node must be 1 to \(MonitorConfig.nodeMaxLength) letters, digits, _, - or . (it is one MQTT topic level), like \"hall-pi\"", at: p)
            }
        }
        if let (s, p) = string(t, "monitor", "area") {
            // any text a person names a room with, but no control character (it is a JSON string
            // in every discovery payload) and not empty
            if (1...MonitorConfig.areaMaxLength).contains(s.count), !s.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7f }) {
                out.area = s
            } else {
                report("monitor.area must be 1 to \(MonitorConfig.areaMaxLength) characters without control characters, like \"Lobby\"", at: p)
            }
        }
        return out
    }

    // MARK: - [expect.NAME]

    mutating func readExpectations(_ t: TOMLTable?, defined: Bool) -> [Expectation] {
        guard let t else {
            if !defined {
                report("no beacon to expect: add an [expect.NAME] table, like [expect.lobby] with type = \"altbeacon\", uuid, major and minor "
                       + "(or [mqtt] alone, to publish this Pi's own beacon)",
                       at: .start, rank: .missing, key: "expect")
            }
            return []
        }
        if t.isEmpty {
            report("[expect] lists no beacon: expected beacons are tables [expect.NAME], like [expect.lobby]", at: t.position, rank: .missing)
            return []
        }
        var out: [(Expectation, SourcePosition)] = []
        for e in t.entries {
            guard case .table(let bt) = e.value else {
                report("`expect.\(displayKey([e.key]))` is not a beacon: each expected beacon is a table [expect.NAME], like [expect.lobby]", at: e.keyPosition)
                continue
            }
            guard Expectation.isValidName(e.key) else {
                report("[\(displayKey(["expect", e.key]))]: the name must be 1 to \(Expectation.nameMaxLength) letters, digits, _ or - (it is an MQTT topic level and a Prometheus label)", at: e.keyPosition)
                continue
            }
            guard let x = readExpectation(e.key, bt) else { continue }
            if let first = out.first(where: { $0.0.sameFrame(as: x) }) {
                report("[expect.\(x.name)] expects the same \(x.type) frame as [expect.\(first.0.name)] (line \(first.1.line))", at: bt.position)
                continue
            }
            out.append((x, bt.position))
        }
        return out.map(\.0)
    }

    mutating func readExpectation(_ name: String, _ t: TOMLTable) -> Expectation? {
        let table = "expect.\(name)"
        let before = problems.count
        for k in t.entries where !MonitorSchema.expectKeys.contains(where: { sameKey($0, k.key) }) {
            let full = displayKey(["expect", name, k.key])
            var what = "unknown key `\(full)`"
            if case .table = k.value { what = "unknown table [\(full)]" }
            if let c = closest(k.key, among: MonitorSchema.expectKeys) {
                report("\(what); did you mean `\(table).\(c)`?", at: k.keyPosition, key: "\(table).\(c)")
            } else {
                report("\(what); [expect.NAME] takes \(MonitorSchema.expectKeys.joined(separator: ", "))", at: k.keyPosition)
            }
        }
        guard let (type, tp) = string(t, table, "type", required: true) else { return nil }
        let frameType = BeaconFrames.types.first { sameKey($0.name, type) }
        guard let frameType = frameType as? any ExpectableFrame.Type else {
            let names = MonitorSchema.types.map { $0.name }
            if let frameType {
                report("\(table).type \"\(frameType.name)\" cannot be expected: \(frameType.traits.notExpectable)", at: tp)
            } else if let c = closest(type, among: names) {
                report("\(table).type must be one of \(names.joined(separator: ", ")); did you mean \"\(c)\"?", at: tp)
            } else {
                report("\(table).type must be one of \(names.joined(separator: ", "))", at: tp)
            }
            return nil
        }
        let keys = frameType.traits.identifyingKeys
        for k in t.entries where !keys.contains(where: { sameKey($0, k.key) }) && !sameKey(k.key, "type")
            && MonitorSchema.expectKeys.contains(where: { sameKey($0, k.key) }) {
            report("\(table).\(k.key) does not apply to type \"\(type)\", which is identified by \(keys.joined(separator: ", "))", at: k.keyPosition)
        }
        let frame = frameType.expected(&self, t, name: table)
        guard problems.count == before, let frame else { return nil }
        return Expectation(name: name, frame: frame)
    }

    /// `uuid`, `major` and `minor` of an `[expect.NAME]` (AltBeacon, iBeacon), all required: each
    /// read, so each problem is reported.
    mutating func expectedUUIDMajorMinor(_ t: TOMLTable, _ table: String) -> (uuid: [UInt8], major: UInt16, minor: UInt16)? {
        let uuid = readUUID(t, table: table)
        let major = integer(t, table, "major", BeaconIdentity.majorMinorRange, required: true)
        let minor = integer(t, table, "minor", BeaconIdentity.majorMinorRange, required: true)
        guard let uuid, let major, let minor else { return nil }
        return (uuid, UInt16(truncatingIfNeeded: major), UInt16(truncatingIfNeeded: minor))
    }

    // MARK: - [mqtt]

    mutating func readMQTT(_ t: TOMLTable) -> MQTTSettings? {
        let before = problems.count
        var out = MQTTSettings(host: "")
        if let (s, p) = string(t, "mqtt", "host", required: true) {
            let u = s.utf8
            if let hint = MQTTSettings.portInHost(s) {
                report("mqtt.host \"\(s)\" \(hint)", at: p)
            } else if u.isEmpty || u.count > 253 || u.contains(where: { $0 <= 0x20 || $0 == 0x7F || $0 == UInt8(ascii: "/") }) {
                report("mqtt.host must be a host name or an IP address, like \"broker.local\" or \"192.168.1.10\"", at: p)
            } else {
                out.host = s
            }
        }
        out.tls = readMQTTTLS(t)
        if out.tls != nil { out.port = MQTTTLSSettings.defaultPort }
        if let v = integer(t, "mqtt", "port", 1...65535) { out.port = UInt16(truncatingIfNeeded: v) }
        if let (s, p) = string(t, "mqtt", "username") {
            if s.utf8.isEmpty || s.utf8.count > 65535 || s.unicodeScalars.contains(where: \.isControlCharacter) {
                report("mqtt.username must be 1 to 65535 bytes without control characters (leave it out to connect anonymously)", at: p)
            } else {
                out.username = s
            }
        }
        if let (s, p) = string(t, "mqtt", "password_file") {
            if !s.hasPrefix("/") || s.hasSuffix("/") || s.utf8.count > 4000 || s.utf8.contains(0) {
                report("mqtt.password_file must be the absolute path of a file, like \"/etc/altbeacond/mqtt-password\"", at: p)
            } else if t.entry("username") == nil {
                report("mqtt.password_file needs mqtt.username: MQTT 3.1.1 sends a password only with a user name", at: p, rank: .missing, key: "mqtt.username")
            } else {
                out.passwordFile = s
            }
        }
        if let v = integer(t, "mqtt", "keepalive_s", MQTTSettings.keepAliveRange) { out.keepAliveS = UInt16(truncatingIfNeeded: v) }
        if let (s, p) = string(t, "mqtt", "discovery_prefix") {
            if isPlainTopic(s) {
                out.discoveryPrefix = s
            } else {
                report("mqtt.discovery_prefix must be an MQTT topic without wildcards (+ #), empty levels or control characters, like \"homeassistant\"", at: p)
            }
        }
        if let (s, p) = string(t, "mqtt", "release_topic") {
            if isPlainTopic(s) {
                out.releaseTopic = s
            } else {
                report("mqtt.release_topic must be an MQTT topic without wildcards (+ #), empty levels or control characters, "
                       + "like \"altbeacond/fleet/release/canary\"", at: p)
            }
        }
        out.control = readMQTTControl(t, out)
        return problems.count == before ? out : nil
    }

    /// A topic to publish under: levels of 1+ bytes, no wildcard, no control character.
    private func isPlainTopic(_ s: String) -> Bool {
        let u = s.utf8
        guard !u.isEmpty, u.count <= 1024, !s.unicodeScalars.contains(where: \.isControlCharacter),
              !u.contains(UInt8(ascii: "+")), !u.contains(UInt8(ascii: "#")) else { return false }
        return !u.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false).contains { $0.isEmpty }
    }

    // MARK: - Unknown names

    /// An entry of the root (`table` nil) or of [monitor], [metrics] or [mqtt] the schema does not know.
    mutating func reportUnknownInMonitor(table: String?, entry e: TOMLTable.Entry) {
        var isTable = false
        if case .table = e.value { isTable = true }
        let name = displayKey((table.map { [$0] } ?? []) + [e.key])
        let what = isTable ? "unknown table [\(name)]" : "unknown key `\(name)`"
        if table == nil, isTable {
            if ConfigSchema.keys(of: e.key) != nil {
                report("\(what): it belongs in the beacon's config (config.toml); monitor.toml takes \(MonitorSchema.tableList)", at: e.keyPosition)
            } else if let c = closest(e.key, among: MonitorSchema.tables.map(\.name)) {
                report("\(what); did you mean [\(c)\(c == "expect" ? ".NAME" : "")]?", at: e.keyPosition, key: c)
            } else {
                report("\(what); monitor.toml takes \(MonitorSchema.tableList)", at: e.keyPosition)
            }
            return
        }
        let others = MonitorSchema.tables.filter { t in !(table.map { sameKey($0, t.name) } ?? false) }
        if let t = others.first(where: { $0.keys.contains { sameKey($0, e.key) } }) {
            let here = table.map { "in [\($0)]" } ?? "at the top level"
            report("\(what): \(displayKey([e.key])) belongs in [\(t.name)], not \(here)", at: e.keyPosition, key: "\(t.name).\(e.key)")
        } else if let table, let keys = MonitorSchema.keys(of: table), let c = closest(e.key, among: keys) {
            report("\(what); did you mean `\(table).\(c)`?", at: e.keyPosition, key: "\(table).\(c)")
        } else if let table, let keys = MonitorSchema.keys(of: table) {
            report("\(what); [\(table)] takes \(keys.joined(separator: ", "))", at: e.keyPosition)
        } else {
            report("\(what); monitor.toml takes \(MonitorSchema.tableList)", at: e.keyPosition)
        }
    }
}
