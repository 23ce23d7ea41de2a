@testable import BeaconKit
import XCTest

/// SPEC §5: a controller that keeps failing climbs a ladder (re-arm with back-off, then the
/// adapter down and up, then a restart now); one missed probe is not "hung"; arms that succeed
/// but whose probes keep failing climb it too; EBUSY is waited for, never escalated; a persistent
/// interferer is summarised once a minute.
final class EscalationTests: PolicyTestCase {

    /// One failed arm and the retry it schedules; returns that retry's scope.
    @discardableResult
    func failOnce(_ f: ArmFailure = .timeout) -> (actions: [PolicyAction], scope: ArmScope?) {
        let a = armed(f)
        guard let ms = scheduled(.rearm, in: a) else { XCTFail("\(a)"); return (a, nil) }
        return (a, arm(in: rearmTimer(after: ms)))
    }

    func testLadderPowerCyclesThenRestartsNowEachStepOnce() {
        on(.start)
        var all: [PolicyAction] = []
        var scopes: [ArmScope?] = []
        for _ in 0..<14 {
            let (a, scope) = failOnce()
            scopes.append(scope)
            all += a
        }
        XCTAssertEqual(scopes.filter { $0 == .powerCycle }.count, 1, "the adapter is taken down and up once")
        XCTAssertEqual(scopes.firstIndex(of: .powerCycle), EscalationLadder.powerCycleAfter - 1)
        XCTAssertEqual(all.filter { $0 == .requestRestart }.count, 1, "a restart is asked for once")
        XCTAssertEqual(s.escalation, .restartRequested)
        let w = warnings(in: all)
        XCTAssertEqual(w.count, 3, "the fault, the power cycle and the restart: each logged once: \(w)")
        XCTAssertTrue(w[1].contains("taking the adapter down and up"))
        XCTAssertTrue(w[2].contains("restarting the service"))
    }

    func testMissingOrBlockedAdapterIsWaitedForNotEscalated() {
        on(.start)
        for _ in 0..<20 { XCTAssertNotEqual(failOnce(.missing).scope, .powerCycle) }
        for _ in 0..<20 { XCTAssertNotEqual(failOnce(.blocked).scope, .powerCycle) }
        XCTAssertEqual(s.escalation, .retrying)
        XCTAssertEqual(s.ladderFailures, 0)
    }

    /// EBUSY: another program holds the user channel. Said plainly, asked again with back-off up
    /// to 5 s, never a power cycle or a restart (restarting cannot take the adapter back).
    func testBusyAdapterBacksOffAndNeverEscalates() {
        on(.start)
        var delays: [Int64] = []
        var all: [PolicyAction] = []
        for _ in 0..<30 {
            let a = armed(.busy)
            all += a
            guard let ms = scheduled(.rearm, in: a) else { return XCTFail() }
            delays.append(ms)
            XCTAssertNotEqual(arm(in: rearmTimer(after: ms)), .powerCycle)
        }
        XCTAssertEqual(delays.max(), RearmPlan.busyBackoffCapMs)
        XCTAssertFalse(all.contains(.requestRestart))
        XCTAssertEqual(s.phase, .fault(.busy))
        XCTAssertEqual(warnings(in: all).count, 1, "said once: \(warnings(in: all))")
        XCTAssertTrue(warnings(in: all)[0].contains("held by another program"))
    }

    func testRefusalsClimbTheLadderToo() {
        on(.start)
        let scopes = (0..<EscalationLadder.powerCycleAfter).map { _ in failOnce(.rejected("bringing it up failed: I/O error")).scope }
        XCTAssertEqual(scopes.last, .powerCycle)
    }

    /// Issue: a controller that arms and then fails its probes forever used to reset the ladder
    /// at every arm, and never got the down/up cure.
    func testArmThenProbeFailureFlappingClimbsTheLadder() {
        onAir()
        var scopes: [ArmScope?] = []
        var all: [PolicyAction] = []
        for _ in 0..<12 {
            on(.timer(.probe), after: 5000)
            on(.probed(.timeout), after: 2500)
            let hung = on(.probed(.timeout), after: 2500)
            all += hung
            guard let ms = scheduled(.rearm, in: hung) else { return XCTFail("\(hung)") }
            let retry = rearmTimer(after: ms)
            scopes.append(arm(in: retry))
            all += armed()   // it arms fine every time
        }
        XCTAssertTrue(scopes.contains(.powerCycle), "\(scopes)")
        XCTAssertTrue(all.contains(.requestRestart))
    }

    func testTheLadderStartsOverOnlyAfterTheBeaconStayedOnAir() {
        on(.start)
        for _ in 0..<3 { failOnce() }
        armed()
        XCTAssertEqual(s.ladderFailures, 3, "one good arm is not yet a working controller")
        XCTAssertEqual(on(.probed(nil), after: 5000), [.schedule(.probe, afterMs: 5000)])
        let later = on(.probed(nil), after: EscalationLadder.stableMs)
        XCTAssertTrue(notices(in: later).contains { $0.contains("works again") })
        XCTAssertEqual(s.ladderFailures, 0)
    }

    func testASingleMissedProbeIsAskedAgainTwoAreHung() {
        onAir()
        XCTAssertEqual(on(.timer(.probe), after: 5000), [.probe])
        XCTAssertEqual(on(.probed(.timeout), after: 2500), [.probe])
        XCTAssertEqual(s.phase, .advertising)
        XCTAssertEqual(on(.probed(nil), after: 10), [.schedule(.probe, afterMs: 5000)])
        XCTAssertEqual(on(.probed(.timeout), after: 5000), [.probe])
        let hung = on(.probed(.timeout), after: 2500)
        XCTAssertEqual(s.phase, .fault(.hung))
        XCTAssertTrue(warnings(in: hung).contains("controller not answering; beacon off air, retrying"))
    }

    func testPersistentInterfererIsSummarisedOncePerMinuteAndHistoryStaysBounded() {
        onAir()
        var lines: [String] = []
        let ours = OnAirAdvertising(handles: nil, payloads: [])
        // Someone overwrites the data every 300 ms for three minutes.
        for _ in 0..<600 {
            lines += notices(in: on(.monitored(.leSetAdvertisingData, [1, 0], ours: ours), after: 300))
            lines += notices(in: rearmTimer())
            lines += notices(in: armed(after: 5))
        }
        let summaries = lines.filter { $0.contains("keeps changing advertising") }
        XCTAssertLessThanOrEqual(lines.count, 20, "\(lines.count) lines for 600 re-arms")
        XCTAssertGreaterThanOrEqual(summaries.count, 2)
        XCTAssertLessThanOrEqual(summaries.count, 4)
        XCTAssertEqual(s.rearms[.overwritten], 600, "every re-arm is still counted")
        XCTAssertLessThanOrEqual(s.history.recent.count, RearmHistory.stormThreshold, "the storm history is bounded")
    }
}
