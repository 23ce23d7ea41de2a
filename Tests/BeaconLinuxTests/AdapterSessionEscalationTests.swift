import BeaconKit
import Glibc
import XCTest
@testable import BeaconLinux

/// The escalation ladder of SPEC §5 end to end: failed re-arms, the power cycle, the restart request;
/// and the arm deadline that keeps a lost completion from parking the session.
final class AdapterSessionEscalationTests: ScriptedTestCase {
    /// Runs `p` until it asks for a restart (or `ms`); the time it did, relative to now.
    func runUntilRestart(_ p: SessionProbe, atMostMs ms: Int64 = 300_000) -> Int64? {
        var at: Int64?
        let start = loop.now
        p.onRestartRequested = { [weak self] in
            guard let self else { return }
            if at == nil { at = loop.now }
        }
        loop.run(atMostMs: ms) { at != nil }
        return at.map { $0 - start }
    }

    /// The virtual times of each full arm (each reads the controller's version first).
    func armTimes(_ c: ScriptedHCIController) -> [Int64] { c.written.filter { $0.opcode == .readLocalVersion }.map(\.at) }

    func testFiveFailedRearmsPowerCycleThenFiveMoreRequestRestartExactlyOnce() {
        let c = controller(legacy: true)
        c.answerAlways(.leSetAdvertiseEnable, .status(.hardwareFailure))
        let p = session(c, TestBeacons.config())
        p.session.start()
        let restartAt = runUntilRestart(p)
        XCTAssertNotNil(restartAt, dumpLog())
        let downs = c.powerCalls.filter { !$0.up }
        XCTAssertEqual(downs.count, 1, "one power cycle")
        guard let down = downs.first?.at, let restart = restartAt else { return }
        let arms = armTimes(c)
        XCTAssertEqual(arms.filter { $0 < down }.count, 5, "5 failed arms, then down and up")
        XCTAssertEqual(c.powerCalls.first { $0.up && $0.at >= down }.map { _ in true }, true, "brought up after the down")
        XCTAssertEqual(arms.filter { $0 >= down && $0 <= restart }.count, 5, "5 more failed arms, then the restart request")
        XCTAssertEqual(p.session.policy.escalation, .restartRequested)
        // Retrying goes on, slowly, without another power cycle or restart request.
        loop.run(forMs: 120_000)
        XCTAssertEqual(p.restartRequests, 1)
        XCTAssertEqual(c.powerCalls.filter { !$0.up }.count, 1)
        let later = armTimes(c).suffix(10)
        let gaps = zip(later.dropFirst(), later).map { $0 - $1 }
        XCTAssertTrue(gaps.allSatisfy { $0 >= 1000 && $0 <= 1100 }, "capped back-off: \(gaps)")
        XCTAssertEqual(logLines.count("re-arms; taking the adapter down and up"), 1, "logged once")
        XCTAssertEqual(logLines.count("restarting the service"), 1, "logged once")
    }

    func testHungControllerEscalatesLikeAFailingOne() {
        let c = controller(legacy: true)
        c.silent = true
        let p = session(c, TestBeacons.config())
        p.session.start()
        XCTAssertNotNil(runUntilRestart(p, atMostMs: 600_000), dumpLog())
        XCTAssertEqual(c.powerCalls.filter { !$0.up }.count, 1)
        XCTAssertEqual(p.phase, .fault(.hung))
    }

    func testControllerWorkingAgainAfterThePowerCycleIsOnAirAndNoRestartRequested() {
        let c = controller(legacy: true)
        c.answerAlways(.leSetAdvertiseEnable, .status(.hardwareFailure))
        c.powerDownDefault = .result(nil, afterMs: 200)
        let p = session(c, TestBeacons.config())
        var cured = false
        c.onDeviceEvent = { [weak c, weak p] kind in
            guard let c, let p else { return }
            // Taking it down cures it (the kernel re-ran the firmware setup).
            if kind == .down { cured = true; c.answerAlways(.leSetAdvertiseEnable, nil) }
            p.session.deviceEvent(kind)
        }
        p.session.start()
        XCTAssertTrue(loop.run(atMostMs: 60_000) { cured && c.onAir == [TestBeacons.payload()] }, dumpLog())
        loop.run(forMs: 120_000)
        XCTAssertEqual(p.restartRequests, 0)
        XCTAssertEqual(p.phase, .advertising)
        XCTAssertEqual(p.session.policy.escalation, .retrying, "the ladder starts over once on air for 30 s")
    }

    func testEBUSYNeverEscalatesAndBacksOffToAtMost5s() {
        let c = controller(legacy: true)
        c.externalDown()
        c.powerUpDefault = .result(.busy, afterMs: 0)
        let p = session(c, TestBeacons.config())
        p.session.start()
        loop.run(forMs: 180_000)
        XCTAssertEqual(p.phase, .fault(.busy))
        XCTAssertEqual(p.restartRequests, 0)
        XCTAssertEqual(c.powerCalls.filter { !$0.up }.count, 0, "no power cycle")
        let ups = c.powerCalls.map(\.at)
        let gaps = zip(ups.dropFirst(), ups).map { $0 - $1 }
        XCTAssertLessThanOrEqual(gaps.max() ?? 0, 5000 + PolicyTestTimes.slack)
        XCTAssertGreaterThanOrEqual(gaps.suffix(10).min() ?? 0, 5000, "it backs off: \(gaps.suffix(10))")
        XCTAssertLessThan(ups.count, 50, "asks again slowly")
        XCTAssertEqual(logLines.count("held by another program"), 1, "said once")
        // The other program lets go: on air at the next attempt.
        c.powerUpDefault = .result(nil, afterMs: 0)
        let ms = msUntil(c, airs: [TestBeacons.payload()], atMostMs: 10_000)
        XCTAssertLessThanOrEqual(ms ?? .max, 5000 + PolicyTestTimes.slack)
    }

    func testEIOAtBringUpCountsAsFailingAndEscalates() {
        let c = controller(legacy: true)
        c.externalDown()
        c.powerUpDefault = .result(Errno(EIO), afterMs: 0)
        let p = session(c, TestBeacons.config())
        p.session.start()
        XCTAssertNotNil(runUntilRestart(p), dumpLog())
        XCTAssertEqual(p.phase, .fault(.failing))
        XCTAssertEqual(c.powerCalls.filter { !$0.up }.count, 1, "one power cycle")
        XCTAssertEqual(p.restartRequests, 1)
    }

    func testHungBringUpIsGivenUpAtTheArmDeadlineAndRetried() {
        let c = controller(legacy: true)
        c.powerUpScript = [.never]
        let p = session(c, TestBeacons.config())
        p.session.start()
        loop.run(forMs: RearmPlan.deadlineMs - 10)
        XCTAssertEqual(c.powerCalls.count, 1)
        XCTAssertEqual(c.onAir, [])
        loop.run(forMs: 1000)
        XCTAssertEqual(p.phase, .fault(.hung), "given up at the arm deadline")
        XCTAssertEqual(c.powerCalls.count, 1, "the retry waits for the hung HCIDEVUP instead of starting another")
        loop.run(forMs: 4000)
        // HCIDEVUP returns at last: the retry takes its outcome and goes on.
        c.finishHungPower()
        let ms = msUntil(c, airs: [TestBeacons.payload()], atMostMs: 5000)
        XCTAssertNotNil(ms, dumpLog())
        XCTAssertLessThanOrEqual(ms ?? .max, 1000)
        loop.run(forMs: 100)
        XCTAssertEqual(p.phase, .advertising)
        XCTAssertEqual(p.confirmed, [1])
    }

    func testLostCommandAnswerIsGivenUpAndRetried() {
        let c = controller(legacy: true)
        c.answer(.leSetAdvertisingData, .silence)
        let p = session(c, TestBeacons.config())
        p.session.start()
        XCTAssertLessThanOrEqual(msUntil(c, airs: [TestBeacons.payload()], atMostMs: 10_000) ?? .max, 4000, dumpLog())
        loop.run(forMs: 100)
        XCTAssertEqual(p.phase, .advertising)
    }
}

enum PolicyTestTimes {
    /// Settle time and a few loop turns.
    static let slack: Int64 = 100
}
