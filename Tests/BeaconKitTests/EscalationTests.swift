@testable import BeaconKit
import XCTest

/// SPEC §5: a controller that keeps failing climbs a ladder (re-arm with back-off, then the
/// adapter down and up, then a restart by systemd); one missed probe is not "hung"; a
/// persistent interferer is summarised once a minute.
final class EscalationTests: SupervisorTestCase {

    /// One failed re-arm: the arm's failure, then the re-arm it schedules; returns the scope it used.
    func failOnce(_ f: ArmFailure = .timeout) -> (actions: [SupervisorAction], scope: ArmScope?) {
        let a = on(.armed(f))
        guard case .scheduleRearm(let ms)? = a.last else { XCTFail("\(a)"); return (a, nil) }
        guard case .arm(let scope)? = on(.rearmTimer, after: ms).first else { return (a, nil) }
        return (a, scope)
    }

    func testLadderPowerCyclesThenAsksForARestartEachStepOnce() {
        on(.start)
        var warnings: [String] = []
        var scopes: [ArmScope?] = []
        var restart: [Bool] = []
        for _ in 0..<14 {
            let (a, scope) = failOnce()
            scopes.append(scope)
            for case .warning(let w) in a { warnings.append(w) }
            for case .requestRestart(let on) in a { restart.append(on) }
        }
        XCTAssertEqual(scopes.filter { $0 == .powerCycle }.count, 1, "the adapter is taken down and up once")
        XCTAssertEqual(scopes.firstIndex(of: .powerCycle), Supervisor.powerCycleAfter - 1)
        XCTAssertEqual(restart, [true], "systemd is asked once")
        XCTAssertEqual(s.escalation, .restartRequested)
        XCTAssertEqual(warnings.count, 3, "the fault, the power cycle and the restart: each logged once: \(warnings)")
        XCTAssertTrue(warnings[1].contains("taking the adapter down and up"))
        XCTAssertTrue(warnings[2].contains("asking systemd to restart"))
        // It answers again before systemd acted: back on air, the watchdog pinged again.
        let back = on(.armed(nil))
        XCTAssertTrue(back.contains(.requestRestart(false)))
        XCTAssertEqual(s.escalation, .retrying)
        XCTAssertEqual(s.phase, .advertising)
    }

    func testMissingOrBlockedAdapterIsWaitedForNotEscalated() {
        on(.start)
        for _ in 0..<20 { XCTAssertNotEqual(failOnce(.missing).scope, .powerCycle) }
        XCTAssertEqual(s.escalation, .retrying)
        for _ in 0..<20 { XCTAssertNotEqual(failOnce(.blocked).scope, .powerCycle) }
        XCTAssertEqual(s.escalation, .retrying)
        XCTAssertEqual(s.ladderFailures, 0)
    }

    func testRefusalsClimbTheLadderToo() {
        on(.start)
        let scopes = (0..<Supervisor.powerCycleAfter).map { _ in failOnce(.rejected("LE Set Advertising Data failed")).scope }
        XCTAssertEqual(scopes.last, .powerCycle)
    }

    func testASingleMissedProbeIsAskedAgainTwoAreHung() {
        armed()
        XCTAssertEqual(on(.probeTimer, after: 5000), [.probe])
        XCTAssertEqual(on(.probed(.timeout), after: 2500), [.probe])
        XCTAssertEqual(s.phase, .advertising)
        // It answered the second time: the count starts over.
        XCTAssertEqual(on(.probed(nil), after: 10), [.scheduleProbe(afterMs: 5000)])
        XCTAssertEqual(on(.probed(.timeout), after: 5000), [.probe])
        let hung = on(.probed(.timeout), after: 2500)
        XCTAssertEqual(s.phase, .fault(.hung))
        XCTAssertTrue(hung.contains(.warning("controller not answering; beacon off air, retrying")))
    }

    func testPersistentInterfererIsSummarisedOncePerMinute() {
        armed()
        var notices: [String] = []
        // Someone overwrites the data every 300 ms for three minutes.
        for _ in 0..<600 {
            for case .notice(let n) in on(.interference(.advertisingOverwritten), after: 300) { notices.append(n) }
            for case .notice(let n) in on(.rearmTimer, after: 0) { notices.append(n) }
            for case .notice(let n) in on(.armed(nil), after: 5) { notices.append(n) }
        }
        let summaries = notices.filter { $0.contains("keeps changing advertising") }
        XCTAssertLessThanOrEqual(notices.count, 20, "\(notices.count) lines for 600 re-arms")
        XCTAssertGreaterThanOrEqual(summaries.count, 2)
        XCTAssertLessThanOrEqual(summaries.count, 4)
        XCTAssertEqual(s.rearms[.overwritten], 600, "every re-arm is still counted")
    }
}
