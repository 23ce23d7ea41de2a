@testable import BeaconKit
import XCTest

/// The arms on their own: what the next one redoes, the arm in flight and its abandonment, the
/// re-arm timer set once, the cause counted, and the back-off after failures.
final class RearmPlanTests: XCTestCase {
    let config = PolicyTestCase.make()

    func testTheFirstArmRedoesEverythingWithItsDeadlineAndTheNextOnlyWhatIsPending() {
        var p = RearmPlan()
        XCTAssertEqual(p.start(config, generation: 1), [.arm(.full, config, generation: 1), .schedule(.armDeadline, afterMs: RearmPlan.deadlineMs)])
        XCTAssertEqual(p.inFlight, 1)
        XCTAssertTrue(p.finished(generation: 1))
        XCTAssertNil(p.inFlight)
        p.redo(.data)
        XCTAssertEqual(arm(in: p.start(config, generation: 2)), .data)
        XCTAssertNil(p.scope, "the arm took what was pending")
    }

    func testScopesOnlyGrowUntilAnArmTakesThem() {
        var p = RearmPlan()
        p.redo(.data)
        p.redo(.powerCycle)
        p.redo(.parameters)
        XCTAssertEqual(p.scope, .powerCycle)
        XCTAssertEqual(arm(in: p.start(config, generation: 1)), .powerCycle)
        p.redo(.data)
        XCTAssertEqual(arm(in: p.start(config, generation: 1)), .data, "a power cycle once, not at every arm after it")
    }

    func testAnAbandonedArmIsRedoneByTheNextAndItsOutcomeNoLongerCounts() {
        var p = RearmPlan()
        p.redo(.parameters)
        _ = p.start(config, generation: 3)
        p.redo(.data)
        XCTAssertEqual(p.abandon(), [.abandonArm, .cancel(.armDeadline)])
        XCTAssertEqual(p.scope, .parameters, "the abandoned arm's scope, above what was pending")
        XCTAssertFalse(p.finished(generation: 3))
        XCTAssertEqual(p.abandon(), [], "nothing left in flight")
        _ = p.start(config, generation: 4)
        XCTAssertFalse(p.finished(generation: 3), "another generation's outcome is not the arm in flight's")
        XCTAssertEqual(p.inFlight, 4)
    }

    func testARequestSetsTheTimerOnceUnlessForcedAndKeepsTheFirstCause() {
        var p = RearmPlan()
        XCTAssertTrue(p.request(cause: .reset, scope: .parameters, force: false))
        XCTAssertFalse(p.request(cause: .down, scope: .full, force: false), "the timer is set already")
        XCTAssertEqual(p.cause, .reset)
        XCTAssertEqual(p.scope, .full, "the scope grows even so")
        XCTAssertTrue(p.request(cause: .removed, scope: .full, force: true))
        XCTAssertEqual(p.cause, .removed, "a forced request names its cause")
        XCTAssertTrue(p.request(cause: nil, scope: .full, force: true))
        XCTAssertEqual(p.cause, .removed, "no cause: the pending one stays")
        p.timerFired()
        XCTAssertTrue(p.request(cause: nil, scope: .data, force: false))
    }

    func testFailuresBackOffDoublingToTheirCap() {
        XCTAssertEqual(RearmPlan.backoff(failures: 0), RearmPlan.settleMs)
        XCTAssertEqual(RearmPlan.backoff(failures: 1), 50)
        XCTAssertEqual(RearmPlan.backoff(failures: 1000), RearmPlan.backoffCapMs)
        var p = RearmPlan()
        let refused = (0..<8).map { _ in p.failed(.rejected("refused")) }
        XCTAssertEqual(refused, [50, 100, 200, 400, 800, 1000, 1000, 1000])
        XCTAssertEqual(p.failed(.timeout), RearmPlan.settleMs, "a time-out waited its command's deadline already")
        XCTAssertEqual(p.failures, 9)
        XCTAssertEqual(p.failed(.busy), RearmPlan.busyBackoffCapMs, "held by another program: the longer cap")
        XCTAssertEqual(p.failed(.missing), RearmPlan.backoffCapMs)
    }

    func testAFailureRedoesEverythingAndNamesItsCauseButARefusalKeepsTheOneBeforeIt() {
        var p = RearmPlan()
        p.redo(.data)
        _ = p.failed(.rejected("refused"))
        XCTAssertEqual(p.scope, .full)
        XCTAssertEqual(p.cause, .failing, "nothing pending: the refusal's own cause")
        _ = p.request(cause: .overwritten, scope: .parameters, force: true)
        _ = p.failed(.rejected("refused"))
        XCTAssertEqual(p.cause, .overwritten, "the interference led to the refusal")
        _ = p.failed(.timeout)
        XCTAssertEqual(p.cause, .hung)
    }

    func testOnAirSpendsTheCauseAndQuietnessAndStartsTheCountOver() {
        var p = RearmPlan()
        _ = p.failed(.timeout)
        _ = p.failed(.timeout)
        p.quiet = true
        let first = p.onAir()
        XCTAssertEqual(first.cause, .hung)
        XCTAssertTrue(first.quiet)
        XCTAssertTrue(first.cancelTimer, "a failure's retry timer is still set")
        XCTAssertEqual(p.failures, 0)
        let second = p.onAir()
        XCTAssertNil(second.cause)
        XCTAssertFalse(second.quiet)
        XCTAssertFalse(second.cancelTimer)
        XCTAssertEqual(p.failed(.rejected("refused")), 50, "the back-off starts over")
    }
}
