import XCTest
@testable import BeaconKit

/// Issue 32: the beacon daemon on the monitor's Pi as a Home Assistant device of its own.
final class LocalBeaconExportTests: XCTestCase {
    /// A status file as the daemon writes it (StatusExport.json), trimmed to what is read.
    static let file = """
        {"version":"0.1.0","pid":412,"started":1764000000,"updated":1764000090,"health":"degraded","exit":1,"state":"advertising",\
        "summary":"on air","adapter":"hci0","beacon":"2f234454-cf6d-4a0f-adf2-f4911ba9ffa6 1 2","mode":"sets","interval_ms":100,\
        "frames":[{"frame":"altbeacon","on_air":true},{"frame":"ibeacon","on_air":true},{"frame":"eddystone-tlm","on_air":false}],\
        "fault":null,"escalation":"none","ladder_failures":0,"rearms":{"reset":2,"down":1,"disabled":0},"escalations":{},\
        "config_refused":true,"refused_edit":"config.toml:3:9: major must be between 0 and 65535, found 70000","gatt_server":null,"centrals":0,\
        "uuid":"2f234454-cf6d-4a0f-adf2-f4911ba9ffa6","major":1,"minor":2,"power":-59,"configured_interval_ms":90,"advertising":true,\
        "identifying":false,"change":{"request":"set power 5","origin":"mqtt altbeacond/all/beacon/set/power","outcome":"refused",\
        "message":"config.toml:3:9: beacon.power must be -127…0","time":1764000100},"address":"B8:27:EB:12:34:56"}
        """

    func result(_ verdict: HealthVerdict, _ text: String?) -> HealthCheck.Result {
        HealthCheck.Result(verdict: verdict, reason: "a reason", status: text.flatMap { JSONValue.parse(Array($0.utf8)) })
    }

    func testTheStateIsFlatAndComplete() throws {
        let json = MonitorExport.localBeaconJSON(result(.degraded, Self.file), machine: LocalMachine(nowS: 1_764_000_125, socTemperatureMilliC: 51_540))
        let v = try XCTUnwrap(JSONValue.parse(Array(json.utf8)), json)
        XCTAssertEqual(v["health"]?.string, "degraded")
        XCTAssertEqual(v["on_air"], .bool(true), "degraded is on air")
        XCTAssertEqual(v["phase"]?.string, "advertising")
        XCTAssertEqual(v["fault"], .null)
        XCTAssertEqual(v["rearms"]?.integer, 3, "every cause summed")
        XCTAssertEqual(v["frames_on_air"]?.string, "altbeacon, ibeacon")
        XCTAssertEqual(v["adapter"]?.string, "hci0")
        XCTAssertEqual(v["interval_ms"]?.integer, 100)
        XCTAssertEqual(v["config_refused"], .bool(true))
        XCTAssertEqual(v["refused_edit"]?.string, "config.toml:3:9: major must be between 0 and 65535, found 70000")
        XCTAssertEqual(v["version"]?.string, "0.1.0")
        XCTAssertEqual(v["started"]?.string, "2025-11-24T16:00:00+00:00", "when it started, not an uptime that moves at every publish")
        XCTAssertNil(v["uptime_s"])
        XCTAssertEqual(v["soc_temperature_c"], .number("51.5"))
    }

    func testWithoutTheDaemonEverythingIsNullAndOffAir() throws {
        let json = MonitorExport.localBeaconJSON(result(.unknown, nil), machine: LocalMachine(nowS: 5, socTemperatureMilliC: nil))
        XCTAssertEqual(json, "{\"health\":\"not-running\",\"on_air\":false,\"reason\":\"a reason\",\"phase\":null,\"fault\":null,\"rearms\":null,"
                       + "\"frames_on_air\":null,\"adapter\":null,\"interval_ms\":null,\"config_refused\":null,\"refused_edit\":null,"
                       + "\"version\":null,\"started\":null,\"soc_temperature_c\":null,\"uuid\":null,\"major\":null,\"minor\":null,"
                       + "\"power\":null,\"configured_interval_ms\":null,\"advertising\":null,\"identifying\":null,\"frame_altbeacon\":null,"
                       + "\"frame_ibeacon\":null,\"frame_overflow\":null,\"frame_eddystone\":null,\"frame_eddystone_tlm\":null,\"change\":null,"
                       + "\"change_time\":null}")
        let off = try XCTUnwrap(JSONValue.parse(Array(MonitorExport.localBeaconJSON(result(.offAir, Self.file), machine: LocalMachine()).utf8)))
        XCTAssertEqual(off["on_air"], .bool(false))
        func soc(_ milli: Int64) -> String {
            let json = MonitorExport.localBeaconJSON(result(.onAir, nil), machine: LocalMachine(socTemperatureMilliC: milli))
            return String(json.split(separator: ",").first { $0.hasPrefix("\"soc_temperature_c\":") }!.split(separator: ":").last!)
        }
        XCTAssertEqual([soc(-1_960), soc(-450), soc(0), soc(49), soc(50), soc(85_000)], ["-2.0", "-0.5", "0.0", "0.0", "0.1", "85.0"],
                       "rounded to a tenth, half away from zero, the sign kept below one degree")
    }

    /// Issue 38: a file left by a dead pid (SIGKILL, a crash, a power cut), or one not rewritten
    /// for 180 s, says nothing true any more: every value null, as without a file, and Health
    /// says why in words of its own (never HA's reserved `unknown`).
    func testAFileLeftByADeadOrHungDaemonGivesNullsLikeNoFile() throws {
        let file = Array(Self.file.utf8)
        func state(now: Int64, running: Bool) throws -> JSONValue {
            let h = HealthCheck.evaluate(path: "/run/altbeacond/status.json", file: file, now: now) { _ in running }
            let json = MonitorExport.localBeaconJSON(h, machine: LocalMachine(nowS: now, socTemperatureMilliC: 51_540))
            return try XCTUnwrap(JSONValue.parse(Array(json.utf8)), json)
        }
        let alive = try state(now: 1_764_000_125, running: true)
        XCTAssertEqual(alive["phase"]?.string, "advertising")
        for (v, word) in [(try state(now: 1_764_000_125, running: false), "not-running"), (try state(now: 1_764_000_090 + 181, running: true), "stale")] {
            XCTAssertEqual(v["health"]?.string, word)
            XCTAssertEqual(v["on_air"], .bool(false))
            XCTAssertNotNil(v["reason"]?.string)
            guard case .object(let members) = v else { return XCTFail() }
            for (key, value) in members where !["health", "on_air", "reason", "soc_temperature_c"].contains(key) {
                XCTAssertEqual(value, .null, "\(word): \(key) is left from a daemon that is not looking after the beacon")
            }
            XCTAssertEqual(v["soc_temperature_c"], .number("51.5"), "the board's, not the daemon's")
        }
        let garbage = HealthCheck.evaluate(path: "s", file: Array("[1]".utf8), now: 0) { _ in true }
        XCTAssertEqual(MonitorExport.localBeaconJSON(garbage, machine: LocalMachine()).prefix(22), "{\"health\":\"unreadable\"")
        XCTAssertEqual(MonitorExport.healthOptions, ["on-air", "degraded", "off-air", "not-running", "stale", "unreadable"])
        XCTAssertFalse(MonitorExport.healthOptions.contains("unknown"), "HA's own state")
    }

    /// Issue 38: every template reads value_json only once it is defined (an empty retained
    /// message renders no error), and a null is what HA takes for unknown.
    func testTemplatesAreGuardedAndNullIsUnknown() throws {
        let all = MonitorExport.localBeaconDiscovery(node: "p", prefix: "homeassistant", announce: true)
            + MonitorExport.localBeaconControlDiscovery(node: "p", prefix: "homeassistant", announce: true)
            + MonitorExport.observerDiscovery(node: "p", prefix: "homeassistant").dropLast()
            + MonitorExport.discovery(Expectation(name: "b", frame: AltBeaconFrame(BeaconIdentity(uuid: studyGuideUUID, major: 1, minor: 2))),
                                      node: "p", prefix: "homeassistant")
        for (topic, payload) in all where !payload.isEmpty {
            let v = try XCTUnwrap(JSONValue.parse(Array(payload.utf8)), topic)
            for key in ["value_template", "json_attributes_template"] {
                guard let t = v[key]?.string, t.contains("value_json") else { continue }
                XCTAssertTrue(t.contains("value_json is defined") || t.contains("value_json is not defined"), "\(topic) \(key): \(t)")
            }
            if v["state_class"] != nil || v["unit_of_measurement"] != nil || topic.contains("/number/") {
                XCTAssertFalse(v["value_template"]?.string?.contains("'unknown'") ?? false, "\(topic): a numeric state takes None")
            }
            if topic.contains("/started/") {
                XCTAssertEqual(v["device_class"]?.string, "timestamp", topic)
                XCTAssertEqual(v["state_topic"]?.string, "altbeacond/p/beacon/started", "times only, never a null")
                XCTAssertNil(v["value_template"])
                XCTAssertNil(v["expire_after"], "published only when it changes")
                XCTAssertEqual(v["entity_category"]?.string, "diagnostic")
            }
            if v["json_attributes_topic"] != nil {
                XCTAssertNotNil(v["json_attributes_template"], "\(topic): the whole JSON as attributes is a recorder row per refresh")
            }
        }
    }

    /// Issue 48: when the daemon started, on a topic of its own (a recorder row per restart, not
    /// per publish); the controls and that entity unavailable while the daemon is not running
    /// (both the monitor's will and the daemon's phase say so); the old Uptime entity removed.
    func testStartedAndTheControlsFollowTheDaemon() throws {
        XCTAssertEqual(MonitorExport.localBeaconStarted(result(.degraded, Self.file)), "2025-11-24T16:00:00+00:00")
        XCTAssertNil(MonitorExport.localBeaconStarted(result(.unknown, Self.file)), "a dead daemon's file says nothing")
        let beacon = MonitorExport.localBeaconDiscovery(node: "p", prefix: "homeassistant", announce: true)
        XCTAssertEqual(beacon.last?.topic, "homeassistant/sensor/altbeacond_beacon__p/uptime/config")
        XCTAssertEqual(beacon.last?.payload, "", "the Uptime entity of earlier versions removed")
        let controls = MonitorExport.localBeaconControlDiscovery(node: "p", prefix: "homeassistant", announce: true)
        let started = try XCTUnwrap(beacon.first { $0.topic.contains("/started/") })
        for (topic, payload) in controls + [started] {
            let v = try XCTUnwrap(JSONValue.parse(Array(payload.utf8)), topic)
            let follows = topic.contains("/started/") || !topic.contains("/sensor/") && !topic.contains("/event/")
            XCTAssertEqual(v["availability_mode"]?.string, follows ? "all" : nil, topic)
            guard follows else { XCTAssertEqual(v["availability_topic"]?.string, "altbeacond/p/status", topic); continue }
            guard case .array(let a)? = v["availability"], a.count == 2 else { return XCTFail("\(topic): \(payload)") }
            XCTAssertEqual(a[0]["topic"]?.string, "altbeacond/p/status")
            XCTAssertEqual(a[1]["topic"]?.string, "altbeacond/p/beacon")
            XCTAssertEqual(a[1]["value_template"]?.string, "{{ 'online' if value_json is defined and value_json.phase is not none else 'offline' }}")
            XCTAssertNil(v["availability_topic"])
        }
        XCTAssertTrue(controls.contains { $0.topic.contains("/number/") && $0.payload.contains("availability_mode") })
    }

    /// Issue 48: the board's model, serial and area on the observer's and the local beacon's
    /// devices; the Bluetooth address (the status file's) on the local beacon's only.
    func testTheBoardAndTheAddressOnTheDevices() throws {
        let board = DeviceBoard(model: "Raspberry Pi 3 Model B Rev 1.2", serial: "00000000c0ffee01", area: "Hall")
        let address = MonitorExport.localBeaconAddress(JSONValue.parse(Array(Self.file.utf8)))
        XCTAssertEqual(address, "B8:27:EB:12:34:56")
        let local = try XCTUnwrap(JSONValue.parse(Array(MonitorExport.localBeaconDiscovery(node: "p", prefix: "h", announce: true, board: board,
                                                                                            beaconAddress: address)[0].payload.utf8)))
        XCTAssertEqual(local["device"]?["hw_version"]?.string, "Raspberry Pi 3 Model B Rev 1.2 (serial 00000000c0ffee01)",
                       "HA 2024.1's device schema has no serial_number (it refuses the entity)")
        XCTAssertNil(local["device"]?["serial_number"])
        XCTAssertEqual(local["device"]?["suggested_area"]?.string, "Hall")
        XCTAssertEqual(local["device"]?["connections"], .array([.array([.string("bluetooth"), .string("B8:27:EB:12:34:56")])]))
        let observer = try XCTUnwrap(JSONValue.parse(Array(MonitorExport.observerDiscovery(node: "p", prefix: "h", board: board)[0].payload.utf8)))
        XCTAssertEqual(observer["device"]?["hw_version"]?.string, "Raspberry Pi 3 Model B Rev 1.2 (serial 00000000c0ffee01)")
        XCTAssertNil(observer["device"]?["connections"], "HA merges devices that share a connection: the observer may scan on the same adapter")
        let bare = try XCTUnwrap(JSONValue.parse(Array(MonitorExport.observerDiscovery(node: "p", prefix: "h")[0].payload.utf8)))
        XCTAssertNil(bare["device"]?["hw_version"], "nothing said that is not known")
        XCTAssertNil(MonitorExport.localBeaconAddress(JSONValue.parse(Array("{\"address\":null}".utf8))))
        XCTAssertEqual(DeviceBoard.model(fromDeviceTree: Array("Raspberry Pi 4 Model B Rev 1.4\u{0}".utf8)), "Raspberry Pi 4 Model B Rev 1.4")
        XCTAssertNil(DeviceBoard.model(fromDeviceTree: [0]))
        XCTAssertEqual(DeviceBoard.serialText(0xc0ffee01), "00000000c0ffee01")
    }

    func testTheVersionIsTheDevicesSoftwareVersionAndTheOrigins() throws {
        let d = MonitorExport.localBeaconDiscovery(node: "p", prefix: "homeassistant", announce: true, beaconVersion: "0.1.0", version: "0.2.0")
        let v = try XCTUnwrap(JSONValue.parse(Array(d[0].payload.utf8)))
        XCTAssertEqual(v["device"]?["sw_version"]?.string, "0.1.0")
        XCTAssertEqual(v["origin"], .object([("name", .string("altbeacond")), ("sw_version", .string("0.2.0"))]))
        let o = try XCTUnwrap(JSONValue.parse(Array(MonitorExport.observerDiscovery(node: "p", prefix: "homeassistant", version: "0.2.0")[0].payload.utf8)))
        XCTAssertEqual(o["device"]?["sw_version"]?.string, "0.2.0")
        let unknown = try XCTUnwrap(JSONValue.parse(Array(MonitorExport.localBeaconDiscovery(node: "p", prefix: "h", announce: true)[0].payload.utf8)))
        XCTAssertNil(unknown["device"]?["sw_version"], "left out when not known")
    }

    /// Twelve entities: eleven read from the state topic, Started from its own (issue 48); then
    /// the removal of the Uptime entity of earlier versions.
    func testOneDeviceTwelveEntitiesAllOnItsTopic() throws {
        let all = MonitorExport.localBeaconDiscovery(node: "hall.pi", prefix: "homeassistant", announce: true)
        XCTAssertEqual(all.count, 13)
        let d = all.filter { !$0.topic.contains("/started/") && !$0.payload.isEmpty }
        XCTAssertEqual(d.count, 11)
        XCTAssertEqual(d[0].topic, "homeassistant/binary_sensor/altbeacond_beacon__hall_2epi/on_air/config")
        var ids = Set<String>()
        for (topic, payload) in d {
            let v = try XCTUnwrap(JSONValue.parse(Array(payload.utf8)), topic)
            XCTAssertEqual(v["state_topic"]?.string, "altbeacond/hall.pi/beacon", topic)
            XCTAssertEqual(v["device"]?["identifiers"], .array([.string("altbeacond_beacon__hall_2epi")]))
            XCTAssertEqual(v["device"]?["name"]?.string, "hall.pi beacon")
            XCTAssertEqual(v["availability_topic"]?.string, "altbeacond/hall.pi/status", "unavailable when the monitor is gone")
            XCTAssertEqual(v["expire_after"]?.integer, Int64(MonitorExport.expireAfterS))
            ids.insert(try XCTUnwrap(v["unique_id"]?.string))
        }
        XCTAssertEqual(ids.count, 11)
        XCTAssertFalse(MonitorExport.localBeaconID(node: "x").hasPrefix("altbeacond__"), "never an observer's or an expected beacon's")
        XCTAssertEqual(MonitorExport.localBeaconDiscovery(node: "hall.pi", prefix: "homeassistant", announce: false).map(\.payload),
                       Array(repeating: "", count: 13))
    }
}
