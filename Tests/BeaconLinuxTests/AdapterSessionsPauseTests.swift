import BeaconKit
import Glibc
import XCTest
@testable import BeaconLinux

/// `beacon.advertising = false` (issue 32, a change from afar or an edit): nothing armed, every
/// set taken off air, the status and the LEDs say it; true again arms as at start.
final class AdapterSessionsPauseTests: ScriptedTestCase {
    var controllers: [UInt16: ScriptedHCIController] = [:]

    func make(_ config: BeaconConfig) -> (AdapterSessions, RecordingOutput) {
        for i: UInt16 in 0...1 { controllers[i] = controller(index: i) }
        let sessions = AdapterSessions(config: config, loop: loop, log: log) { [controllers] i in controllers[i]! }
        let out = RecordingOutput()
        sessions.outputs = [out]
        for (i, c) in controllers {
            c.monitor = { [weak sessions] op, params in sessions?.monitored(op, params, index: i) }
            c.onDeviceEvent = { [weak sessions] kind in sessions?.deviceEvent(kind, index: i) }
        }
        keep.append(sessions)
        return (sessions, out)
    }

    func off(_ c: BeaconConfig) -> BeaconConfig {
        var c = c
        c.advertising = false
        return c
    }

    func testOffAtStartArmsNothing() {
        let (s, out) = make(off(TestBeacons.config()))
        s.start(bytes: nil)
        loop.run(forMs: 3000)
        XCTAssertTrue(controllers[0]!.log.isEmpty, "no command at all: \(controllers[0]!.log)")
        XCTAssertEqual(out.shown.last?.health, .advertisingOff)
        XCTAssertEqual(out.shown.last.map(HealthVerdict.init), .offAir)
        // The adapter's events do not wake the unstarted session.
        s.deviceEvent(.up, index: 0)
        loop.run(forMs: 1000)
        XCTAssertTrue(controllers[0]!.log.isEmpty)
        var done = 0
        s.stop(deadlineMs: 200) { done += 1 }
        loop.run(forMs: 500)
        XCTAssertEqual(done, 1, "a stop while off air ends at once")
    }

    func testOffTakesTheSetsDownAndOnArmsAgain() {
        let three = TestBeacons.three()
        let on = TestBeacons.config(three)
        let (s, out) = make(on)
        s.start(bytes: nil)
        XCTAssertNotNil(msUntil(controllers[0]!, airs: TestBeacons.payloads(three), atMostMs: 5000))
        s.apply(off(on), bytes: [])
        XCTAssertTrue(s.paused)
        loop.run(forMs: 2000)
        XCTAssertEqual(controllers[0]!.onAir, [], "every set off air")
        XCTAssertTrue(controllers[0]!.sets.isEmpty, "and removed")
        XCTAssertTrue(s.retiring.isEmpty)
        XCTAssertEqual(out.shown.last?.stateWord, "off")
        XCTAssertEqual(out.shown.last?.health, .advertisingOff)
        // A change while off (another major) is kept for when advertising comes back.
        let five = TestBeacons.three(major: 5)
        s.apply(off(TestBeacons.config(five, major: 5)), bytes: [])
        loop.run(forMs: 1000)
        XCTAssertEqual(controllers[0]!.onAir, [])
        s.apply(TestBeacons.config(five, major: 5), bytes: [])
        XCTAssertFalse(s.paused)
        XCTAssertNotNil(msUntil(controllers[0]!, airs: TestBeacons.payloads(five), atMostMs: 5000), dumpLog())
        loop.run(forMs: 500)   // the controller's confirmation
        XCTAssertEqual(out.shown.last?.health, .advertising)
    }

    func testOffAndOnAgainBeforeTheSetsAreDown() {
        let (s, _) = make(TestBeacons.config())
        s.start(bytes: nil)
        XCTAssertNotNil(msUntil(controllers[0]!, airs: [TestBeacons.payload()], atMostMs: 5000))
        controllers[0]!.hang()
        s.apply(off(TestBeacons.config()), bytes: [])
        loop.run(forMs: 100)
        controllers[0]!.silent = false
        s.apply(TestBeacons.config(), bytes: [])
        XCTAssertNotNil(msUntil(controllers[0]!, airs: [TestBeacons.payload()], atMostMs: 15_000), dumpLog())
        loop.run(forMs: AdapterSessions.retireDeadlineMs + 2000)
        XCTAssertEqual(controllers[0]!.onAir, [TestBeacons.payload()], "the old session's goodbye did not take the new sets down")
    }

    func testIdentifyAndChangeReachTheOutputs() {
        let (s, out) = make(TestBeacons.config())
        s.start(bytes: nil)
        XCTAssertNotNil(msUntil(controllers[0]!, airs: [TestBeacons.payload()], atMostMs: 5000))
        loop.run(forMs: 500)
        s.identifying = true
        XCTAssertEqual(out.shown.last?.health, .identifying)
        s.reported(RemoteChangeReport(request: "set power 5", origin: "", applied: false, message: "m", time: 1))
        XCTAssertEqual(out.shown.last?.changes.last?.request, "set power 5")
        s.identifying = false
        XCTAssertEqual(out.shown.last?.health, .advertising)
        XCTAssertEqual(out.shown.last?.identity, TestBeacons.config().beacon)
    }
}
