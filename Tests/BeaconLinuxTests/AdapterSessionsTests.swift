import BeaconKit
import Glibc
import XCTest
@testable import BeaconLinux

/// A status output that records what it was shown.
final class RecordingOutput: StatusOutput {
    var shown: [DaemonStatus] = []
    func show(_ status: DaemonStatus) { shown.append(status) }
}

/// The daemon's wiring (AdapterSessions) on scripted controllers: routing by index, adapter
/// moves, the last good copy stored only once confirmed, one status per change, stop.
final class AdapterSessionsTests: ScriptedTestCase {
    var controllers: [UInt16: ScriptedHCIController] = [:]
    var dir = ""

    override func setUp() {
        super.setUp()
        var template = Array("/tmp/altbeacond-sessions-XXXXXX".utf8CString)
        dir = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)) }
    }

    override func tearDown() {
        for name in ["last-good.toml", ".last-good.toml.tmp"] { _ = unlink(dir + "/" + name) }
        _ = rmdir(dir)
        super.tearDown()
    }

    func make(_ config: BeaconConfig) -> (AdapterSessions, RecordingOutput) {
        for i: UInt16 in 0...2 { controllers[i] = controller(index: i) }
        let sessions = AdapterSessions(config: config, loop: loop, log: log) { [controllers] i in controllers[i]! }
        let out = RecordingOutput()
        sessions.outputs = [out]
        sessions.lastGood = LastGoodStore(file: StateFile(directory: dir, name: "last-good.toml"), stored: nil, loop: loop, log: log)
        for (i, c) in controllers {
            c.monitor = { [weak sessions] op, params in sessions?.monitored(op, params, index: i) }
            c.onDeviceEvent = { [weak sessions] kind in sessions?.deviceEvent(kind, index: i) }
        }
        keep.append(sessions)
        return (sessions, out)
    }

    /// The last good copy, once its helper thread wrote it (real time: a real file).
    func stored() -> [UInt8]? {
        for _ in 0..<200 {
            loop.runOnce(maxWaitMs: 0)
            if let b = try? StateFile(directory: dir, name: "last-good.toml").read() { return b }
            usleep(5000)
        }
        return nil
    }

    func testAnAdapterMoveLeavesTheOldAdapterSilentAndTheNewOneOnAir() {
        let three = TestBeacons.three()
        let (s, _) = make(TestBeacons.config(three))
        s.start(bytes: Array("first".utf8))
        XCTAssertNotNil(msUntil(controllers[0]!, airs: TestBeacons.payloads(three), atMostMs: 5000))
        s.apply(TestBeacons.config(three, adapter: 2), bytes: Array("moved".utf8))
        XCTAssertEqual(s.session.index, 2)
        XCTAssertNotNil(msUntil(controllers[2]!, airs: TestBeacons.payloads(three), atMostMs: 5000))
        loop.run(forMs: 2000)
        XCTAssertEqual(controllers[0]!.onAir, [], "every set of the old adapter is off air")
        XCTAssertTrue(controllers[0]!.sets.isEmpty, "and removed")
        XCTAssertTrue(s.retiring.isEmpty, "the old session is let go once off air")
    }

    func testAMoveAwayFromAHungAdapterIsNotDelayedByIt() {
        let (s, _) = make(TestBeacons.config())
        s.start(bytes: nil)
        XCTAssertNotNil(msUntil(controllers[0]!, airs: [TestBeacons.payload()], atMostMs: 5000))
        controllers[0]!.hang()
        loop.run(forMs: 300)
        s.apply(TestBeacons.config(adapter: 1), bytes: Array("hci1".utf8))
        let ms = msUntil(controllers[1]!, airs: [TestBeacons.payload()], atMostMs: 5000)
        XCTAssertNotNil(ms)
        XCTAssertLessThan(ms ?? .max, 1000, "the new adapter arms at once")
        // The old one's goodbye ends at its deadline; then the session is let go.
        loop.run(forMs: AdapterSessions.retireDeadlineMs + 2000)
        XCTAssertTrue(s.retiring.isEmpty)
    }

    func testEventsOfOtherAdaptersAreNotOurs() {
        let (s, _) = make(TestBeacons.config())
        s.start(bytes: nil)
        XCTAssertNotNil(msUntil(controllers[0]!, airs: [TestBeacons.payload()], atMostMs: 5000))
        s.deviceEvent(.down, index: 1)
        s.monitored(.leSetAdvertiseEnable, [0], index: 1)
        loop.run(forMs: 500)
        XCTAssertEqual(s.session.policy.totalRearms, 0)
        s.monitored(.leSetAdvertiseEnable, [0], index: 0)
        loop.run(forMs: 500)
        XCTAssertEqual(s.session.policy.rearms[.disabled], 1)
    }

    /// Issue: the last good copy used to be stored before the controller confirmed the arm.
    func testTheLastGoodCopyIsStoredOnlyOnceTheControllerConfirmedIt() {
        let (s, _) = make(TestBeacons.config())
        controllers[0]!.hang()
        s.start(bytes: Array("silent".utf8))
        loop.run(forMs: 3000)
        XCTAssertNil(try? StateFile(directory: dir, name: "last-good.toml").read(), "not on air: not stored")
        controllers[0]!.silent = false
        XCTAssertNotNil(msUntil(controllers[0]!, airs: [TestBeacons.payload()], atMostMs: 10_000))
        XCTAssertEqual(stored(), Array("silent".utf8))
    }

    func testOneStatusPerChangeAndTheRefusedEditShows() {
        let (s, out) = make(TestBeacons.config())
        s.start(bytes: nil)
        XCTAssertNotNil(msUntil(controllers[0]!, airs: [TestBeacons.payload()], atMostMs: 5000))
        loop.run(forMs: 3000)   // probes every second: nothing changes
        XCTAssertEqual(out.shown.map(\.phase).last, .advertising)
        for (a, b) in zip(out.shown, out.shown.dropFirst()) { XCTAssertNotEqual(a, b, "an output is shown a status only when it changed") }
        let before = out.shown.count
        s.refusedEdit = "config.toml:3:9: major must be between 0 and 65535"
        XCTAssertEqual(out.shown.count, before + 1)
        XCTAssertEqual(out.shown.last?.health, .advertisingWithRefusedEdit)
        XCTAssertTrue(out.shown.last?.text.contains("last config edit refused") ?? false)
    }

    func testStopTakesEveryAdapterOffAirThenCallsDone() {
        let (s, out) = make(TestBeacons.config(TestBeacons.three()))
        s.start(bytes: nil)
        XCTAssertNotNil(msUntil(controllers[0]!, airs: TestBeacons.payloads(TestBeacons.three()), atMostMs: 5000))
        controllers[0]!.hang()
        s.apply(TestBeacons.config(adapter: 1), bytes: [])
        XCTAssertNotNil(msUntil(controllers[1]!, airs: [TestBeacons.payload()], atMostMs: 5000))
        var done = 0
        s.stop(deadlineMs: 300) { done += 1 }
        XCTAssertEqual(out.shown.last?.phase, .stopping)
        loop.run(forMs: 1000)
        XCTAssertEqual(done, 1)
        XCTAssertEqual(controllers[1]!.onAir, [])
        s.apply(TestBeacons.config(major: 9), bytes: [])
        loop.run(forMs: 500)
        XCTAssertEqual(controllers[1]!.onAir, [], "nothing goes on air after stop")
    }

    /// Back to an adapter whose goodbye is still running: the goodbye must not take the new sets down.
    func testMovingBackToAnAdapterStillBeingLeftKeepsTheBeaconOnIt() {
        let three = TestBeacons.three()
        let (s, _) = make(TestBeacons.config(three))
        s.start(bytes: nil)
        XCTAssertNotNil(msUntil(controllers[0]!, airs: TestBeacons.payloads(three), atMostMs: 5000))
        controllers[0]!.answerDelayMs = 150   // a slow old adapter: its goodbye is still running
        s.apply(TestBeacons.config(three, adapter: 1), bytes: [])
        loop.run(forMs: 50)
        let back = loop.now
        s.apply(TestBeacons.config(three), bytes: [])
        XCTAssertNotNil(msUntil(controllers[0]!, airs: TestBeacons.payloads(three), atMostMs: 10_000))
        // Once the new session enabled a set, nobody removed one (the old goodbye was dropped; the
        // new session's own sequence disables each set before configuring it, but removes none).
        let w = controllers[0]!.written.filter { $0.at >= back }
        if let firstOn = w.firstIndex(where: { $0.opcode == .leSetExtendedAdvertisingEnable && $0.parameters.first == 1 }) {
            let after = w[firstOn...].filter { $0.opcode == .leRemoveAdvertisingSet }
            XCTAssertEqual(after.count, 0, "sets taken down behind the new session's back: \(after.map(\.opcode))")
        } else {
            XCTFail("no set enabled after the move back")
        }
        loop.run(forMs: 8000)
        XCTAssertEqual(controllers[0]!.onAir, TestBeacons.payloads(three), "still on air after the old goodbye's deadline")
        XCTAssertEqual(s.session.policy.totalRearms, 0, "no re-arm against our own goodbye")
        XCTAssertEqual(controllers[1]!.onAir, [], "the adapter in between is left silent")
        XCTAssertTrue(s.retiring.isEmpty)
    }
}
