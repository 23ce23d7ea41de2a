@testable import BeaconKit
import XCTest

/// The escalation ladder on its own: which failures climb it, where each step is taken (once),
/// what starts it over, and when.
final class EscalationLadderTests: XCTestCase {
    /// The steps taken by `n` failures of `fault`, by the failure (1-based) that took each.
    func climb(_ ladder: inout EscalationLadder, _ fault: AdapterFault, times n: Int) -> [Int: Escalation] {
        var steps: [Int: Escalation] = [:]
        for i in 1...n { if let s = ladder.failed(fault)?.step { steps[i] = s } }
        return steps
    }

    func testAControllerThatKeepsFailingIsPowerCycledThenRestartedEachOnce() {
        var l = EscalationLadder()
        let steps = climb(&l, .hung, times: 14)
        XCTAssertEqual(steps, [EscalationLadder.powerCycleAfter: .powerCycled,
                               EscalationLadder.powerCycleAfter + EscalationLadder.restartAfter: .restartRequested])
        XCTAssertEqual(l.step, .restartRequested)
        XCTAssertEqual(l.failures, 14)
        XCTAssertEqual(l.stepsTaken, [.powerCycled: 1, .restartRequested: 1])
    }

    func testEachStepSaysTheFaultAndTheCount() {
        var l = EscalationLadder()
        for _ in 1..<EscalationLadder.powerCycleAfter { XCTAssertNil(l.failed(.failing)) }
        XCTAssertEqual(l.failed(.failing)?.warning, "controller failing after 5 re-arms; taking the adapter down and up")
        for _ in 1..<EscalationLadder.restartAfter { XCTAssertNil(l.failed(.hung)) }
        XCTAssertEqual(l.failed(.hung)?.warning,
                       "controller not answering after 10 re-arms, also after taking the adapter down and up; restarting the service")
    }

    func testAMissingOrBlockedAdapterStartsTheLadderOverButKeepsTheStepsTaken() {
        for reset in [AdapterFault.missing, .blocked] {
            var l = EscalationLadder()
            _ = climb(&l, .hung, times: 7)
            XCTAssertEqual(l.step, .powerCycled)
            XCTAssertNil(l.failed(reset))
            XCTAssertEqual(l.failures, 0)
            XCTAssertEqual(l.step, .retrying)
            // Climbed again from the bottom: a second power cycle, counted.
            XCTAssertEqual(climb(&l, .failing, times: 5), [5: .powerCycled])
            XCTAssertEqual(l.stepsTaken, [.powerCycled: 2])
        }
    }

    func testDownBusyOrHeldByACentralLeaveTheLadderWhereItIs() {
        var l = EscalationLadder()
        _ = climb(&l, .hung, times: 3)
        for fault in [AdapterFault.down, .busy, .connected] {
            XCTAssertEqual(climb(&l, fault, times: 20), [:])
        }
        XCTAssertEqual(l.failures, 3)
        XCTAssertEqual(l.step, .retrying)
    }

    func testItStartsOverOnlyOnceOnAirForStableMs() {
        var l = EscalationLadder()
        _ = climb(&l, .hung, times: 6)
        XCTAssertNil(l.answered(at: 100_000), "never on air: nothing to go by")
        l.onAir(at: 1000)
        XCTAssertNil(l.answered(at: 1000 + EscalationLadder.stableMs - 1))
        XCTAssertEqual(l.failures, 6)
        XCTAssertEqual(l.answered(at: 1000 + EscalationLadder.stableMs),
                       "the controller works again (on air for 30 s after 6 failed re-arms)")
        XCTAssertEqual(l.failures, 0)
        XCTAssertEqual(l.step, .retrying)
        XCTAssertEqual(l.stepsTaken, [.powerCycled: 1], "the steps taken stay counted")
        XCTAssertNil(l.answered(at: 1000 + 2 * EscalationLadder.stableMs), "nothing left to start over")
    }

    func testAFailureOrGoingOffAirStopsTheStableClock() {
        var l = EscalationLadder()
        _ = climb(&l, .hung, times: 2)
        l.onAir(at: 0)
        _ = l.failed(.down)
        XCTAssertNil(l.answered(at: EscalationLadder.stableMs), "a failure took it off air, even one off the ladder")
        l.onAir(at: 0)
        l.offAir()
        XCTAssertNil(l.answered(at: EscalationLadder.stableMs))
        XCTAssertEqual(l.failures, 2)
        l.onAir(at: 10)
        XCTAssertNotNil(l.answered(at: 10 + EscalationLadder.stableMs))
    }

    func testAfterARestartWorkingAgainStartsFromTheBottom() {
        var l = EscalationLadder()
        _ = climb(&l, .failing, times: 10)
        XCTAssertEqual(l.step, .restartRequested)
        l.onAir(at: 0)
        XCTAssertNotNil(l.answered(at: EscalationLadder.stableMs))
        XCTAssertEqual(climb(&l, .failing, times: 5), [5: .powerCycled])
        XCTAssertEqual(l.stepsTaken, [.powerCycled: 2, .restartRequested: 1])
    }
}
