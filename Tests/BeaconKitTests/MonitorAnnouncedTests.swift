import XCTest
@testable import BeaconKit

/// Issue 38, no ghosts: what the monitor announced is remembered, and what is no longer
/// configured (a beacon, a node, the control entities) is cleared from the broker.
final class MonitorAnnouncedTests: XCTestCase {
    let lobby = Expectation(name: "lobby", frame: AltBeaconFrame(BeaconIdentity(uuid: studyGuideUUID, major: 1, minor: 2)))
    let hall = Expectation(name: "hall", frame: AltBeaconFrame(BeaconIdentity(uuid: studyGuideUUID, major: 1, minor: 3)))

    func status(_ e: [Expectation]) -> MonitorStatus {
        MonitorStatus(adapter: "hci1", tracker: BeaconTracker(expectations: e, silentAfterMs: 30_000, startMs: 0), scanning: true, scanProblem: nil)
    }
    func published(_ actions: [MonitorPublisher.Action]) -> [(String, String)] {
        actions.compactMap { if case .publish(let p) = $0 { return (p.topic, String(decoding: p.payload, as: UTF8.self)) } else { return nil } }
    }
    func remembered(_ actions: [MonitorPublisher.Action]) -> [String]? {
        for case .remember(let t) in actions { return t }
        return nil
    }

    func testTheFileIsOneTopicALineSorted() {
        XCTAssertEqual(MonitorAnnounced.text(["b/c", "a", ""]), Array("a\nb/c\n".utf8))
        XCTAssertEqual(MonitorAnnounced.parse(Array("a\n\nb/c\nhalf".utf8)), ["a", "b/c"], "a line without its newline is not taken")
        XCTAssertEqual(MonitorAnnounced.parse(MonitorAnnounced.text(["x", "y"])), ["x", "y"])
        XCTAssertEqual(MonitorAnnounced.parse([UInt8](repeating: 0x41, count: MonitorAnnounced.maxBytes + 1)), [])
        XCTAssertEqual(MonitorAnnounced.fileName(configPath: "/etc/altbeacond/monitor.toml"), "monitor-announced")
        XCTAssertNotEqual(MonitorAnnounced.fileName(configPath: "/tmp/a.toml"), MonitorAnnounced.fileName(configPath: "/tmp/b.toml"))
        XCTAssertEqual(MonitorAnnounced.fileName(configPath: "/tmp/a.toml").utf8.count, "monitor-announced-".utf8.count + 16)
    }

    func testARemovedBeaconIsClearedAtTheNextStartItsStateAtTheFirstRefresh() throws {
        var first = MonitorPublisher(node: "pi", discoveryPrefix: "homeassistant", expectations: [lobby, hall], version: "1")
        let a = first.connected(status([lobby, hall]), health: nil, now: 0)
        let kept = try XCTUnwrap(remembered(a))
        XCTAssertTrue(kept.contains("altbeacond/pi/beacons/hall"))
        XCTAssertTrue(kept.contains("altbeacond/pi/status"))
        XCTAssertFalse(kept.contains { $0.hasPrefix("homeassistant/sensor/altbeacond_beacon__") }, "cleared topics are not remembered")
        XCTAssertNil(remembered(first.refresh(status([lobby, hall]), health: nil, now: 30_000)), "written only when the set changes")
        let hallDiscovery = MonitorExport.discovery(hall, node: "pi", prefix: "homeassistant").map(\.topic)

        // The next start, hall removed from monitor.toml.
        var next = MonitorPublisher(node: "pi", discoveryPrefix: "homeassistant", expectations: [lobby], version: "1", announced: kept)
        let b = next.connected(status([lobby]), health: nil, now: 0)
        let sent = published(b)
        for t in hallDiscovery { XCTAssertEqual(sent.last { $0.0 == t }?.1, "", t) }
        XCTAssertNil(sent.first { $0.0 == "altbeacond/pi/beacons/hall" }, "not in the burst that removes its entities")
        XCTAssertFalse(try XCTUnwrap(remembered(b)).contains(hallDiscovery[0]))
        let r = next.refresh(status([lobby]), health: nil, now: 30_000)
        XCTAssertEqual(published(r).first { $0.0 == "altbeacond/pi/beacons/hall" }?.1, "", "cleared at the first refresh")
        XCTAssertFalse(try XCTUnwrap(remembered(r)).contains("altbeacond/pi/beacons/hall"))
        XCTAssertNil(published(next.refresh(status([lobby]), health: nil, now: 60_000)).first { $0.0 == "altbeacond/pi/beacons/hall" }, "once")
        XCTAssertEqual(published(b).filter { $0.0.hasPrefix("homeassistant/") && $0.0.contains("lobby") == false && $0.1.isEmpty
            && $0.0.contains("__1__2/") }.count, 0, "lobby's own discovery is not cleared")
    }

    func testARenamedNodeClearsTheOldNodesDiscoveryAndState() throws {
        var old = MonitorPublisher(node: "old", discoveryPrefix: "homeassistant", expectations: [lobby], control: .beacon, version: "1")
        let onAir = HealthCheck.Result(verdict: .onAir, reason: "advertising", status: .object([("version", .string("1"))]))
        let kept = try XCTUnwrap(remembered(old.connected(status([lobby]), health: onAir, now: 0)))
        XCTAssertTrue(kept.contains("homeassistant/switch/altbeacond_beacon__old/advertising/config"))
        var new = old.reconfigured(node: "new", discoveryPrefix: "homeassistant", expectations: [lobby], control: .off)
        let b = new.connected(status([lobby]), health: onAir, now: 0)
        let sent = published(b)
        for t in kept where !t.hasPrefix("altbeacond/") { XCTAssertEqual(sent.last { $0.0 == t }?.1, "", t) }
        XCTAssertNil(sent.first { $0.0.hasPrefix("altbeacond/old/") })
        let r = published(new.refresh(status([lobby]), health: onAir, now: 30_000))
        for t in kept where t.hasPrefix("altbeacond/old/") { XCTAssertEqual(r.first { $0.0 == t }?.1, "", t) }
        XCTAssertTrue(new.announced.allSatisfy { !$0.contains("__old") && !$0.hasPrefix("altbeacond/old/") }, "\(new.announced.sorted())")
    }

    func testControlSwitchedOffClearsItsEntitiesOnce() throws {
        let onAir = HealthCheck.Result(verdict: .onAir, reason: "advertising", status: .object([("version", .string("1"))]))
        var on = MonitorPublisher(node: "pi", discoveryPrefix: "homeassistant", expectations: [], control: .beacon)
        let kept = try XCTUnwrap(remembered(on.connected(status([]), health: onAir, now: 0)))
        var off = MonitorPublisher(node: "pi", discoveryPrefix: "homeassistant", expectations: [], control: .off, announced: kept)
        let sent = published(off.connected(status([]), health: onAir, now: 0))
        let restart = "homeassistant/button/altbeacond_beacon__pi/restart/config"
        XCTAssertEqual(sent.filter { $0.0 == restart }.map(\.1), [""])
        XCTAssertFalse(off.announced.contains(restart))
    }

    func testTheTrackerKeepsWhatItKnowsOfTheBeaconsStillExpected() {
        var t = BeaconTracker(expectations: [lobby, hall], silentAfterMs: 30_000, startMs: 0)
        _ = t.record(monitorSighting(FrameTests.altbeaconHex, atMs: 1000), wallSeconds: 100)
        XCTAssertTrue(t.states[0].heard)
        let renamed = lobby.with(name: "entrance")
        let u = t.reconfigured(expectations: [renamed], silentAfterMs: 60_000, now: 5000)
        XCTAssertEqual(u.states.map(\.name), ["entrance"])
        XCTAssertTrue(u.states[0].heard, "the same frame, whatever its name")
        XCTAssertEqual(u.states[0].adverts, 1)
        XCTAssertEqual(u.silentAfterMs, 60_000)
        let added = t.reconfigured(expectations: [lobby, hall, lobby.with(name: "x").withMinor(9)], silentAfterMs: 30_000, now: 100_000)
        XCTAssertFalse(added.states[2].heard)
        XCTAssertEqual(added.nextDeadlineMs, 31_000, "lobby's own deadline; a new beacon has until 130 s")
    }

    func testWhatAnEditAppliesAndWhatWaitsForARestart() {
        let running = MonitorConfig(expectations: [lobby], mqtt: MQTTSettings(host: "broker"))
        var edited = running
        edited.expectations = [hall]; edited.node = "n"; edited.silentAfterS = 60; edited.adapter = "hci1"; edited.adapterIndex = 1
        edited.metrics = MetricsSettings(textfile: "/x.prom")
        let (c, waiting) = running.applying(edited)
        XCTAssertEqual(c.expectations, [hall]); XCTAssertEqual(c.node, "n"); XCTAssertEqual(c.silentAfterS, 60)
        XCTAssertEqual(c.adapter, "hci0"); XCTAssertEqual(c.metrics, MetricsSettings())
        XCTAssertEqual(waiting, ["[monitor] adapter", "[metrics]"])
        let none = MonitorConfig(expectations: [], mqtt: MQTTSettings(host: "broker"))
        XCTAssertEqual(none.applying(running).waiting, ["[expect] tables on a monitor started without any"])
        XCTAssertEqual(none.applying(running).config.expectations, [])
        XCTAssertEqual(running.applying(MonitorConfig(expectations: [lobby])).waiting, ["[mqtt] removed"])
        XCTAssertEqual(running.applying(running).waiting, [])
    }
}

private extension Expectation {
    func withMinor(_ m: UInt16) -> Expectation {
        Expectation(name: name, frame: AltBeaconFrame(BeaconIdentity(uuid: studyGuideUUID, major: 1, minor: m)))
    }
}
