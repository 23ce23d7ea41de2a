@testable import BeaconKit
import XCTest

/// What keeps the beacon checked on air, on its own: the timers what is on air needs, their
/// tasks, and the one missed answer asked again.
final class OnAirUpkeepTests: XCTestCase {
    let config = PolicyTestCase.make("[bluetooth]\nrotation_ms = 700\n[watchdog]\ncheck_interval_s = 9")
    let everything = AirSummary(rotates: true, refreshesPayloads: true)

    func testOnAirTheTimersWhatIsOnAirNeedsAreSetAndTheOthersCancelled() {
        var u = OnAirUpkeep()
        XCTAssertEqual(u.started(AirSummary(), config: config),
                       [.schedule(.probe, afterMs: 9000), .cancel(.rotate), .cancel(.payloadRefresh)])
        XCTAssertEqual(u.started(everything, config: config),
                       [.schedule(.probe, afterMs: 9000), .schedule(.rotate, afterMs: 700),
                        .schedule(.payloadRefresh, afterMs: OnAirUpkeep.payloadRefreshMs)])
        XCTAssertEqual(u.started(AirSummary(refreshesPayloads: true), config: config),
                       [.schedule(.probe, afterMs: 9000), .cancel(.rotate), .schedule(.payloadRefresh, afterMs: OnAirUpkeep.payloadRefreshMs)],
                       "a later arm that no longer rotates stops the rotation")
    }

    func testEachTimerDoesItsTaskAndRunsAgainOnlyWhenWhatIsOnAirNeedsIt() {
        var u = OnAirUpkeep()
        XCTAssertEqual(u.task(.probe), [.probe])
        XCTAssertEqual(u.task(.rotate), [])
        XCTAssertEqual(u.task(.payloadRefresh), [])
        XCTAssertEqual(u.next(after: .probe, config: config), [.schedule(.probe, afterMs: 9000)])
        XCTAssertEqual(u.next(after: .rotate, config: config), [])
        _ = u.started(everything, config: config)
        XCTAssertEqual(u.task(.rotate), [.rotate])
        XCTAssertEqual(u.task(.payloadRefresh), [.refreshPayloads])
        XCTAssertEqual(u.next(after: .rotate, config: config), [.schedule(.rotate, afterMs: 700)])
        XCTAssertEqual(u.next(after: .payloadRefresh, config: config), [.schedule(.payloadRefresh, afterMs: OnAirUpkeep.payloadRefreshMs)])
        for other in [PolicyTimer.rearm, .armDeadline, .connectionLimit] {
            XCTAssertEqual(u.task(other), [])
            XCTAssertEqual(u.next(after: other, config: config), [], "\(other) is not an upkeep timer")
        }
    }

    func testOneMissedAnswerIsAskedAgainTheNextIsNot() {
        var u = OnAirUpkeep()
        XCTAssertTrue(u.missed())
        XCTAssertFalse(u.missed())
        XCTAssertFalse(u.missed())
        u.answered()
        XCTAssertTrue(u.missed(), "an answer starts the count over")
        _ = u.started(AirSummary(), config: config)
        XCTAssertTrue(u.missed(), "so does a new arm")
        XCTAssertEqual(u.stopped(), [.cancel(.probe), .cancel(.rotate), .cancel(.payloadRefresh)])
        XCTAssertTrue(u.missed(), "and going off air")
    }
}
