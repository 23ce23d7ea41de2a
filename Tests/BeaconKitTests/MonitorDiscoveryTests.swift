import XCTest
@testable import BeaconKit

final class MonitorDiscoveryTests: XCTestCase {
    let lobby = Expectation(name: "lobby", frame: AltBeaconFrame(BeaconIdentity(uuid: studyGuideUUID, major: 1, minor: 2)))

    func testIDsNeverCollide() {
        XCTAssertNotEqual(MonitorExport.discoveryID(node: "hall_pi", name: "lobby"), MonitorExport.discoveryID(node: "hall", name: "pi_lobby"))
        XCTAssertEqual(MonitorExport.discoveryID(node: "hall_pi", name: "lobby"), "altbeacond__hall_5fpi__lobby")
        XCTAssertEqual(MonitorExport.discoveryID(node: "hall", name: "pi_lobby"), "altbeacond__hall__pi_5flobby")
        XCTAssertNotEqual(MonitorExport.discoveryID(node: "hall.pi"), MonitorExport.discoveryID(node: "hall_pi"))
        XCTAssertEqual(MonitorExport.discoveryID(node: "lobby-pi"), "altbeacond__lobby-pi", "hostnames' '-' stays")
        // Every pair of short parts over the troublesome bytes: distinct pairs, distinct IDs.
        let alphabet = ["", "_", "a", "5f", "_5f", ".", "-", "__", "é"]
        var parts: [String] = []
        for x in alphabet { for y in alphabet { parts.append(x + y) } }
        var seen: [String: (String, String)] = [:]
        for n in parts {
            for m in parts {
                let id = MonitorExport.discoveryID(node: n, name: m)
                XCTAssertTrue(id.utf8.allSatisfy { isBareKeyByte($0) }, id)
                if let other = seen[id], other != (n, m) { XCTFail("\(id): \(other) and \((n, m))") }
                seen[id] = (n, m)
                XCTAssertNotEqual(id, MonitorExport.discoveryID(node: n + "__" + m), "a beacon's ID is never an observer's")
            }
        }
    }

    func testTheObserverIsADeviceAndNoExpectedBeaconIsViaIt() throws {
        let observer = MonitorExport.observerDiscovery(node: "hall.pi", prefix: "homeassistant")
        XCTAssertEqual(observer.map(\.topic), [
            "homeassistant/binary_sensor/altbeacond__hall_2epi/monitor/config",
            "homeassistant/sensor/altbeacond__hall_2epi/adverts/config",
            "homeassistant/sensor/altbeacond__hall_2epi/adapter/config",
            "homeassistant/sensor/altbeacond__hall_2epi/beacon_health/config",
        ])
        var identifiers: [JSONValue] = []
        XCTAssertEqual(observer.last?.payload, "", "the Beacon health entity of before issue 32 is removed")
        for (_, payload) in observer.dropLast() {
            let v = try XCTUnwrap(JSONValue.parse(Array(payload.utf8)), payload)
            identifiers.append(try XCTUnwrap(v["device"]?["identifiers"]))
            XCTAssertNil(v["device"]?["via_device"])
        }
        XCTAssertEqual(Set(identifiers.map { "\($0)" }).count, 1, "one observer device")
        let monitor = try XCTUnwrap(JSONValue.parse(Array(observer[0].payload.utf8)))
        XCTAssertEqual(monitor["state_topic"]?.string, "altbeacond/hall.pi/status")
        XCTAssertEqual(monitor["payload_on"]?.string, "online")
        XCTAssertEqual(monitor["payload_off"]?.string, "offline")
        XCTAssertNil(monitor["availability_topic"], "OFF after the will, not unavailable")
        XCTAssertNil(monitor["expire_after"])
        let adverts = try XCTUnwrap(JSONValue.parse(Array(observer[1].payload.utf8)))
        XCTAssertEqual(adverts["state_topic"]?.string, "altbeacond/hall.pi/observer")
        XCTAssertEqual(adverts["expire_after"]?.integer, Int64(MonitorExport.expireAfterS))

        // Issue 38: a beacon is one device however many monitors hear it; none of them is its way in.
        for (_, payload) in MonitorExport.discovery(lobby, node: "hall.pi", prefix: "homeassistant") {
            let v = try XCTUnwrap(JSONValue.parse(Array(payload.utf8)))
            XCTAssertNil(v["device"]?["via_device"])
        }
        // The local beacon daemon reaches HA through this monitor alone: its via_device is the observer.
        for (_, payload) in MonitorExport.localBeaconDiscovery(node: "hall.pi", prefix: "homeassistant", announce: true) where !payload.isEmpty {
            let v = try XCTUnwrap(JSONValue.parse(Array(payload.utf8)))
            XCTAssertTrue(identifiers[0].arrayContains(try XCTUnwrap(v["device"]?["via_device"])))
        }
    }

    /// Issue 38: two monitors expecting one beacon (under different names) make one device, each
    /// with entities of its own (unique IDs and topics apart, names saying the node); the frame
    /// identity is injective; the local beacon's device carries its frames' identities.
    func testTwoMonitorsOneBeaconOneDevice() throws {
        let entrance = lobby.with(name: "entrance")
        let a = MonitorExport.discovery(lobby, node: "hall", prefix: "homeassistant")
        let b = MonitorExport.discovery(entrance, node: "attic", prefix: "homeassistant")
        func field(_ pairs: [(topic: String, payload: String)], _ f: (JSONValue) -> JSONValue?) -> [JSONValue] {
            pairs.compactMap { JSONValue.parse(Array($0.payload.utf8)).flatMap(f) }
        }
        let devices = Set((field(a) { $0["device"]?["identifiers"] } + field(b) { $0["device"]?["identifiers"] }).map { "\($0)" })
        XCTAssertEqual(devices.count, 1, "\(devices)")
        let unique = field(a) { $0["unique_id"] } + field(b) { $0["unique_id"] }
        XCTAssertEqual(Set(unique.map { "\($0)" }).count, 10)
        XCTAssertEqual(Set((a + b).map(\.topic)).count, 10)
        XCTAssertEqual(field(b) { $0["name"] }.first?.string, "Heard by attic")
        XCTAssertEqual(field(b) { $0["state_topic"] }.first?.string, "altbeacond/attic/beacons/entrance")

        XCTAssertEqual(MonitorExport.beaconDeviceID(lobby), "altbeacond_frame__altbeacon__2f234454-cf6d-4a0f-adf2-f4911ba9ffa6__1__2")
        XCTAssertNotEqual(MonitorExport.beaconDeviceID(type: "ibeacon", ids: ["a_b", "c"]), MonitorExport.beaconDeviceID(type: "ibeacon", ids: ["a", "b_c"]))
        XCTAssertNotEqual(MonitorExport.beaconDeviceID(type: "altbeacon", ids: ["u", "1", "2"]), MonitorExport.beaconDeviceID(type: "ibeacon", ids: ["u", "1", "2"]))

        let status = JSONValue.parse(Array(#"{"frames":[{"frame":"altbeacon"},{"frame":"ibeacon"},{"frame":"eddystone-tlm"}],"uuid":"2F234454-CF6D-4A0F-ADF2-F4911BA9FFA6","major":1,"minor":2}"#.utf8))
        let ids = MonitorExport.localBeaconFrameIDs(status)
        XCTAssertEqual(ids, [MonitorExport.beaconDeviceID(lobby), "altbeacond_frame__ibeacon__2f234454-cf6d-4a0f-adf2-f4911ba9ffa6__1__2"],
                       "the AltBeacon a monitor elsewhere expects is this very device")
        let local = MonitorExport.localBeaconDiscovery(node: "hall", prefix: "homeassistant", announce: true, shared: SharedBeaconDevice.local(status))
        let v = try XCTUnwrap(JSONValue.parse(Array(local[0].payload.utf8)))
        XCTAssertEqual(v["device"]?["identifiers"], .array([.string("altbeacond_beacon__hall")] + ids.map { .string($0) }))
        XCTAssertEqual(v["device"]?["manufacturer"]?.string, "altbeacond", "ours, labelled ours")
        XCTAssertEqual(MonitorExport.localBeaconFrameIDs(JSONValue.parse(Array(#"{"frames":[{"frame":"eddystone-uid"}],"uuid":"x","major":1,"minor":2}"#.utf8))), [])
    }

    /// Issue 48: every announcer of one beacon (two monitors naming it differently, the daemon
    /// on the Pi that sends it) gives its device one name and model, from its identity alone,
    /// so the name no longer changes with whoever announced last.
    func testEveryAnnouncerNamesTheDeviceAlike() throws {
        func devices(_ pairs: [(topic: String, payload: String)]) -> Set<String> {
            Set(pairs.compactMap { JSONValue.parse(Array($0.payload.utf8))?["device"] }.map { "\($0["name"]?.string ?? "-") / \($0["model"]?.string ?? "-")" })
        }
        let status = JSONValue.parse(Array(#"{"frames":[{"frame":"ibeacon"},{"frame":"altbeacon"}],"uuid":"2F234454-CF6D-4A0F-ADF2-F4911BA9FFA6","major":1,"minor":2}"#.utf8))
        let local = SharedBeaconDevice.local(status)
        let iBeacon = Expectation(name: "door", frame: IBeaconFrame(uuid: studyGuideUUID, major: 1, minor: 2, power: -59))
        let all = MonitorExport.discovery(lobby, node: "hall", prefix: "homeassistant")
            + MonitorExport.discovery(lobby.with(name: "entrance"), node: "attic", prefix: "homeassistant")
            + MonitorExport.discovery(iBeacon, node: "porch", prefix: "homeassistant")
            + MonitorExport.localBeaconDiscovery(node: "pi", prefix: "homeassistant", announce: true, shared: local)
            + MonitorExport.localBeaconControlDiscovery(node: "pi", prefix: "homeassistant", announce: true, shared: local)
        XCTAssertEqual(devices(all), ["Beacon 1/2 2f234454 / Beacon (UUID, major, minor)"])
        XCTAssertEqual(local.identifiers, [MonitorExport.beaconDeviceID(lobby), MonitorExport.beaconDeviceID(iBeacon)], "in the table's order")
        let connectivity = try XCTUnwrap(JSONValue.parse(Array(MonitorExport.discovery(lobby, node: "hall", prefix: "homeassistant")[0].payload.utf8)))
        XCTAssertTrue(connectivity["json_attributes_template"]?.string?.contains("'name': value_json.name") == true, "the monitor's own name, an attribute")

        // Without a shareable frame, the local beacon is its node's; other frames name by their IDs.
        XCTAssertEqual(devices(MonitorExport.localBeaconDiscovery(node: "pi", prefix: "homeassistant", announce: true)), ["pi beacon / altbeacond (beacon)"])
        XCTAssertEqual(SharedBeaconDevice.local(JSONValue.parse(Array(#"{"frames":[{"frame":"eddystone-uid"}],"uuid":"x","major":1,"minor":2}"#.utf8))), .none)
        let url = SharedBeaconDevice.of(type: "eddystone-url", ids: ["https://example.com/a-very-long-path/that-goes-on"])
        XCTAssertEqual(url.name, "Google Eddystone-URL https://example.com/a-very-long…", "31 characters and an ellipsis")
        XCTAssertEqual(url.model, "Google Eddystone-URL")
    }

    func testLegacyTopicsAreTheOldScheme() {
        XCTAssertEqual(MonitorExport.legacyDiscoveryTopics(lobby, node: "hall.pi", prefix: "homeassistant").first,
                       "homeassistant/binary_sensor/altbeacond_hall_pi_lobby/connectivity/config")
    }

    func testPasswordFilePermissions() {
        func problem(_ mode: UInt32, owner: UInt32 = 0, group: UInt32 = 107) -> String? {
            MonitorPasswordFile.problem(path: "/etc/altbeacond/mqtt-password",
                                        .init(mode: 0o100000 | mode, owner: owner, group: group, uid: 106, gid: 107))
        }
        XCTAssertNil(problem(0o640), "root:altbeacond 0640, the packaged setup")
        XCTAssertNil(problem(0o600, owner: 106, group: 106))
        XCTAssertNil(problem(0o400))
        XCTAssertEqual(problem(0o644), "the MQTT password file /etc/altbeacond/mqtt-password is open to every user (mode 0644): "
                       + "refused (chmod o-rwx /etc/altbeacond/mqtt-password)")
        XCTAssertNotNil(problem(0o602))
        XCTAssertEqual(problem(0o660), "the MQTT password file /etc/altbeacond/mqtt-password is writable by its group (mode 0660): "
                       + "refused (chmod g-w /etc/altbeacond/mqtt-password)")
        XCTAssertTrue(problem(0o640, group: 0)?.contains("readable by group 0, not the monitor's own (gid 107)") ?? false)
        XCTAssertNil(problem(0o600, group: 0), "another group without permissions is fine")
        XCTAssertTrue(problem(0o600, owner: 1000)?.contains("belongs to uid 1000") ?? false)
    }
}

extension JSONValue {
    func arrayContains(_ v: JSONValue) -> Bool { if case .array(let items) = self { items.contains(v) } else { false } }
}
