import Glibc
import XCTest
@testable import BeaconKit

/// What the monitor publishes over a scripted timeline, on the virtual clock, dispatched as
/// `MonitorMQTTOutput` does (changes at once, the refresh when scheduled, the will when the
/// broker gives the monitor up): a beacon heard for a minute, then silent for 15 minutes while
/// the monitor runs, then the monitor killed. Meanwhile the local beacon daemon refuses the
/// same change twice (`changeTimesS`, two events) and is SIGKILLed at `daemonKilledAtMs` (its
/// status file left, its pid dead: every value unknown), and its card's updater installs a release
/// and rolls it back (`firmware`, issue 39). A second node (`removal`) has had a
/// beacon daemon that is gone when a later monitor starts: its entities are removed. Node porch
/// has a beacon removed from its config and is then renamed (`ghosts`: issue 38, cleared from the
/// broker); east and west expect one beacon (one device). Home Assistant's rules checked here in brief;
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
    /// The local beacon daemon refuses `set power 5` again at these times (monitor ms, and the
    /// status file's `change.time`).
    static let changeTimesS: [(ms: Int64, time: Int64)] = [(120_000, 1_764_000_200), (300_000, 1_764_000_300)]
    /// The local beacon daemon killed: its status file stays, its pid is dead.
    static let daemonKilledAtMs: Int64 = 400_000

    /// The local beacon daemon's status file at `ms`, judged as the monitor does.
    static func localHealth(atMs ms: Int64) -> HealthCheck.Result {
        var file = LocalBeaconExportTests.file
        if let c = changeTimesS.last(where: { $0.ms <= ms }) {
            file = file.replacing("\"time\":1764000100", with: "\"time\":\(c.time)")
        }
        return HealthCheck.evaluate(path: "/run/altbeacond/status.json", file: Array(file.utf8), now: 1_764_000_125) { _ in
            ms < daemonKilledAtMs
        }
    }

    /// Issue 39: hall.pi is an A/B card offered 0.2.0 on the fleet's release topic; its updater
    /// installs it from `firmwareInstallingMs` and has rolled it back at `firmwareRolledBackMs`.
    static let firmwareInstallingMs: Int64 = 150_000
    static let firmwareRolledBackMs: Int64 = 250_000

    static func firmware(atMs ms: Int64) -> FirmwareUpdate {
        var f = FirmwareUpdate(node: "hall.pi", control: .fleet, authenticated: true, monitorVersion: "0.1.0")
        let release = "{\"version\":\"0.2.0\",\"url\":\"https://example.net/altbeacond-0.2.0.raucb\",\"size\":123456,"
            + "\"sha256\":\"\(String(repeating: "ab", count: 32))\",\"release_url\":\"https://example.net/notes/0.2.0\"}"
        _ = f.received(topic: FirmwareUpdate.defaultReleaseTopic, payload: Array(release.utf8), retained: true, nowS: 1_764_000_000)
        var s = UpdaterState(installedVersion: "0.1.0", slot: "A", phaseWord: "idle", outcome: UpdaterState.Outcome.none)
        if ms >= firmwareRolledBackMs {
            s.outcome = .rolledBack; s.outcomeVersion = "0.2.0"; s.message = "its beacon was not on air within 600 s"; s.time = 1_764_000_250
        } else if ms >= firmwareInstallingMs {
            s.phaseWord = "installing"; s.progress = 42
        }
        f.capability = .ab(s)
        return f
    }

    static func timeline() -> [Message] {
        let lobby = Expectation(name: "lobby", frame: AltBeaconFrame(BeaconIdentity(uuid: studyGuideUUID, major: 1, minor: 2)))
        var tracker = BeaconTracker(expectations: [lobby], silentAfterMs: 30_000, startMs: 0)
        // `[mqtt] control` on: the local beacon's control entities are published too.
        var publisher = MonitorPublisher(node: "hall.pi", discoveryPrefix: "homeassistant", expectations: [lobby], control: .fleet, version: "0.1.0")
        // The local beacon daemon's status file (issue 32: a device of its own): on air, with a
        // refused edit and a refused change from afar.
        publisher.machine = LocalMachine(nowS: 1_764_000_125, socTemperatureMilliC: 51_540)
        // issue 48: the board's model, serial and area on the devices (HA's device schema checks them)
        publisher.board = DeviceBoard(model: "Raspberry Pi 3 Model B Rev 1.2", serial: "00000000c0ffee01", area: "Hall")
        publisher.firmware = firmware(atMs: 0)
        var out: [Message] = []
        var nextRefreshMs: Int64?
        func status() -> MonitorStatus { MonitorStatus(adapter: "hci1", tracker: tracker, scanning: true, scanProblem: nil) }
        func perform(_ actions: [MonitorPublisher.Action], _ ms: Int64) {
            for a in actions {
                switch a {
                case .publish(let p): out.append(Message(ms: ms, topic: p.topic, payload: String(decoding: p.payload, as: UTF8.self), retain: p.retain))
                case .scheduleRefresh(let after): nextRefreshMs = ms + after
                case .subscribe, .cannotPublish, .remember: break
                }
            }
        }
        perform(publisher.connected(status(), health: localHealth(atMs: 0), now: 0), 0)
        var ms: Int64 = 0
        while ms < killedAtMs {
            ms += 100
            var events: [TrackerEvent] = []
            if ms <= heardUntilMs && ms % 1000 == 0 {
                tracker.countAdvert()
                events += tracker.record(monitorSighting(FrameTests.altbeaconHex, atMs: ms), wallSeconds: 1_764_000_000 + ms / 1000)
            }
            if let d = tracker.nextDeadlineMs, ms >= d { events += tracker.tick(now: ms) }
            // The status file's and the updater's state file's watchers: a change is published at once.
            publisher.firmware = firmware(atMs: ms)
            let fileChanged = changeTimesS.contains { $0.ms == ms } || ms == daemonKilledAtMs
                || ms == firmwareInstallingMs || ms == firmwareRolledBackMs
            if !events.isEmpty || fileChanged { perform(publisher.changed(status(), health: localHealth(atMs: ms)), ms) }
            if let r = nextRefreshMs, ms >= r { perform(publisher.refresh(status(), health: localHealth(atMs: ms), now: ms), ms) }
        }
        out.append(Message(ms: willAtMs, topic: "altbeacond/hall.pi/status", payload: "offline", retain: true))
        return out + removal() + ghosts() + twoMonitors()
    }

    /// Issue 38, no ghosts: node "porch" expects lobby and hall; monitor.toml is edited while it
    /// runs (hall removed: `reconfigured`, a new burst), then the node renamed "veranda" (its
    /// `offline`, a new session under the new name); each burst clears what the configuration
    /// no longer publishes, discovery at once and state topics at the next refresh. Then the
    /// monitor restarts, remembering what it announced (`MonitorAnnounced`): nothing more to clear.
    static let ghostsStartMs: Int64 = 20_000
    static let hallRemovedAtMs: Int64 = 100_000
    static let renamedAtMs: Int64 = 200_000
    static let ghostsEndMs: Int64 = 400_000
    static let hallBeacon = Expectation(name: "hall", frame: AltBeaconFrame(BeaconIdentity(uuid: studyGuideUUID, major: 7, minor: 8)))

    static func ghosts() -> [Message] {
        var out: [Message] = []
        var next: Int64 = 0
        func perform(_ actions: [MonitorPublisher.Action], _ ms: Int64) {
            for a in actions {
                if case .publish(let p) = a {
                    out.append(Message(ms: ms, topic: p.topic, payload: String(decoding: p.payload, as: UTF8.self), retain: p.retain))
                }
                if case .scheduleRefresh(let after) = a { next = ms + after }
            }
        }
        let lobby = Expectation(name: "lobby", frame: AltBeaconFrame(BeaconIdentity(uuid: studyGuideUUID, major: 1, minor: 2)))
        var tracker = BeaconTracker(expectations: [lobby, hallBeacon], silentAfterMs: 30_000, startMs: 0)
        func status() -> MonitorStatus { MonitorStatus(adapter: "hci0", tracker: tracker, scanning: true, scanProblem: nil) }
        var p = MonitorPublisher(node: "porch", discoveryPrefix: "homeassistant", expectations: [lobby, hallBeacon], version: "0.1.0")
        perform(p.connected(status(), health: nil, now: ghostsStartMs), ghostsStartMs)
        var ms = ghostsStartMs
        while ms < ghostsEndMs {
            ms += 1000
            if ms == hallRemovedAtMs {
                tracker = tracker.reconfigured(expectations: [lobby], silentAfterMs: 30_000, now: ms)
                p = p.reconfigured(node: "porch", discoveryPrefix: "homeassistant", expectations: [lobby], control: .off)
                perform(p.connected(status(), health: nil, now: ms), ms)
            } else if ms == renamedAtMs {
                perform(p.stopping(), ms)
                p = p.reconfigured(node: "veranda", discoveryPrefix: "homeassistant", expectations: [lobby], control: .off)
                perform(p.connected(status(), health: nil, now: ms + 500), ms + 500)
            } else if ms == renamedAtMs + 100_000 {
                // A restart: what was announced, as the file keeps it.
                p = MonitorPublisher(node: "veranda", discoveryPrefix: "homeassistant", expectations: [lobby], version: "0.1.0",
                                     announced: p.announced.sorted())
                perform(p.connected(status(), health: nil, now: ms), ms)
            } else if ms >= next {
                perform(p.refresh(status(), health: nil, now: ms), ms)
            }
        }
        out.append(Message(ms: ghostsEndMs, topic: "altbeacond/veranda/status", payload: "offline", retain: true))
        return out
    }

    /// Issue 38, one device per beacon: monitors "east" and "west" expect the same frame (under
    /// the names "lobby" and "entrance"), which is also the AltBeacon of hall.pi's own beacon.
    static func twoMonitors() -> [Message] {
        var out: [Message] = []
        let lobby = Expectation(name: "lobby", frame: AltBeaconFrame(BeaconIdentity(uuid: studyGuideUUID, major: 1, minor: 2)))
        for (node, name, atMs) in [("east", "lobby", Int64(10_000)), ("west", "entrance", Int64(12_000))] {
            let e = Expectation(name: name, type: lobby.type, fields: lobby.fields)
            let tracker = BeaconTracker(expectations: [e], silentAfterMs: 30_000, startMs: 0)
            var p = MonitorPublisher(node: node, discoveryPrefix: "homeassistant", expectations: [e], version: "0.1.0")
            let status = MonitorStatus(adapter: "hci0", tracker: tracker, scanning: true, scanProblem: nil)
            for case .publish(let m) in p.connected(status, health: nil, now: atMs) {
                out.append(Message(ms: atMs, topic: m.topic, payload: String(decoding: m.payload, as: UTF8.self), retain: m.retain))
            }
            out.append(Message(ms: 100_000, topic: "altbeacond/\(node)/status", payload: "offline", retain: true))
        }
        return out
    }

    /// Node "attic": a monitor whose beacon daemon runs announces the local beacon, and is
    /// stopped (offline); the daemon is removed; a later monitor start finds no status file and
    /// removes the device. HA removes each entity a moment after its empty discovery: nothing
    /// it still has may receive an empty (or any unreadable) state (issue 38: 41 errors).
    static let removalStartMs: Int64 = 60_000
    static let removalEndMs: Int64 = 200_000

    static func removal() -> [Message] {
        var out: [Message] = []
        func perform(_ actions: [MonitorPublisher.Action], _ ms: Int64) {
            for case .publish(let p) in actions {
                out.append(Message(ms: ms, topic: p.topic, payload: String(decoding: p.payload, as: UTF8.self), retain: p.retain))
            }
        }
        let tracker = BeaconTracker(expectations: [], silentAfterMs: 30_000, startMs: 0)
        let status = MonitorStatus(adapter: "hci0", tracker: tracker, scanning: false, scanProblem: "no [expect]")
        var before = MonitorPublisher(node: "attic", discoveryPrefix: "homeassistant", expectations: [], control: .beacon, version: "0.1.0")
        before.machine = LocalMachine(nowS: 1_764_000_125)
        perform(before.connected(status, health: localHealth(atMs: 0), now: 0), 0)
        perform(before.stopping(), 30_000)
        // The next start: no beacon daemon here any more.
        var after = MonitorPublisher(node: "attic", discoveryPrefix: "homeassistant", expectations: [], control: .beacon, version: "0.1.0")
        perform(after.connected(status, health: nil, now: removalStartMs), removalStartMs)
        var ms = removalStartMs
        while ms < removalEndMs {
            ms += MonitorPublisher.refreshMs
            perform(after.refresh(status, health: nil, now: ms), ms)
        }
        out.append(Message(ms: removalEndMs, topic: "altbeacond/attic/status", payload: "offline", retain: true))
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
            let upTo = messages.filter { $0.ms <= ms && $0.topic.hasPrefix("altbeacond/hall.pi/") }
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
        // The local beacon: its change events, and nulls once its daemon was killed.
        let events = messages.filter { $0.topic == "altbeacond/hall.pi/beacon/change" }
        XCTAssertEqual(events.map(\.ms), Self.changeTimesS.map(\.ms), "each refusal one event, identical or not")
        XCTAssertTrue(events.allSatisfy { !$0.retain })
        let dead = try XCTUnwrap(messages.last { $0.topic == "altbeacond/hall.pi/beacon" && $0.ms >= Self.daemonKilledAtMs })
        XCTAssertTrue(dead.payload.hasPrefix("{\"health\":\"not-running\",\"on_air\":false,"), dead.payload)
        XCTAssertTrue(dead.payload.contains("\"phase\":null,"), dead.payload)
        XCTAssertTrue(dead.payload.contains("\"uuid\":null,"), dead.payload)
        // Node attic: its local beacon's state is cleared only after its discovery, never in the same burst.
        let attic = messages.filter { $0.topic.hasPrefix("homeassistant/") && $0.topic.contains("altbeacond_beacon__attic") }
        let removed = try XCTUnwrap(attic.last { $0.payload.isEmpty }?.ms)
        let cleared = try XCTUnwrap(messages.first { $0.topic == "altbeacond/attic/beacon" && $0.payload.isEmpty }?.ms)
        XCTAssertGreaterThan(cleared, removed)
        // Node porch: hall removed, then the node renamed; at the end nothing of either retained.
        var retained: [String: String] = [:]
        for m in messages where m.retain { retained[m.topic] = m.payload.isEmpty ? nil : m.payload }
        let ghosts = retained.keys.filter { $0.contains("porch") || $0.contains("__7__8") || $0.hasSuffix("/beacons/hall") }
        XCTAssertEqual(ghosts.sorted(), [], "what is no longer configured is cleared from the broker")
        XCTAssertNotNil(retained["altbeacond/veranda/beacons/lobby"])
        // East and west: one device, entities of their own.
        let devices = Set(messages.filter { $0.topic.hasPrefix("homeassistant/") && ($0.topic.contains("__east__") || $0.topic.contains("__west__")) }
            .compactMap { JSONValue.parse(Array($0.payload.utf8))?["device"]?["identifiers"] }.map { "\($0)" })
        XCTAssertEqual(devices.count, 1, "\(devices)")
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
