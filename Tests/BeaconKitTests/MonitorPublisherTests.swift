import XCTest
@testable import BeaconKit

final class MonitorPublisherTests: XCTestCase {
    let lobby = Expectation(name: "lobby", frame: AltBeaconFrame(BeaconIdentity(uuid: studyGuideUUID, major: 1, minor: 2)))

    func publisher() -> MonitorPublisher {
        MonitorPublisher(node: "pi", discoveryPrefix: "homeassistant", expectations: [lobby], silentAfterS: 30)
    }
    func tracker() -> BeaconTracker { BeaconTracker(expectations: [lobby], silentAfterMs: 30_000, startMs: 0) }

    /// The topics published, in order.
    func topics(_ actions: [MonitorPublisher.Action]) -> [String] {
        actions.compactMap { if case .publish(let p) = $0 { return p.topic } else { return nil } }
    }
    func payload(_ actions: [MonitorPublisher.Action], _ topic: String) -> String? {
        for case .publish(let p) in actions where p.topic == topic { return String(decoding: p.payload, as: UTF8.self) }
        return nil
    }
    var discoveryTopics: [String] { MonitorExport.discovery(lobby, node: "pi", prefix: "homeassistant", silentAfterS: 30).map(\.topic) }

    func testConnectedSaysEverythingRetainedAndSubscribesToTheBirthTopic() throws {
        var p = publisher()
        let a = p.connected(tracker(), health: "{\"health\":\"on-air\"}")
        XCTAssertEqual(topics(a), ["altbeacond/pi/status"] + discoveryTopics + ["altbeacond/pi/beacons/lobby", "altbeacond/pi/health"])
        XCTAssertEqual(payload(a, "altbeacond/pi/status"), "online")
        XCTAssertEqual(payload(a, "altbeacond/pi/health"), "{\"health\":\"on-air\"}")
        for case .publish(let m) in a { XCTAssertTrue(m.retain, m.topic) }
        XCTAssertEqual(a[1], .subscribe(try MQTTSubscribe(packetID: 1, subscriptions: [MQTTSubscription("homeassistant/status")])))
        XCTAssertEqual(a.last, .scheduleRefresh(afterMs: 30_000))
    }

    func testRefreshSendsOnlyWhatChanged() {
        var p = publisher()
        var t = tracker()
        _ = p.connected(t, health: nil)
        XCTAssertEqual(p.refresh(t, health: nil), [.scheduleRefresh(afterMs: 30_000)], "nothing changed")
        _ = t.record(monitorSighting(FrameTests.altbeaconHex, atMs: 100), wallSeconds: 1_764_000_000)
        let a = p.refresh(t, health: "h")
        XCTAssertEqual(topics(a), ["altbeacond/pi/beacons/lobby", "altbeacond/pi/health"])
        XCTAssertTrue(payload(a, "altbeacond/pi/beacons/lobby")?.contains("\"heard\":true") ?? false)
        XCTAssertEqual(topics(p.refresh(t, health: "h")), [])
    }

    func testANewSessionSaysItAllAgain() {
        var p = publisher()
        _ = p.connected(tracker(), health: nil)
        XCTAssertEqual(topics(p.connected(tracker(), health: nil)).count, 2 + discoveryTopics.count)
    }

    func testBirthMessageForcesDiscoveryAndTopics() throws {
        var p = publisher()
        _ = p.connected(tracker(), health: nil)
        XCTAssertTrue(p.isBirth(try MQTTPublish(topic: "homeassistant/status", payload: Array("online".utf8))))
        XCTAssertFalse(p.isBirth(try MQTTPublish(topic: "homeassistant/status", payload: Array("offline".utf8))))
        XCTAssertFalse(p.isBirth(try MQTTPublish(topic: "other/status", payload: Array("online".utf8))))
        XCTAssertEqual(topics(p.birth(tracker(), health: nil)), discoveryTopics + ["altbeacond/pi/beacons/lobby"])
    }

    func testStoppingSaysOfflineEvenIfSaidBefore() {
        var p = publisher()
        XCTAssertEqual(payload(p.stopping(), "altbeacond/pi/status"), "offline")
        XCTAssertEqual(payload(p.stopping(), "altbeacond/pi/status"), "offline")
    }

    func testATopicTheCodecRefusesIsReportedNotSent() {
        var p = MonitorPublisher(node: "pi", discoveryPrefix: "homeassistant", expectations: [lobby.with(name: "a+b")], silentAfterS: 30)
        let t = BeaconTracker(expectations: [lobby.with(name: "a+b")], silentAfterMs: 30_000, startMs: 0)
        XCTAssertTrue(p.refresh(t, health: nil).contains(.cannotPublish(topic: "altbeacond/pi/beacons/a+b")))
    }
}

/// The publisher's actions compared in the tests only (the binary does without the conformance).
extension MonitorPublisher.Action: Equatable {
    public static func == (a: Self, b: Self) -> Bool {
        switch (a, b) {
        case let (.publish(x), .publish(y)): x == y
        case let (.subscribe(x), .subscribe(y)): x == y
        case let (.scheduleRefresh(m), .scheduleRefresh(n)): m == n
        case let (.cannotPublish(x), .cannotPublish(y)): x == y
        default: false
        }
    }
}
