import XCTest
@testable import BeaconKit

/// Issue 32: which MQTT message becomes which request for the beacon daemon, and why the others
/// are ignored.
final class LocalBeaconControlTests: XCTestCase {
    let fleet = LocalBeaconControl(node: "hall.pi", mode: .fleet)

    func decide(_ c: LocalBeaconControl, _ topic: String, _ payload: String, retained: Bool = false) -> LocalBeaconControl.Decision {
        c.decide(topic: topic, payload: Array(payload.utf8), retained: retained)
    }

    func testFiltersPerMode() throws {
        XCTAssertEqual(LocalBeaconControl(node: "hall.pi", mode: .off).filters, [])
        XCTAssertNil(LocalBeaconControl(node: "hall.pi", mode: .off).subscribe(packetID: 3))
        XCTAssertEqual(LocalBeaconControl(node: "hall.pi", mode: .beacon).filters, ["altbeacond/hall.pi/beacon/set/+"])
        XCTAssertEqual(fleet.filters, ["altbeacond/hall.pi/beacon/set/+", "altbeacond/all/beacon/set/+"])
        let s = try XCTUnwrap(fleet.subscribe(packetID: 3))
        XCTAssertEqual(s.packetID, 3)
        XCTAssertEqual(s.subscriptions.map(\.qos), [.atLeastOnce, .atLeastOnce])
    }

    func testSettingsAreForwardedWithTheirOrigin() {
        XCTAssertEqual(decide(fleet, "altbeacond/hall.pi/beacon/set/power", "-40"),
                       .forward(RemoteRequest(.set(.power, "-40"), origin: "mqtt altbeacond/hall.pi/beacon/set/power")))
        XCTAssertEqual(decide(fleet, "altbeacond/hall.pi/beacon/set/uuid", "2f234454-cf6d-4a0f-adf2-f4911ba9ffa6"),
                       .forward(RemoteRequest(.set(.uuid, "2f234454-cf6d-4a0f-adf2-f4911ba9ffa6"), origin: "mqtt altbeacond/hall.pi/beacon/set/uuid")))
        XCTAssertEqual(decide(fleet, "altbeacond/all/beacon/set/eddystone_tlm", "OFF"),
                       .forward(RemoteRequest(.set(.frameEddystoneTLM, "OFF"), origin: "mqtt altbeacond/all/beacon/set/eddystone_tlm")))
        // The daemon judges the value (and reports a refusal); the monitor only carries it.
        XCTAssertEqual(decide(fleet, "altbeacond/hall.pi/beacon/set/power", "loud"),
                       .forward(RemoteRequest(.set(.power, "loud"), origin: "mqtt altbeacond/hall.pi/beacon/set/power")))
        for s in RemoteSetting.allCases {
            guard case .forward = decide(fleet, "altbeacond/hall.pi/beacon/set/\(s.rawValue)", "1") else { return XCTFail(s.rawValue) }
        }
    }

    func testRetainedSettingsAreAppliedRetainedButtonsAreNot() {
        XCTAssertEqual(decide(fleet, "altbeacond/all/beacon/set/interval_ms", "200", retained: true),
                       .forward(RemoteRequest(.set(.intervalMs, "200"), origin: "mqtt altbeacond/all/beacon/set/interval_ms")))
        XCTAssertEqual(decide(fleet, "altbeacond/hall.pi/beacon/set/identify", "PRESS"),
                       .forward(RemoteRequest(.identify, origin: "mqtt altbeacond/hall.pi/beacon/set/identify")))
        XCTAssertEqual(decide(fleet, "altbeacond/all/beacon/set/restart", "PRESS"),
                       .forward(RemoteRequest(.restart, origin: "mqtt altbeacond/all/beacon/set/restart")))
        for name in ["identify", "restart"] {
            guard case .ignore(let why) = decide(fleet, "altbeacond/hall.pi/beacon/set/\(name)", "PRESS", retained: true) else { return XCTFail(name) }
            XCTAssertTrue(why.contains("retained \(name)"), why)
        }
    }

    func testIdentityNeverFromTheFleet() {
        for s in [RemoteSetting.uuid, .major, .minor] {
            guard case .ignore(let why) = decide(fleet, "altbeacond/all/beacon/set/\(s.rawValue)", "7") else { return XCTFail(s.rawValue) }
            XCTAssertTrue(why.contains("never by the fleet topic"), why)
        }
        // A node called "all" is the fleet: no identity by its topic either.
        let all = LocalBeaconControl(node: "all", mode: .beacon)
        guard case .ignore = decide(all, "altbeacond/all/beacon/set/major", "7") else { return XCTFail() }
        guard case .forward = decide(all, "altbeacond/all/beacon/set/power", "-40") else { return XCTFail() }
    }

    func testIgnored() {
        let beacon = LocalBeaconControl(node: "hall.pi", mode: .beacon)
        XCTAssertFalse(beacon.handles("altbeacond/all/beacon/set/power"), "the fleet topic only with control = fleet")
        XCTAssertTrue(fleet.handles("altbeacond/all/beacon/set/power"))
        XCTAssertFalse(fleet.handles("altbeacond/other/beacon/set/power"))
        XCTAssertFalse(fleet.handles("homeassistant/status"))
        XCTAssertFalse(LocalBeaconControl(node: "hall.pi", mode: .off).handles("altbeacond/hall.pi/beacon/set/power"))
        func why(_ topic: String, _ payload: String) -> String {
            if case .ignore(let w) = decide(fleet, topic, payload) { return w }
            XCTFail("forwarded \(topic)"); return ""
        }
        XCTAssertTrue(why("altbeacond/hall.pi/beacon/set/colour", "red").contains("\"colour\" is not a setting that can be changed from afar"))
        XCTAssertTrue(why("altbeacond/hall.pi/beacon/set/power", "").contains("empty payload"))
        XCTAssertTrue(why("altbeacond/hall.pi/beacon/set/uuid", String(repeating: "a", count: 129)).contains("129 bytes (at most 128)"))
        guard case .forward = decide(fleet, "altbeacond/hall.pi/beacon/set/uuid", String(repeating: "a", count: 128)) else { return XCTFail() }
    }

    func testARequestFileAsTheDaemonDecodesIt() throws {
        guard case .forward(let r) = decide(fleet, "altbeacond/all/beacon/set/power", "-40\n") else { return XCTFail() }
        XCTAssertEqual(String(decoding: r.encoded, as: UTF8.self), "set power -40\norigin mqtt altbeacond/all/beacon/set/power\n")
        XCTAssertEqual(try RemoteRequest.decode(r.encoded).get().summary, "set power -40")
    }
}
