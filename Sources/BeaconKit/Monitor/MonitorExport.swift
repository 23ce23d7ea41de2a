/// What the monitor says about the expected beacons (SPEC §10): the Prometheus text file, the
/// MQTT topics and payloads (Home Assistant discovery in MonitorDiscovery.swift), and the table
/// of `monitor --once`. Pure: the caller writes and publishes what these return.
///
/// Size (about 790 lines over 5 files, no stored field): a namespace, not a machine: one pure
/// function per topic, payload and Home Assistant discovery message the monitor publishes, sharing
/// the IDs and topics that must agree across them.
public enum MonitorExport {
    // MARK: Topics

    public static func statusTopic(node: String) -> String { "altbeacond/\(node)/status" }
    public static func healthTopic(node: String) -> String { "altbeacond/\(node)/health" }
    public static func beaconTopic(node: String, name: String) -> String { "altbeacond/\(node)/beacons/\(name)" }
    public static func observerTopic(node: String) -> String { "altbeacond/\(node)/observer" }

    // MARK: Prometheus text format (exposition format 0.0.4)

    /// The metrics of the monitor. `altbeacond_build_info` and
    /// `altbeacond_last_update_timestamp_seconds` share their names and HELP with the beacon
    /// daemon's (`StatusExport`) and carry `daemon="monitor"`, so both text files can sit in one
    /// node_exporter directory on the same Pi without a duplicate series. Families without a
    /// sample (no TLM heard yet) are left out.
    public static func prometheus(_ t: BeaconTracker, version: String, node: String, startWall: Int64, nowWall: Int64,
                                  mqtt: MonitorMQTTFigures? = nil) -> String {
        var out = PrometheusText(omitsEmptyFamilies: true)
        /// One sample per beacon for which `value` says something.
        func each(_ value: (BeaconState) -> String?) -> [PrometheusText.Sample] {
            t.states.compactMap { s in value(s).map { ("beacon=" + PrometheusText.label(s.name), $0) } }
        }
        out.family("altbeacond_build_info", "gauge", "The running altbeacond's version.",
                   [("version=\(PrometheusText.label(version)),daemon=\"monitor\",node=\(PrometheusText.label(node))", "1")])
        out.family("altbeacond_beacon_heard", "gauge", "1 while the expected beacon is heard (a sighting within silent_after_s).",
                   each { $0.heard ? "1" : "0" })
        out.family("altbeacond_beacon_last_seen_timestamp_seconds", "gauge", "When the expected beacon was last heard (Unix time).",
                   each { $0.lastSeenWall.map { "\($0)" } })
        out.family("altbeacond_beacon_rssi_dbm", "gauge", "Trimmed mean RSSI of the beacon's recent sightings (up to 20, 10 % clipped at each end).",
                   each { $0.rssi.map { decimal($0, places: 2) } })
        out.family("altbeacond_beacon_adverts_total", "counter", "Sightings of the expected beacon since the monitor started.",
                   each { "\($0.adverts)" })
        out.family("altbeacond_beacon_reboots_total", "counter", "Restarts of the beacon seen as its Eddystone-TLM uptime going backwards.",
                   each { "\($0.reboots)" })
        out.family("altbeacond_beacon_tlm_uptime_seconds", "gauge", "The beacon's uptime in its last Eddystone-TLM frame.",
                   each { $0.tlm.map { decimal($0.uptimeS, places: 1) } })
        out.family("altbeacond_beacon_tlm_temperature_celsius", "gauge", "The beacon's temperature in its last Eddystone-TLM frame.",
                   each { $0.tlm?.temperatureC.map { decimal($0, places: 2) } })
        out.family("altbeacond_beacon_tlm_battery_volts", "gauge", "The beacon's battery voltage in its last Eddystone-TLM frame.",
                   each { $0.tlm?.batteryMV.map { decimal(Double($0) / 1000, places: 3) } })
        out.family("altbeacond_beacon_tlm_adverts_total", "counter", "Advertising PDUs the beacon sent since power-up, in its last Eddystone-TLM frame.",
                   each { $0.tlm.map { "\($0.advertCount)" } })
        out.family("altbeacond_scan_adverts_total", "counter", "Advertising reports the monitor's scanner received, from any device.",
                   [("", "\(t.advertsTotal)")])
        out.family("altbeacond_monitor_start_time_seconds", "gauge", "When the monitor started (Unix time).", [("", "\(startWall)")])
        if let mqtt {
            out.family("altbeacond_mqtt_connected", "gauge", "1 while the MQTT broker has accepted the session and it is up.",
                       [("", mqtt.connected ? "1" : "0")])
            out.family("altbeacond_mqtt_dropped_messages_total", "counter",
                       "MQTT messages left out while the broker took no more bytes (older retained states of a topic, the oldest others).",
                       [("", "\(mqtt.droppedTotal)")])
            out.family("altbeacond_mqtt_node_clash", "gauge", "1 once another monitor was heard publishing as this node on the broker.",
                       [("", mqtt.nodeClash ? "1" : "0")])
        }
        out.family("altbeacond_last_update_timestamp_seconds", "gauge", "When this file was written (Unix time); at least every 60 s.",
                   [("daemon=\"monitor\"", "\(nowWall)")])
        return out.text
    }

    // MARK: MQTT state

    /// The retained JSON of `beaconTopic`, one line without a newline: `name`, `type`, `heard`,
    /// `last_seen` (Unix s or null), `rssi` (dBm or null), `adverts`, `reboots`, `address`
    /// (or null) and `tlm` (null, or `uptime_s`, `adv_count`, `temperature_c`, `battery_mv`,
    /// the last two null when the beacon does not measure them).
    public static func beaconJSON(_ s: BeaconState, expectation: Expectation) -> String {
        var m: [String] = [
            "\"name\":" + jsonString(expectation.name),
            "\"type\":" + jsonString(expectation.type),
            "\"heard\":\(s.heard)",
            "\"last_seen\":" + (s.lastSeenWall.map { "\($0)" } ?? "null"),
            "\"rssi\":" + (s.rssi.map { decimal($0, places: 2) } ?? "null"),
            "\"adverts\":\(s.adverts)",
            "\"reboots\":\(s.reboots)",
            "\"address\":" + (s.address.map(jsonString) ?? "null"),
        ]
        if let r = s.tlm {
            m.append("\"tlm\":{\"uptime_s\":\(decimal(r.uptimeS, places: 1)),\"adv_count\":\(r.advertCount),"
                     + "\"temperature_c\":\(r.temperatureC.map { decimal($0, places: 2) } ?? "null"),"
                     + "\"battery_mv\":\(r.batteryMV.map { "\($0)" } ?? "null")}")
        } else {
            m.append("\"tlm\":null")
        }
        return "{" + m.joined(separator: ",") + "}"
    }

    /// The retained JSON of `observerTopic`: `adapter`, `scanning`, `scan_problem` (why not,
    /// or null), `adverts` (every advert heard since the start), `adverts_per_s` (over the last
    /// refresh period; null before the first), `beacons_heard`, `beacons_expected`.
    public static func observerJSON(_ s: MonitorStatus, advertsPerS: Double?) -> String {
        "{\"adapter\":\(jsonString(s.adapter)),\"scanning\":\(s.scanning),"
            + "\"scan_problem\":\(s.scanning ? "null" : s.scanProblem.map(jsonString) ?? "null"),"
            + "\"adverts\":\(s.tracker.advertsTotal),\"adverts_per_s\":\(advertsPerS.map { decimal($0, places: 1) } ?? "null"),"
            + "\"beacons_heard\":\(s.tracker.states.filter(\.heard).count),\"beacons_expected\":\(s.tracker.states.count)}"
    }

    // MARK: monitor --once

    /// One row per expected beacon, header first: NAME, TYPE, STATE (heard or silent), LAST SEEN
    /// ("4.2 s ago", "never"), RSSI (trimmed mean, "-" when not known), ADVERTS.
    public static func table(_ t: BeaconTracker, now nowMs: Int64) -> String {
        let header = ["NAME", "TYPE", "STATE", "LAST SEEN", "RSSI", "ADVERTS"]
        let rightAligned = [false, false, false, true, true, true]
        var rows = [header]
        for (s, e) in zip(t.states, t.expectations) {
            rows.append([s.name, e.type, s.heard ? "heard" : "silent",
                         s.lastSeenMs.map { ago(nowMs - $0) + " ago" } ?? "never",
                         s.rssi.map { decimal($0, places: 1) } ?? "-", "\(s.adverts)"])
        }
        let widths = header.indices.map { c in rows.map { $0[c].count }.max() ?? 0 }
        var out = ""
        for row in rows {
            var line = ""
            for (c, cell) in row.enumerated() {
                let pad = String(repeating: " ", count: widths[c] - cell.count)
                if c > 0 { line += "  " }
                line += rightAligned[c] ? pad + cell : cell + pad
            }
            while line.last == " " { line.removeLast() }
            out += line + "\n"
        }
        return out
    }

    // MARK: Numbers

    /// `v` rounded to `places` decimals, without trailing zeros: -61.25, -61.5, -61, 3.012.
    /// Not finite: "NaN" (never produced here: every value is a finite mean or reading).
    static func decimal(_ v: Double, places: Int) -> String {
        var scale: UInt64 = 1
        for _ in 0..<max(0, min(places, 6)) { scale *= 10 }
        let scaled = (v * Double(scale)).rounded()
        guard scaled.isFinite, abs(scaled) < 9.0e15 else { return v.isFinite ? "\(v)" : "NaN" }
        let n = Int64(scaled)
        let a = n.magnitude
        var s = "\(a / scale)"
        var frac = a % scale
        if frac != 0 {
            var digits = places
            while frac % 10 == 0 { frac /= 10; digits -= 1 }
            let text = "\(frac)"
            s += "." + String(repeating: "0", count: max(0, digits - text.count)) + text
        }
        return (n < 0 ? "-" : "") + s
    }
}
