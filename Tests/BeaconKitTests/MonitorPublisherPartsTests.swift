import XCTest
@testable import BeaconKit

/// The publisher's parts alone: the retained topics (`RetainedTopics`), what is known of the
/// local beacon daemon (`LocalBeaconKnown`), its change events (`LocalChangeEvents`), the machine
/// as shown (`ShownMachine`) and the advert rate (`AdvertRate`).
final class MonitorPublisherPartsTests: XCTestCase {
    func topics(_ actions: [MonitorPublisher.Action]) -> [String] {
        actions.compactMap { if case .publish(let p) = $0 { return p.topic + "=" + String(decoding: p.payload, as: UTF8.self) }; return nil }
    }

    func testARetainedTopicGoesOnlyWhenItChangesAndAnEmptyPayloadClearsIt() {
        var t = RetainedTopics(announced: [])
        XCTAssertEqual(topics(t.publish("altbeacond/n/a", "1")), ["altbeacond/n/a=1"])
        XCTAssertEqual(topics(t.publish("altbeacond/n/a", "1")), [], "unchanged: not again")
        XCTAssertEqual(topics(t.publish("altbeacond/n/a", "1", force: true)), ["altbeacond/n/a=1"], "a refresh")
        XCTAssertEqual(t.announced, ["altbeacond/n/a"])
        guard case .remember(["altbeacond/n/a"])? = t.rememberIfChanged().first else { return XCTFail("remembered") }
        XCTAssertTrue(t.rememberIfChanged().isEmpty, "said once")
        _ = t.publish("altbeacond/n/a", "")
        XCTAssertTrue(t.announced.isEmpty)
        guard case .cannotPublish("bad/#")? = t.publish("bad/#", "x").first else { return XCTFail("a topic the codec refuses") }
        XCTAssertTrue(t.announced.isEmpty)
    }

    func testWhatAnEarlierRunAnnouncedAndThisOneDoesNotIsClearedDiscoveryFirstStatesAtTheRefresh() {
        var t = RetainedTopics(announced: ["homeassistant/sensor/x/config", "altbeacond/n/old", "altbeacond/n/kept"])
        let before = t.newSession()
        _ = t.publish("altbeacond/n/kept", "1")
        XCTAssertEqual(t.stale(before: before), ["homeassistant/sensor/x/config"], "discovery now")
        XCTAssertEqual(t.staleStatesDue(), ["altbeacond/n/old"], "its state at the next refresh")
        XCTAssertEqual(t.staleStatesDue(), [], "once")

        var u = RetainedTopics(announced: ["altbeacond/n/old"])
        let b = u.newSession()
        _ = u.stale(before: b)
        _ = u.publish("altbeacond/n/old", "back")
        XCTAssertEqual(u.staleStatesDue(), [], "published again before the refresh: not cleared")
        _ = u.newSession()
        XCTAssertEqual(topics(u.publish("altbeacond/n/old", "back")), ["altbeacond/n/old=back"], "a new session says it again")
    }

    func health(_ json: String, verdict: HealthVerdict = .onAir) -> HealthCheck.Result {
        HealthCheck.Result(verdict: verdict, reason: "r", status: JSONValue.parse(Array(json.utf8)))
    }

    func testTheLocalBeaconIsAnnouncedWhenItsFileFirstAppearsAndAgainOnlyWhenWhatItShowsChanged() {
        var k = LocalBeaconKnown()
        XCTAssertFalse(k.noteAnnouncing(nil), "no daemon")
        XCTAssertTrue(k.noteAnnouncing(health("{\"version\":\"0.1.0\"}")))
        XCTAssertEqual(k.version, "0.1.0")
        XCTAssertFalse(k.noteAnnouncing(health("{\"version\":\"0.1.0\"}")))
        XCTAssertFalse(k.noteAnnouncing(nil), "gone: what was read is kept, nothing changes")
        XCTAssertEqual(k.version, "0.1.0")
        XCTAssertTrue(k.noteAnnouncing(health("{\"version\":\"0.2.0\"}")), "a new version: its sw_version")
        XCTAssertFalse(k.noteAnnouncing(health("{\"version\":\"0.2.0\"}", verdict: .unknown)))
    }

    func testChangeEventsGoOnceByNumberAndNeverFromBeforeTheFirstLook() {
        var e = LocalChangeEvents()
        let batch: [LocalChangeEvents.Event] = [(1, 90, "a"), (2, 110, "b"), (3, 120, "c")]
        XCTAssertEqual(e.new(batch, started: 50, nowS: 100).map(\.payload), ["b", "c"], "1 was made before the monitor looked")
        XCTAssertEqual(e.new(batch + [(4, 130, "d")], started: 50, nowS: 130).map(\.payload), ["d"])
        XCTAssertEqual(e.new([(1, 140, "a2")], started: 135, nowS: 140).map(\.payload), ["a2"], "a new daemon numbers from 1 again")
        XCTAssertEqual(e.new([(nil, 150, "old"), (nil, 150, "old")], started: 0, nowS: 150).map(\.payload), ["old"], "without numbers: by payload")
    }

    func testTheSocTemperatureMovesOnlyByAWholeDegree() {
        var m = ShownMachine()
        m.latest = LocalMachine(nowS: 1, socTemperatureMilliC: 50_000)
        XCTAssertEqual(m.shown().socTemperatureMilliC, 50_000)
        m.latest = LocalMachine(nowS: 2, socTemperatureMilliC: 50_900)
        XCTAssertEqual(m.shown(), LocalMachine(nowS: 2, socTemperatureMilliC: 50_000), "the time moves, tenths do not")
        m.latest = LocalMachine(nowS: 3, socTemperatureMilliC: 48_999)
        XCTAssertEqual(m.shown().socTemperatureMilliC, 48_999)
        m.latest = LocalMachine(nowS: 4, socTemperatureMilliC: nil)
        XCTAssertNil(m.shown().socTemperatureMilliC)
    }

    func testTheAdvertRateIsBetweenTwoCountsAndACounterThatWentBackIsSkipped() {
        var r = AdvertRate()
        r.count(100, now: 1000)
        XCTAssertNil(r.perS)
        r.count(400, now: 4000)
        XCTAssertEqual(r.perS, 100)
        r.count(10, now: 5000)   // a restarted scan: the total started again
        XCTAssertEqual(r.perS, 100, "kept")
        r.count(60, now: 6000)
        XCTAssertEqual(r.perS, 50)
    }
}
