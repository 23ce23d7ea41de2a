import XCTest
@testable import BeaconKit

final class MonitorPublisherTests: XCTestCase {
    let lobby = Expectation(name: "lobby", frame: AltBeaconFrame(BeaconIdentity(uuid: studyGuideUUID, major: 1, minor: 2)))

    func publisher() -> MonitorPublisher {
        MonitorPublisher(node: "pi", discoveryPrefix: "homeassistant", expectations: [lobby])
    }
    func tracker() -> BeaconTracker { BeaconTracker(expectations: [lobby], silentAfterMs: 30_000, startMs: 0) }
    func status(_ t: BeaconTracker, scanning: Bool = true) -> MonitorStatus {
        MonitorStatus(adapter: "hci1", tracker: t, scanning: scanning, scanProblem: scanning ? nil : "hci1 went down")
    }
    let onAir = HealthCheck.Result(verdict: .onAir, reason: "advertising", status: .object([("health", .string("on-air"))]))

    /// The topics published, in order.
    func topics(_ actions: [MonitorPublisher.Action]) -> [String] {
        actions.compactMap { if case .publish(let p) = $0 { return p.topic } else { return nil } }
    }
    func payload(_ actions: [MonitorPublisher.Action], _ topic: String) -> String? {
        for case .publish(let p) in actions where p.topic == topic { return String(decoding: p.payload, as: UTF8.self) }
        return nil
    }
    var legacyTopics: [String] { MonitorExport.legacyDiscoveryTopics(lobby, node: "pi", prefix: "homeassistant") }
    var observerTopics: [String] { MonitorExport.observerDiscovery(node: "pi", prefix: "homeassistant").map(\.topic) }
    /// The local beacon's entities, then its control entities (cleared while control is off),
    /// then its firmware's (issue 39).
    var localTopics: [String] {
        (MonitorExport.localBeaconDiscovery(node: "pi", prefix: "homeassistant", announce: true)
            + MonitorExport.localBeaconControlDiscovery(node: "pi", prefix: "homeassistant", announce: true)
            + MonitorExport.firmwareDiscovery(FirmwareUpdate(node: "pi", control: .off, authenticated: false, monitorVersion: ""),
                                              prefix: "homeassistant", announce: true)).map(\.topic)
    }
    var controlTopics: [String] { MonitorExport.localBeaconControlDiscovery(node: "pi", prefix: "homeassistant", announce: true).map(\.topic) }
    var discoveryTopics: [String] { MonitorExport.discovery(lobby, node: "pi", prefix: "homeassistant").map(\.topic) }
    let states = ["altbeacond/pi/beacons/lobby", "altbeacond/pi/observer", "altbeacond/pi/health", "altbeacond/pi/beacon", "altbeacond/pi/update",
                  "altbeacond/pi/update/detail"]

    func testConnectedSaysEverythingRetainedAndSubscribesToTheBirthTopic() throws {
        var p = publisher()
        let a = p.connected(status(tracker()), health: onAir, now: 0)
        XCTAssertEqual(topics(a), ["altbeacond/pi/status"] + legacyTopics + observerTopics + localTopics + discoveryTopics + states)
        XCTAssertEqual(payload(a, "altbeacond/pi/status"), "online")
        XCTAssertEqual(payload(a, "altbeacond/pi/health"), "{\"health\":\"on-air\",\"exit\":0,\"reason\":\"advertising\",\"status\":{\"health\":\"on-air\"}}")
        for t in legacyTopics { XCTAssertEqual(payload(a, t), "", "the IDs before the escaping are cleared") }
        for case .publish(let m) in a { XCTAssertTrue(m.retain, m.topic) }
        XCTAssertEqual(a[1], .subscribe(try MQTTSubscribe(packetID: 1, subscriptions: [MQTTSubscription("homeassistant/status")])))
        XCTAssertEqual(a.last, .scheduleRefresh(afterMs: 30_000))
    }

    func testWithoutABeaconDaemonItsDeviceIsLeftOutUntilTheFileAppears() {
        var p = publisher()
        let a = p.connected(status(tracker()), health: nil, now: 0)
        XCTAssertEqual(payload(a, observerTopics.last!), "", "the observer's old Beacon health entity is removed")
        for t in localTopics { XCTAssertEqual(payload(a, t), "", "no device: an empty retained config removes each entity") }
        XCTAssertEqual(payload(a, "altbeacond/pi/health"), "")
        XCTAssertNil(payload(a, "altbeacond/pi/beacon"),
                     "not cleared in the burst that removes its entities: HA would render the empty state in each (issue 38)")
        XCTAssertNil(payload(p.changed(status(tracker()), health: nil), "altbeacond/pi/beacon"))
        XCTAssertEqual(payload(p.refresh(status(tracker()), health: nil, now: 30_000), "altbeacond/pi/beacon"), "",
                       "cleared at the next refresh, when HA has removed them")
        XCTAssertNil(payload(p.refresh(status(tracker()), health: nil, now: 60_000), "altbeacond/pi/beacon"), "once")
        p.machine = LocalMachine(nowS: 1_764_000_100, socTemperatureMilliC: 47_250)
        let later = p.changed(status(tracker()), health: onAir)
        XCTAssertTrue(payload(later, localTopics[0])?.contains("\"On air\"") ?? false, "announced once the file is there")
        XCTAssertTrue(payload(later, "altbeacond/pi/health")?.hasPrefix("{\"health\":\"on-air\"") ?? false)
        XCTAssertTrue(payload(later, "altbeacond/pi/beacon")?.contains("\"on_air\":true") ?? false)
        XCTAssertTrue(payload(later, "altbeacond/pi/beacon")?.contains("\"soc_temperature_c\":47.3") ?? false)
        // The daemon stopped (it removes its file): said, not left as it was.
        let gone = p.changed(status(tracker()), health: nil)
        XCTAssertTrue(payload(gone, "altbeacond/pi/health")?.hasPrefix("{\"health\":\"unknown\"") ?? false, "as altbeacond health --json")
        XCTAssertTrue(payload(gone, "altbeacond/pi/beacon")?.hasPrefix("{\"health\":\"not-running\",\"on_air\":false") ?? false,
                      "never HA's reserved unknown")
        XCTAssertNil(payload(gone, localTopics[0]), "the device stays")
    }

    func testChangesGoAtOnceAndEveryStateAtEachRefreshChangedOrNot() {
        var p = publisher()
        var t = tracker()
        _ = p.connected(status(t), health: nil, now: 0)
        XCTAssertEqual(p.changed(status(t), health: nil), [], "nothing changed")
        _ = t.record(monitorSighting(FrameTests.altbeaconHex, atMs: 100), wallSeconds: 1_764_000_000)
        let a = p.changed(status(t), health: nil)
        XCTAssertEqual(topics(a), ["altbeacond/pi/beacons/lobby", "altbeacond/pi/observer"])
        XCTAssertTrue(payload(a, "altbeacond/pi/beacons/lobby")?.contains("\"heard\":true") ?? false)
        XCTAssertFalse(a.contains { if case .scheduleRefresh = $0 { true } else { false } }, "a change never delays the refresh")
        XCTAssertEqual(topics(p.changed(status(t), health: nil)), [])
        XCTAssertEqual(topics(p.refresh(status(t), health: nil, now: 30_000)),
                       ["altbeacond/pi/beacons/lobby", "altbeacond/pi/observer", "altbeacond/pi/beacon", "altbeacond/pi/beacon/started",
                        "altbeacond/pi/update", "altbeacond/pi/update/detail"],
                       "no beacon daemon: its state and its firmware's cleared at the first refresh, after their entities went")
        let r = p.refresh(status(t), health: nil, now: 60_000)
        XCTAssertEqual(topics(r), ["altbeacond/pi/beacons/lobby", "altbeacond/pi/observer"],
                       "unchanged, yet said again: HA's expire_after counts from the last message (no health file: its topics were cleared once)")
        XCTAssertEqual(topics(p.refresh(status(t), health: onAir, now: 60_000)).suffix(states.count), states)
        XCTAssertEqual(r.last, .scheduleRefresh(afterMs: 30_000))
    }

    func testTheObserverTopicSaysTheAdapterAndTheAdvertRate() throws {
        var p = publisher()
        var t = tracker()
        _ = p.connected(status(t), health: nil, now: 0)
        for _ in 0..<150 { t.countAdvert() }
        let r = p.refresh(status(t), health: nil, now: 30_000)
        let v = try XCTUnwrap(JSONValue.parse(Array((payload(r, "altbeacond/pi/observer") ?? "").utf8)))
        XCTAssertEqual(v["adverts_per_s"], .number("5"))
        XCTAssertEqual(v["adverts"]?.integer, 150)
        XCTAssertEqual(v["scanning"], .bool(true))
        XCTAssertEqual(v["scan_problem"], .null)
        let down = p.changed(status(t, scanning: false), health: nil)
        let d = try XCTUnwrap(JSONValue.parse(Array((payload(down, "altbeacond/pi/observer") ?? "").utf8)))
        XCTAssertEqual(d["scan_problem"]?.string, "hci1 went down")
    }

    func testANewSessionSaysItAllAgain() {
        var p = publisher()
        _ = p.connected(status(tracker()), health: nil, now: 0)
        XCTAssertEqual(topics(p.connected(status(tracker()), health: nil, now: 1)).count,
                       1 + legacyTopics.count + observerTopics.count + localTopics.count + discoveryTopics.count + states.count - 3,
                       "all but the local beacon's state and its firmware's two, cleared at a refresh")
    }

    func testBirthMessageForcesDiscoveryAndTopics() throws {
        var p = publisher()
        _ = p.connected(status(tracker()), health: nil, now: 0)
        XCTAssertTrue(p.isBirth(try MQTTPublish(topic: "homeassistant/status", payload: Array("online".utf8))))
        XCTAssertFalse(p.isBirth(try MQTTPublish(topic: "homeassistant/status", payload: Array("offline".utf8))))
        XCTAssertFalse(p.isBirth(try MQTTPublish(topic: "other/status", payload: Array("online".utf8))))
        XCTAssertEqual(topics(p.birth(status(tracker()), health: nil)), observerTopics + localTopics + discoveryTopics + states.dropLast(4),
                       "the local beacon's empty topics were said once already")
    }

    func testControlEntitiesOnlyWithControlOnElseCleared() {
        var off = publisher()
        let a = off.connected(status(tracker()), health: onAir, now: 0)
        for t in controlTopics { XCTAssertEqual(payload(a, t), "", "control off: \(t) cleared like the old beacon_health entity") }
        XCTAssertTrue(payload(a, localTopics[0])?.contains("\"On air\"") ?? false, "the rest of the device stays")
        var on = MonitorPublisher(node: "pi", discoveryPrefix: "homeassistant", expectations: [lobby], control: .beacon)
        let b = on.connected(status(tracker()), health: nil, now: 0)
        for t in controlTopics { XCTAssertEqual(payload(b, t), "", "no beacon daemon: nothing to control") }
        let c = on.changed(status(tracker()), health: onAir)
        for t in controlTopics { XCTAssertTrue(payload(c, t)?.contains("\"identifiers\":[\"altbeacond_beacon__pi\"]") ?? false, t) }
        XCTAssertEqual(controlTopics.filter { payload(c, $0)?.contains("\"command_topic\":\"altbeacond/pi/beacon/set/") ?? false }.count, 13)
    }

    func testStoppingSaysOfflineEvenIfSaidBefore() {
        var p = publisher()
        XCTAssertEqual(payload(p.stopping(), "altbeacond/pi/status"), "offline")
        XCTAssertEqual(payload(p.stopping(), "altbeacond/pi/status"), "offline")
    }

    func testATopicTheCodecRefusesIsReportedNotSent() {
        var p = MonitorPublisher(node: "pi", discoveryPrefix: "homeassistant", expectations: [lobby.with(name: "a+b")])
        let t = BeaconTracker(expectations: [lobby.with(name: "a+b")], silentAfterMs: 30_000, startMs: 0)
        XCTAssertTrue(p.refresh(status(t), health: nil, now: 0).contains(.cannotPublish(topic: "altbeacond/pi/beacons/a+b")))
    }

    /// Issue 38: a change from afar is one event, not retained, even when it repeats the last
    /// one; never again at a new session; not for a change older than the monitor's first look.
    func testEachChangeOneEventOnce() throws {
        func health(_ time: Int64, version: String = "0.1.0") -> HealthCheck.Result {
            HealthCheck.Result(verdict: .degraded, reason: "r", status: JSONValue.parse(Array(("{\"version\":\"\(version)\",\"state\":\"advertising\","
                + "\"change\":{\"request\":\"set power 5\",\"origin\":\"o\",\"outcome\":\"refused\",\"message\":\"m\",\"time\":\(time)}}").utf8)))
        }
        let topic = "altbeacond/pi/beacon/change"
        var p = MonitorPublisher(node: "pi", discoveryPrefix: "homeassistant", expectations: [lobby], control: .beacon, version: "0.2.0")
        p.machine = LocalMachine(nowS: 1000)
        let a = p.connected(status(tracker()), health: health(900), now: 0)
        XCTAssertNil(payload(a, topic), "made before the monitor looked: not news")
        XCTAssertTrue(payload(a, localTopics[0])?.contains("\"sw_version\":\"0.1.0\"") ?? false, "the daemon's version")
        XCTAssertTrue(payload(a, observerTopics[0])?.contains("\"sw_version\":\"0.2.0\"") ?? false, "the monitor's")
        p.machine = LocalMachine(nowS: 1010)
        let b = p.changed(status(tracker()), health: health(1005))
        XCTAssertEqual(payload(b, topic), "{\"event_type\":\"refused\",\"request\":\"set power 5\",\"origin\":\"o\",\"message\":\"m\",\"time\":1005}")
        for case .publish(let m) in b where m.topic == topic { XCTAssertFalse(m.retain, "HA ignores a retained event anyway") }
        XCTAssertNil(payload(p.refresh(status(tracker()), health: health(1005), now: 30_000), topic), "once")
        XCTAssertNil(payload(p.connected(status(tracker()), health: health(1005), now: 40_000), topic), "not again at a new session")
        XCTAssertNotNil(payload(p.changed(status(tracker()), health: health(1020)), topic), "the same refusal again: a new event")
        let off = MonitorPublisher(node: "pi", discoveryPrefix: "homeassistant", expectations: [lobby])
        var o = off
        o.machine = LocalMachine(nowS: 1000)
        _ = o.connected(status(tracker()), health: health(900), now: 0)
        XCTAssertNil(payload(o.changed(status(tracker()), health: health(1005)), topic), "control off: no event entity")
        // An update: the device's sw_version follows, at once.
        let u = p.changed(status(tracker()), health: health(1020, version: "0.3.0"))
        XCTAssertTrue(payload(u, localTopics[0])?.contains("\"sw_version\":\"0.3.0\"") ?? false)
        XCTAssertTrue(topics(p.changed(status(tracker()), health: nil)).allSatisfy { !$0.hasPrefix("homeassistant/") },
                      "the daemon gone: its device keeps its version, no discovery again")
    }

    /// Issue 48: the SoC temperature moves on by a whole degree or more, not by the tenths a Pi's
    /// wanders by all day (each new value a recorder row in HA).
    func testTheSoCTemperatureMovesByWholeDegrees() {
        var p = publisher()
        func shown(_ milli: Int64) -> String? {
            p.machine = LocalMachine(nowS: 1000, socTemperatureMilliC: milli)
            let json = payload(p.refresh(status(tracker()), health: onAir, now: 0), "altbeacond/pi/beacon")
            guard case .number(let n)? = json.flatMap({ JSONValue.parse(Array($0.utf8))?["soc_temperature_c"] }) else { return nil }
            return n
        }
        XCTAssertEqual(shown(47_200), "47.2")
        XCTAssertEqual(shown(47_900), "47.2", "0.7 degrees: not news")
        XCTAssertEqual(shown(46_300), "47.2")
        XCTAssertEqual(shown(48_250), "48.3", "a degree or more: shown")
        XCTAssertEqual(shown(47_200), "47.2")
    }

    /// Issue 48: a batch's every outcome is an event, though the file is read once after all of
    /// them; each by its number once; a restarted daemon numbers from 1 again.
    func testEveryChangeOfABatchIsAnEvent() throws {
        func health(started: Int64, _ changes: [(n: Int, request: String, outcome: String, time: Int64)]) -> HealthCheck.Result {
            let items = changes.map { "{\"request\":\"\($0.request)\",\"origin\":\"o\",\"outcome\":\"\($0.outcome)\",\"message\":\"\",\"time\":\($0.time),\"n\":\($0.n)}" }
            return HealthCheck.Result(verdict: .onAir, reason: "r", status: JSONValue.parse(Array(("{\"version\":\"0.1.0\",\"state\":\"advertising\","
                + "\"started\":\(started),\"changes\":[\(items.joined(separator: ","))]}").utf8)))
        }
        func events(_ actions: [MonitorPublisher.Action]) -> [String] {
            actions.compactMap { if case .publish(let m) = $0, m.topic == "altbeacond/pi/beacon/change" { String(decoding: m.payload, as: UTF8.self) } else { nil } }
        }
        var p = MonitorPublisher(node: "pi", discoveryPrefix: "homeassistant", expectations: [lobby], control: .beacon, version: "0.2.0")
        p.machine = LocalMachine(nowS: 1000)
        XCTAssertEqual(events(p.connected(status(tracker()), health: health(started: 900, [(1, "set power -40", "applied", 950)]), now: 0)), [],
                       "made before the monitor looked")
        let batch = health(started: 900, [(1, "set power -40", "applied", 950), (2, "set major 7", "applied", 1001),
                                          (3, "set minor x", "refused", 1001), (4, "set power 5", "refused", 1001)])
        let e = events(p.changed(status(tracker()), health: batch))
        XCTAssertEqual(e.count, 3, "\(e)")
        XCTAssertTrue(e[0].contains("set major 7") && e[1].contains("set minor x") && e[2].contains("set power 5"), "in order: \(e)")
        XCTAssertEqual(events(p.refresh(status(tracker()), health: batch, now: 30_000)), [], "each once")
        let restarted = health(started: 1100, [(1, "set power -40", "applied", 1101)])
        XCTAssertEqual(events(p.changed(status(tracker()), health: restarted)).count, 1, "a new daemon: numbered from 1 again")
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
