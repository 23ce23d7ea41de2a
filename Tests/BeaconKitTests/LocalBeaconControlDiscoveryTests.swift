import XCTest
@testable import BeaconKit

/// Issue 32: the local beacon's control entities (`[mqtt] control` on) and the state they read.
final class LocalBeaconControlDiscoveryTests: XCTestCase {
    /// The fields the daemon adds to its status file for them.
    static let file = """
        {"version":"0.1.0","pid":412,"started":1764000000,"health":"on-air","state":"advertising","interval_ms":100,\
        "uuid":"2f234454-cf6d-4a0f-adf2-f4911ba9ffa6","major":1,"minor":2,"power":-59,"advertising":true,"identifying":false,\
        "frames":[{"frame":"altbeacon","on_air":true},{"frame":"eddystone-url","on_air":false},{"frame":"eddystone-tlm","on_air":true}],\
        "change":{"request":"set power 5","origin":"mqtt altbeacond/all/beacon/set/power","outcome":"refused",\
        "message":"config.toml:3:9: beacon.power must be -127…0","time":1764000100}}
        """

    func state(_ text: String) throws -> JSONValue {
        let h = HealthCheck.Result(verdict: .onAir, reason: "", status: JSONValue.parse(Array(text.utf8)))
        let json = MonitorExport.localBeaconJSON(h, machine: LocalMachine())
        return try XCTUnwrap(JSONValue.parse(Array(json.utf8)), json)
    }

    func testTheStateCarriesTheConfiguredValues() throws {
        let v = try state(Self.file)
        XCTAssertEqual(v["uuid"]?.string, "2f234454-cf6d-4a0f-adf2-f4911ba9ffa6")
        XCTAssertEqual([v["major"]?.integer, v["minor"]?.integer, v["power"]?.integer], [1, 2, -59])
        XCTAssertEqual(v["advertising"], .bool(true))
        XCTAssertEqual(v["identifying"], .bool(false))
        XCTAssertEqual(v["frame_altbeacon"], .bool(true))
        XCTAssertEqual(v["frame_ibeacon"], .bool(false))
        XCTAssertEqual(v["frame_overflow"], .bool(false))
        XCTAssertEqual(v["frame_eddystone"], .bool(true), "eddystone-url counts, on air or not: the switch shows the config")
        XCTAssertEqual(v["frame_eddystone_tlm"], .bool(true))
        XCTAssertEqual(v["change"]?.string, "refused: set power 5: config.toml:3:9: beacon.power must be -127…0")
        let applied = try state("{\"change\":{\"request\":\"set power -40\",\"origin\":\"x\",\"outcome\":\"applied\",\"message\":\"\",\"time\":1}}")
        XCTAssertEqual(applied["change"]?.string, "applied: set power -40")
        XCTAssertEqual(try state("{\"change\":null}")["change"], .null)
        XCTAssertEqual(v["change_time"]?.integer, 1_764_000_100)
        XCTAssertNil(try state("{\"interval_ms\":100}")["configured_interval_ms"]?.integer)
        XCTAssertEqual(try state("{\"interval_ms\":100,\"configured_interval_ms\":90}")["configured_interval_ms"]?.integer, 90)
    }

    /// Issue 38: each change one event, two identical refusals two events (their times differ).
    func testEachChangeIsAnEvent() throws {
        let h = HealthCheck.Result(verdict: .onAir, reason: "", status: JSONValue.parse(Array(Self.file.utf8)))
        let e = try XCTUnwrap(MonitorExport.localBeaconChangeEvent(h))
        XCTAssertEqual(e.time, 1_764_000_100)
        XCTAssertEqual(e.payload, "{\"event_type\":\"refused\",\"request\":\"set power 5\",\"origin\":\"mqtt altbeacond/all/beacon/set/power\","
                       + "\"message\":\"config.toml:3:9: beacon.power must be -127…0\",\"time\":1764000100}")
        XCTAssertNil(MonitorExport.localBeaconChangeEvent(HealthCheck.Result(verdict: .unknown, reason: "", status: h.status)),
                     "a dead daemon's last change is no news")
    }

    func testTheUUIDPatternTakesWhatTheConfigTakes() throws {
        for (text, ok) in [("2f234454-cf6d-4a0f-adf2-f4911ba9ffa6", true), ("2F234454CF6D4A0FADF2F4911BA9FFA6", true), ("unknown", true),
                           ("2f234454-cf6d-4a0f-adf2-f4911ba9ffa", false), ("2f234454cf6d-4a0f-adf2-f4911ba9ffa6", false),
                           ("2f234454-cf6d-4a0f-adf2-f4911ba9ffa6 ", false), ("", false), ("g2234454cf6d4a0fadf2f4911ba9ffa6", false)] {
            // The pattern's two forms, by hand (no regex engine here): what parseUUID takes.
            XCTAssertEqual(parseUUID(text) != nil || text == "unknown", ok, text)
        }
        XCTAssertEqual(MonitorExport.uuidPattern,
                       "^(unknown|[0-9A-Fa-f]{32}|[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12})$",
                       "check-discovery.py matches it with Python's re against the same cases")
    }

    func testEntitiesOnTheLocalBeaconDevice() throws {
        let d = MonitorExport.localBeaconControlDiscovery(node: "hall.pi", prefix: "homeassistant", announce: true)
        XCTAssertEqual(d.map(\.topic).map { $0.split(separator: "/")[1] + "/" + $0.split(separator: "/")[3] }, [
            "text/uuid", "number/major", "number/minor", "number/power", "number/interval_ms", "switch/advertising",
            "switch/altbeacon", "switch/ibeacon", "switch/overflow", "switch/eddystone", "switch/eddystone_tlm",
            "button/identify", "button/restart", "sensor/last_change", "event/change",
        ])
        let local = MonitorExport.localBeaconDiscovery(node: "hall.pi", prefix: "homeassistant", announce: true)
        var ids = Set(try local.filter { !$0.payload.isEmpty }.map { try XCTUnwrap(JSONValue.parse(Array($0.payload.utf8))?["unique_id"]?.string) })
        for (topic, payload) in d {
            let v = try XCTUnwrap(JSONValue.parse(Array(payload.utf8)), topic)
            let object = String(topic.split(separator: "/")[3])
            XCTAssertEqual(v["device"]?["identifiers"], .array([.string("altbeacond_beacon__hall_2epi")]), topic)
            // the controls also unavailable while the daemon is not running (issue 48)
            XCTAssertEqual(v["availability_topic"]?.string ?? { if case .array(let a)? = v["availability"] { a.first?["topic"]?.string } else { nil } }(), "altbeacond/hall.pi/status", topic)
            XCTAssertTrue(ids.insert(try XCTUnwrap(v["unique_id"]?.string)).inserted, topic)
            if topic.hasPrefix("homeassistant/event/") {
                XCTAssertEqual(v["state_topic"]?.string, "altbeacond/hall.pi/beacon/change", "a topic of its own, one message per change")
                XCTAssertEqual(v["event_types"], .array([.string("applied"), .string("refused")]))
                XCTAssertNil(v["expire_after"])
                continue
            }
            if topic.hasPrefix("homeassistant/sensor/") {
                XCTAssertEqual(v["state_topic"]?.string, "altbeacond/hall.pi/beacon")
                XCTAssertEqual(v["expire_after"]?.integer, Int64(MonitorExport.expireAfterS))
                continue
            }
            XCTAssertEqual(v["command_topic"]?.string, "altbeacond/hall.pi/beacon/set/\(object)", topic)
            XCTAssertNil(v["expire_after"], "HA's \(topic.split(separator: "/")[1]) takes none")
            if topic.hasPrefix("homeassistant/button/") {
                XCTAssertNil(v["state_topic"])
                XCTAssertEqual(v["payload_press"]?.string, "PRESS")
            } else {
                XCTAssertEqual(v["state_topic"]?.string, "altbeacond/hall.pi/beacon", topic)
            }
        }
        let power = try XCTUnwrap(JSONValue.parse(Array(d[3].payload.utf8)))
        XCTAssertEqual([power["min"]?.integer, power["max"]?.integer], [-127, 0])
        XCTAssertEqual(power["unit_of_measurement"]?.string, "dBm")
        XCTAssertEqual(power["mode"]?.string, "box")
        XCTAssertEqual(power["command_template"]?.string, "{{ value | int }}")
        let interval = try XCTUnwrap(JSONValue.parse(Array(d[4].payload.utf8)))
        XCTAssertEqual([interval["min"]?.integer, interval["max"]?.integer], [20, 10240])
        let eddystone = try XCTUnwrap(JSONValue.parse(Array(d[9].payload.utf8)))
        XCTAssertEqual(eddystone["value_template"]?.string,
                       "{% set v = (value_json.frame_eddystone if value_json is defined else none) %}{{ 'None' if v is none else ('ON' if v else 'OFF') }}")
        XCTAssertEqual(interval["value_template"]?.string,
                       "{% set v = (value_json.configured_interval_ms if value_json is defined else none) %}{{ 'None' if v is none else v }}",
                       "the configured interval (issue 38), not the one on air")
        let uuid = try XCTUnwrap(JSONValue.parse(Array(d[0].payload.utf8)))
        XCTAssertEqual(uuid["pattern"]?.string, MonitorExport.uuidPattern)
        XCTAssertEqual([eddystone["state_on"]?.string, eddystone["state_off"]?.string, eddystone["payload_on"]?.string], ["ON", "OFF", "ON"])
        XCTAssertEqual(MonitorExport.localBeaconControlDiscovery(node: "hall.pi", prefix: "homeassistant", announce: false).map(\.payload),
                       Array(repeating: "", count: 15))
    }
}
