import Glibc
import XCTest
@testable import BeaconKit

/// What the monitor publishes over a scripted timeline, on the virtual clock, dispatched as
/// `MonitorMQTTOutput` does (changes at once, the refresh when scheduled, the will when the
/// broker gives the monitor up): a beacon heard for a minute, then silent for 15 minutes while
/// the monitor runs, then the monitor killed. Home Assistant's rules checked here in brief;
/// with `ALTBEACOND_HA_TRACE=FILE` the messages are also written there, one JSON object a line
/// (`t` in seconds, `topic`, `payload`, `retain`), for deploy/homeassistant/check-discovery.py,
/// which replays them through Home Assistant's own schemas, templates and expiry.
final class MonitorHomeAssistantTimelineTests: XCTestCase {
    struct Message { var ms: Int64; var topic: String; var payload: String; var retain: Bool }

    static let heardUntilMs: Int64 = 60_000
    static let killedAtMs: Int64 = heardUntilMs + 15 * 60_000
    /// The broker gives a killed monitor up 1.5 × keepalive_s (60 s) later and publishes its will.
    static let willAtMs: Int64 = killedAtMs + 90_000
    static let endMs: Int64 = willAtMs + 300_000

    static func timeline() -> [Message] {
        let lobby = Expectation(name: "lobby", frame: AltBeaconFrame(BeaconIdentity(uuid: studyGuideUUID, major: 1, minor: 2)))
        var tracker = BeaconTracker(expectations: [lobby], silentAfterMs: 30_000, startMs: 0)
        // `[mqtt] control` on: the local beacon's control entities are published too.
        var publisher = MonitorPublisher(node: "hall.pi", discoveryPrefix: "homeassistant", expectations: [lobby], control: .fleet)
        // The local beacon daemon's status file (issue 32: a device of its own): on air, with a
        // refused edit and a refused change from afar.
        let health = HealthCheck.Result(verdict: .degraded, reason: "a refused edit", status: JSONValue.parse(Array(LocalBeaconExportTests.file.utf8)))
        publisher.machine = LocalMachine(nowS: 1_764_000_125, socTemperatureMilliC: 51_540)
        var out: [Message] = []
        var nextRefreshMs: Int64?
        func status() -> MonitorStatus { MonitorStatus(adapter: "hci1", tracker: tracker, scanning: true, scanProblem: nil) }
        func perform(_ actions: [MonitorPublisher.Action], _ ms: Int64) {
            for a in actions {
                switch a {
                case .publish(let p): out.append(Message(ms: ms, topic: p.topic, payload: String(decoding: p.payload, as: UTF8.self), retain: p.retain))
                case .scheduleRefresh(let after): nextRefreshMs = ms + after
                case .subscribe, .cannotPublish: break
                }
            }
        }
        perform(publisher.connected(status(), health: health, nowMs: 0), 0)
        var ms: Int64 = 0
        while ms < killedAtMs {
            ms += 100
            var events: [TrackerEvent] = []
            if ms <= heardUntilMs && ms % 1000 == 0 {
                tracker.countAdvert()
                events += tracker.record(monitorSighting(FrameTests.altbeaconHex, atMs: ms), wallSeconds: 1_764_000_000 + ms / 1000)
            }
            if let d = tracker.nextDeadlineMs, ms >= d { events += tracker.tick(nowMs: ms) }
            if !events.isEmpty { perform(publisher.changed(status(), health: health), ms) }
            if let r = nextRefreshMs, ms >= r { perform(publisher.refresh(status(), health: health, nowMs: ms), ms) }
        }
        out.append(Message(ms: willAtMs, topic: "altbeacond/hall.pi/status", payload: "offline", retain: true))
        return out
    }

    func testASilentBeaconIsOffWhileTheMonitorRunsAndUnavailableAfterItsWill() throws {
        let messages = Self.timeline()
        let expire = Int64(MonitorExport.expireAfterS) * 1000
        let beacon = "altbeacond/hall.pi/beacons/lobby"
        // Home Assistant's rules in brief: available while the status topic last said online, and
        // the state topic's last message younger than expire_after.
        var ms: Int64 = 1000
        var sawSilent = false
        while ms < Self.endMs {
            let upTo = messages.filter { $0.ms <= ms }
            let online = upTo.last { $0.topic == "altbeacond/hall.pi/status" }?.payload == "online"
            let last = try XCTUnwrap(upTo.last { $0.topic == beacon })
            let available = online && ms - last.ms < expire
            if ms < Self.willAtMs {
                XCTAssertTrue(available, "unavailable at \(ms) ms")
                if ms > Self.heardUntilMs + 31_000 {
                    XCTAssertTrue(last.payload.contains("\"heard\":false"), "at \(ms) ms")
                    sawSilent = true
                }
            } else {
                XCTAssertFalse(available, "available at \(ms) ms after the will")
            }
            ms += 1000
        }
        XCTAssertTrue(sawSilent)
        if let path = getenv("ALTBEACOND_HA_TRACE").map({ String(cString: $0) }) {
            var text = ""
            for m in messages {
                text += "{\"t\":\(MonitorExport.decimal(Double(m.ms) / 1000, places: 1)),\"topic\":\(jsonString(m.topic)),"
                    + "\"payload\":\(jsonString(m.payload)),\"retain\":\(m.retain)}\n"
            }
            let f = try XCTUnwrap(fopen(path, "w"), path)
            fputs(text, f)
            fclose(f)
        }
    }
}
