import XCTest
@testable import BeaconKit

final class MonitorExportTests: XCTestCase {
    let lobby = Expectation(name: "lobby", frame: AltBeaconFrame(BeaconIdentity(uuid: studyGuideUUID, major: 1, minor: 2)))
    let hall = Expectation(name: "hall", frame: EddystoneUIDFrame(namespace: bytes("edd1ebeac04e5defa017"), instance: bytes("0123456789ab"), power0m: 0))
    let wall: Int64 = 1_764_000_000

    /// lobby heard twice (RSSI -61, -62) with a TLM from its address; hall never heard; 5 reports.
    func tracker() -> BeaconTracker {
        var t = BeaconTracker(expectations: [lobby, hall], silentAfterMs: 10_000, startMs: 0)
        for _ in 0..<5 { t.countAdvert() }
        _ = t.record(monitorSighting(FrameTests.altbeaconHex, rssi: -61, atMs: 1000), wallSeconds: wall)
        _ = t.record(monitorSighting(FrameTests.altbeaconHex, rssi: -62, atMs: 2000), wallSeconds: wall + 1)
        _ = t.record(monitorSighting(FrameTests.tlmHex, atMs: 2500), wallSeconds: wall + 1)
        return t
    }

    func testPrometheusText() {
        let text = MonitorExport.prometheus(tracker(), version: "0.4.0", node: "hall-pi", startWall: wall - 10, nowWall: wall + 60)
        XCTAssertEqual(text, """
            # HELP altbeacond_build_info The running altbeacond's version.
            # TYPE altbeacond_build_info gauge
            altbeacond_build_info{version="0.4.0",daemon="monitor",node="hall-pi"} 1
            # HELP altbeacond_beacon_heard 1 while the expected beacon is heard (a sighting within silent_after_s).
            # TYPE altbeacond_beacon_heard gauge
            altbeacond_beacon_heard{beacon="lobby"} 1
            altbeacond_beacon_heard{beacon="hall"} 0
            # HELP altbeacond_beacon_last_seen_timestamp_seconds When the expected beacon was last heard (Unix time).
            # TYPE altbeacond_beacon_last_seen_timestamp_seconds gauge
            altbeacond_beacon_last_seen_timestamp_seconds{beacon="lobby"} 1764000001
            # HELP altbeacond_beacon_rssi_dbm Trimmed mean RSSI of the beacon's recent sightings (up to 20, 10 % clipped at each end).
            # TYPE altbeacond_beacon_rssi_dbm gauge
            altbeacond_beacon_rssi_dbm{beacon="lobby"} -61.5
            # HELP altbeacond_beacon_adverts_total Sightings of the expected beacon since the monitor started.
            # TYPE altbeacond_beacon_adverts_total counter
            altbeacond_beacon_adverts_total{beacon="lobby"} 2
            altbeacond_beacon_adverts_total{beacon="hall"} 0
            # HELP altbeacond_beacon_reboots_total Restarts of the beacon seen as its Eddystone-TLM uptime going backwards.
            # TYPE altbeacond_beacon_reboots_total counter
            altbeacond_beacon_reboots_total{beacon="lobby"} 0
            altbeacond_beacon_reboots_total{beacon="hall"} 0
            # HELP altbeacond_beacon_tlm_uptime_seconds The beacon's uptime in its last Eddystone-TLM frame.
            # TYPE altbeacond_beacon_tlm_uptime_seconds gauge
            altbeacond_beacon_tlm_uptime_seconds{beacon="lobby"} 360
            # HELP altbeacond_beacon_tlm_temperature_celsius The beacon's temperature in its last Eddystone-TLM frame.
            # TYPE altbeacond_beacon_tlm_temperature_celsius gauge
            altbeacond_beacon_tlm_temperature_celsius{beacon="lobby"} 25.5
            # HELP altbeacond_beacon_tlm_battery_volts The beacon's battery voltage in its last Eddystone-TLM frame.
            # TYPE altbeacond_beacon_tlm_battery_volts gauge
            altbeacond_beacon_tlm_battery_volts{beacon="lobby"} 3
            # HELP altbeacond_beacon_tlm_adverts_total Advertising PDUs the beacon sent since power-up, in its last Eddystone-TLM frame.
            # TYPE altbeacond_beacon_tlm_adverts_total counter
            altbeacond_beacon_tlm_adverts_total{beacon="lobby"} 10000
            # HELP altbeacond_scan_adverts_total Advertising reports the monitor's scanner received, from any device.
            # TYPE altbeacond_scan_adverts_total counter
            altbeacond_scan_adverts_total 5
            # HELP altbeacond_monitor_start_time_seconds When the monitor started (Unix time).
            # TYPE altbeacond_monitor_start_time_seconds gauge
            altbeacond_monitor_start_time_seconds 1763999990
            # HELP altbeacond_last_update_timestamp_seconds When this file was written (Unix time); at least every 60 s.
            # TYPE altbeacond_last_update_timestamp_seconds gauge
            altbeacond_last_update_timestamp_seconds{daemon="monitor"} 1764000060

            """)
    }

    func testPrometheusBeforeAnythingIsHeardAndEscaping() {
        let t = BeaconTracker(expectations: [lobby], silentAfterMs: 10_000, startMs: 0)
        let text = MonitorExport.prometheus(t, version: "1.0 \"rc\" \\\n2", node: "n.1", startWall: 1, nowWall: 2)
        XCTAssertTrue(text.contains("altbeacond_build_info{version=\"1.0 \\\"rc\\\" \\\\\\n2\",daemon=\"monitor\",node=\"n.1\"} 1\n"), text)
        for absent in ["last_seen", "rssi", "tlm_"] { XCTAssertFalse(text.contains(absent), absent) }
        XCTAssertTrue(text.contains("altbeacond_beacon_heard{beacon=\"lobby\"} 0\n"))
        // A battery-less beacon (a Pi) without a temperature sensor: uptime and count only.
        var u = BeaconTracker(expectations: [lobby], silentAfterMs: 10_000, startMs: 0)
        _ = u.record(monitorSighting(FrameTests.altbeaconHex), wallSeconds: wall)
        _ = u.record(monitorSighting(FrameTests.tlmZeroHex), wallSeconds: wall)
        let zero = MonitorExport.prometheus(u, version: "1", node: "n", startWall: 1, nowWall: 2)
        XCTAssertTrue(zero.contains("altbeacond_beacon_tlm_uptime_seconds{beacon=\"lobby\"} 0\n"))
        XCTAssertTrue(zero.contains("altbeacond_beacon_tlm_adverts_total{beacon=\"lobby\"} 0\n"))
        XCTAssertFalse(zero.contains("temperature"))
        XCTAssertFalse(zero.contains("battery"))
    }

    /// Issue 30: the MQTT output's figures, with `[mqtt]` only.
    func testPrometheusMQTTFigures() {
        XCTAssertFalse(MonitorExport.prometheus(tracker(), version: "1", node: "n", startWall: 1, nowWall: 2).contains("altbeacond_mqtt_"))
        let text = MonitorExport.prometheus(tracker(), version: "1", node: "n", startWall: 1, nowWall: 2,
                                            mqtt: MonitorMQTTFigures(connected: true, droppedTotal: 12, nodeClash: false))
        for line in ["altbeacond_mqtt_connected 1", "# TYPE altbeacond_mqtt_dropped_messages_total counter",
                     "altbeacond_mqtt_dropped_messages_total 12", "altbeacond_mqtt_node_clash 0"] {
            XCTAssertTrue(text.contains("\n" + line + "\n"), line)
        }
    }

    /// Each family once, its samples together; names shared with the beacon daemon's file have
    /// its HELP word for word (node_exporter merges both files when they share a directory).
    func testExpositionShape() {
        let text = MonitorExport.prometheus(tracker(), version: "1", node: "n", startWall: 1, nowWall: 2,
                                            mqtt: MonitorMQTTFigures(connected: false, droppedTotal: 0, nodeClash: true))
        XCTAssertTrue(text.hasSuffix("\n"))
        let lines = text.split(separator: "\n").map(String.init)
        let helps = lines.filter { $0.hasPrefix("# HELP ") }.map { $0.split(separator: " ")[2] }
        XCTAssertEqual(Set(helps).count, helps.count, "no duplicate HELP")
        XCTAssertEqual(lines.filter { $0.hasPrefix("# TYPE ") }.count, helps.count)
        for line in lines where line.hasPrefix("# TYPE ") && line.hasSuffix(" counter") {
            XCTAssertTrue(line.split(separator: " ")[2].hasSuffix("_total"), line)
        }
        var seen: [String] = []
        for line in lines where !line.hasPrefix("#") {
            let name = String(line.prefix { $0 != "{" && $0 != " " })
            if seen.last != name { XCTAssertFalse(seen.contains(name), "\(name) split"); seen.append(name) }
        }
        let status = StatusExport(status: DaemonStatus(phase: .advertising, adapter: "hci0", beacon: "b"), version: "1", pid: 1,
                                  startTime: 1, updated: 2).prometheus
        for shared in ["altbeacond_build_info", "altbeacond_last_update_timestamp_seconds"] {
            let help = "# HELP \(shared) "
            XCTAssertEqual(lines.first { $0.hasPrefix(help) }, status.split(separator: "\n").map(String.init).first { $0.hasPrefix(help) })
        }
    }

    func testBeaconJSON() throws {
        let t = tracker()
        let json = MonitorExport.beaconJSON(t.states[0], expectation: lobby)
        XCTAssertEqual(json, "{\"name\":\"lobby\",\"type\":\"altbeacon\",\"heard\":true,\"last_seen\":1764000001,\"rssi\":-61.5,"
            + "\"adverts\":2,\"reboots\":0,\"address\":\"11:22:33:44:55:66\","
            + "\"tlm\":{\"uptime_s\":360,\"adv_count\":10000,\"temperature_c\":25.5,\"battery_mv\":3000}}")
        let v = try XCTUnwrap(JSONValue.parse(Array(json.utf8)))
        XCTAssertEqual(v["name"]?.string, "lobby")
        XCTAssertEqual(v["heard"], .bool(true))
        XCTAssertEqual(v["last_seen"]?.integer, 1_764_000_001)
        XCTAssertEqual(v["rssi"], .number("-61.5"))
        XCTAssertEqual(v["adverts"]?.integer, 2)
        XCTAssertEqual(v["tlm"]?["battery_mv"]?.integer, 3000)
        XCTAssertEqual(v["tlm"]?["temperature_c"], .number("25.5"))

        let never = MonitorExport.beaconJSON(t.states[1], expectation: hall)
        XCTAssertEqual(never, "{\"name\":\"hall\",\"type\":\"eddystone-uid\",\"heard\":false,\"last_seen\":null,\"rssi\":null,"
            + "\"adverts\":0,\"reboots\":0,\"address\":null,\"tlm\":null}")
        let n = try XCTUnwrap(JSONValue.parse(Array(never.utf8)))
        for key in ["last_seen", "rssi", "address", "tlm"] { XCTAssertEqual(n[key], .null, key) }

        var s = BeaconState(name: "x")
        s.tlm = TLMReading(uptimeS: 1327.5, advertCount: 5310, temperatureC: nil, batteryMV: nil)
        let partial = MonitorExport.beaconJSON(s, expectation: lobby.with(name: "x"))
        XCTAssertTrue(partial.hasSuffix("\"tlm\":{\"uptime_s\":1327.5,\"adv_count\":5310,\"temperature_c\":null,\"battery_mv\":null}}"), partial)
        XCTAssertNotNil(JSONValue.parse(Array(partial.utf8)))
    }

    func testTopics() {
        XCTAssertEqual(MonitorExport.statusTopic(node: "hall-pi"), "altbeacond/hall-pi/status")
        XCTAssertEqual(MonitorExport.healthTopic(node: "hall-pi"), "altbeacond/hall-pi/health")
        XCTAssertEqual(MonitorExport.beaconTopic(node: "hall-pi", name: "lobby"), "altbeacond/hall-pi/beacons/lobby")
    }

    func testHomeAssistantDiscovery() throws {
        let ID = "altbeacond__hall_2epi__altbeacon__2f234454-cf6d-4a0f-adf2-f4911ba9ffa6__1__2"
        let pairs = MonitorExport.discovery(lobby, node: "hall.pi", prefix: "homeassistant")
        XCTAssertEqual(pairs.map(\.topic), [
            "homeassistant/binary_sensor/altbeacond__hall_2epi__altbeacon__2f234454-cf6d-4a0f-adf2-f4911ba9ffa6__1__2/connectivity/config",
            "homeassistant/sensor/altbeacond__hall_2epi__altbeacon__2f234454-cf6d-4a0f-adf2-f4911ba9ffa6__1__2/rssi/config",
            "homeassistant/sensor/altbeacond__hall_2epi__altbeacon__2f234454-cf6d-4a0f-adf2-f4911ba9ffa6__1__2/temperature/config",
            "homeassistant/sensor/altbeacond__hall_2epi__altbeacon__2f234454-cf6d-4a0f-adf2-f4911ba9ffa6__1__2/battery/config",
            "homeassistant/sensor/altbeacond__hall_2epi__altbeacon__2f234454-cf6d-4a0f-adf2-f4911ba9ffa6__1__2/uptime/config",
        ], "HA allows only [A-Za-z0-9_-] in the node ID: the node's '.' is escaped; the beacon by its identity, not its name")
        var uniqueIDs: [String] = []
        for (topic, payload) in pairs {
            let v = try XCTUnwrap(JSONValue.parse(Array(payload.utf8)), payload)
            for key in ["name", "unique_id", "state_topic", "value_template", "availability_topic", "payload_available",
                        "payload_not_available", "device", "device_class", "origin", "expire_after"] {
                XCTAssertNotNil(v[key], "\(topic): \(key)")
            }
            XCTAssertEqual(v["state_topic"]?.string, "altbeacond/hall.pi/beacons/lobby", "topics keep the node as it is")
            XCTAssertEqual(v["availability_topic"]?.string, "altbeacond/hall.pi/status")
            XCTAssertEqual(v["payload_available"]?.string, "online")
            XCTAssertEqual(v["payload_not_available"]?.string, "offline")
            XCTAssertEqual(v["device"]?["identifiers"], .array([.string("altbeacond_frame__altbeacon__2f234454-cf6d-4a0f-adf2-f4911ba9ffa6__1__2")]),
                           "one device per beacon, whichever monitor hears it (issue 38)")
            XCTAssertEqual(v["device"]?["name"]?.string, "Beacon 1/2 2f234454", "its identity, not this monitor's name (issue 48)")
            XCTAssertEqual(v["device"]?["model"]?.string, "Beacon (UUID, major, minor)", "what it is, not altbeacond")
            XCTAssertNil(v["device"]?["manufacturer"], "who made it is not on air")
            XCTAssertNil(v["device"]?["via_device"], "no one monitor is its way in")
            uniqueIDs.append(try XCTUnwrap(v["unique_id"]?.string))
            if topic.contains("/sensor/") {
                XCTAssertEqual(v["state_class"]?.string, topic.contains("/uptime/") ? "total_increasing" : "measurement",
                               "\(topic) (uptime as ESPHome's, issue 38)")
                XCTAssertNotNil(v["unit_of_measurement"], topic)
            }
        }
        XCTAssertEqual(uniqueIDs, ["connectivity", "rssi", "temperature", "battery", "uptime"].map { "\(ID)__" + $0 })
        XCTAssertEqual(pairs.compactMap { JSONValue.parse(Array($0.payload.utf8))?["name"]?.string },
                       ["Heard by hall.pi", "hall.pi RSSI", "Temperature via hall.pi", "Battery voltage via hall.pi", "Uptime via hall.pi"])

        let c = try XCTUnwrap(JSONValue.parse(Array(pairs[0].payload.utf8)))
        XCTAssertEqual(c["device_class"]?.string, "connectivity")
        XCTAssertEqual(c["value_template"]?.string, "{{ 'ON' if value_json is defined and value_json.heard else 'OFF' }}")
        XCTAssertEqual(c["expire_after"]?.integer, 120, "four refreshes: silence is said by the payload, never by expiry")
        XCTAssertEqual(c["json_attributes_topic"]?.string, "altbeacond/hall.pi/beacons/lobby")
        XCTAssertEqual(c["json_attributes_template"]?.string,
                       "{{ ({'name': value_json.name, 'type': value_json.type, 'address': value_json.address, 'reboots': value_json.reboots} if value_json is defined else {}) | tojson }}",
                       "what rarely changes, this monitor's name for it among them, not last_seen and rssi: a recorder row per refresh (issue 38)")
        let rssi = try XCTUnwrap(JSONValue.parse(Array(pairs[1].payload.utf8)))
        XCTAssertEqual(rssi["device_class"]?.string, "signal_strength")
        XCTAssertEqual(rssi["unit_of_measurement"]?.string, "dBm")
        XCTAssertEqual(rssi["value_template"]?.string, "{% set v = (value_json.rssi if value_json is defined else none) %}{{ 'None' if v is none else v }}")
        let temp = try XCTUnwrap(JSONValue.parse(Array(pairs[2].payload.utf8)))
        XCTAssertEqual(temp["device_class"]?.string, "temperature")
        XCTAssertEqual(temp["unit_of_measurement"]?.string, "°C")
        XCTAssertEqual(temp["value_template"]?.string,
                       "{{ value_json.tlm.temperature_c if value_json is defined and value_json.heard and value_json.tlm and value_json.tlm.temperature_c is not none else 'None' }}",
                       "unknown while the beacon is silent (issue 48), not its last value")
        let battery = try XCTUnwrap(JSONValue.parse(Array(pairs[3].payload.utf8)))
        XCTAssertEqual(battery["device_class"]?.string, "voltage")
        XCTAssertEqual(battery["unit_of_measurement"]?.string, "mV")
        let uptime = try XCTUnwrap(JSONValue.parse(Array(pairs[4].payload.utf8)))
        XCTAssertEqual(uptime["device_class"]?.string, "duration")
        XCTAssertEqual(uptime["unit_of_measurement"]?.string, "s")

        let other = MonitorExport.discovery(hall, node: "n", prefix: "ha/x")
        XCTAssertEqual(other.first?.topic, "ha/x/binary_sensor/altbeacond__n__eddystone-uid__edd1ebeac04e5defa017__0123456789ab/connectivity/config")
        let d = try XCTUnwrap(JSONValue.parse(Array((other.first?.payload ?? "").utf8)))
        XCTAssertEqual(d["device"]?["model"]?.string, "Google Eddystone-UID")
    }

    func testOnceTable() {
        XCTAssertEqual(MonitorExport.table(tracker(), now: 3000), """
            NAME   TYPE           STATE   LAST SEEN   RSSI  ADVERTS
            lobby  altbeacon      heard   1.0 s ago  -61.5        2
            hall   eddystone-uid  silent      never      -        0

            """)
        var t = tracker()
        _ = t.tick(now: 12_000)
        XCTAssertEqual(MonitorExport.table(t, now: 200_000).split(separator: "\n")[1], "lobby  altbeacon      silent  3 min ago     -        2")
    }

    func testDecimal() {
        let cases: [(Double, Int, String)] = [(-61.25, 2, "-61.25"), (-61.5, 2, "-61.5"), (-61, 2, "-61"), (-61.0625, 2, "-61.06"),
                                              (48.3125, 2, "48.31"), (3.012, 3, "3.012"), (0.1, 1, "0.1"), (0.05, 2, "0.05"),
                                              (-0.001, 2, "0"), (1327.5, 1, "1327.5"), (-0.5, 1, "-0.5"), (360, 1, "360")]
        for (v, places, text) in cases { XCTAssertEqual(MonitorExport.decimal(v, places: places), text, "\(v)") }
    }
}
