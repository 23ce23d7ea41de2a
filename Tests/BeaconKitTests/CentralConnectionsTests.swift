@testable import BeaconKit
import XCTest

/// The GATT identity's centrals on their own: which connection takes the identity off air and
/// which brings it back, the limit's timer, and disconnecting a central that holds on.
final class CentralConnectionsTests: XCTestCase {
    func testTheFirstCentralTakesTheIdentityOffAirAndTheLastBringsItBack() {
        var c = CentralConnections()
        let first = c.connected(1, at: 0)
        XCTAssertEqual(first?.airChanges, true)
        XCTAssertEqual(first?.actions, [.notice("central connected (handle 1); disconnected after 30 s if it stays"),
                                        .schedule(.connectionLimit, afterMs: CentralConnections.limitMs)])
        let second = c.connected(2, at: 1000)
        XCTAssertEqual(second?.airChanges, false)
        XCTAssertEqual(second?.actions.last, .schedule(.connectionLimit, afterMs: 29_000), "timed by the oldest link")
        XCTAssertNil(c.connected(1, at: 1500), "a link known already")
        let gone = c.disconnected(1, at: 2000)
        XCTAssertEqual(gone?.airChanges, false, "another central is still connected")
        XCTAssertEqual(gone?.actions, [.notice("central disconnected (handle 1)"), .schedule(.connectionLimit, afterMs: 29_000)])
        let last = c.disconnected(2, at: 3000)
        XCTAssertEqual(last?.airChanges, true)
        XCTAssertEqual(last?.actions.last, .cancel(.connectionLimit))
        XCTAssertNil(c.disconnected(2, at: 3000), "a link not known")
        XCTAssertTrue(c.isEmpty)
    }

    func testTheAdapterGoingAwayTakesEveryLinkAndTheTimer() {
        var c = CentralConnections()
        _ = c.connected(4, at: 0)
        _ = c.connected(5, at: 0)
        c.removeAll()
        XCTAssertTrue(c.isEmpty)
        XCTAssertEqual(c.limitTimer(at: 0), .cancel(.connectionLimit))
        XCTAssertEqual(c.connected(4, at: 10)?.airChanges, true, "a link of before is a new one")
    }

    func testACentralHeldPastTheLimitIsDisconnectedAndAskedAgainWhileItStays() {
        var c = CentralConnections()
        _ = c.connected(7, at: 0)
        _ = c.connected(3, at: 10_000)
        XCTAssertEqual(c.limitReached(at: 29_999), [.schedule(.connectionLimit, afterMs: 1)], "an early timer disconnects nobody")
        XCTAssertEqual(c.limitReached(at: 30_000), [.notice("central still connected after 30 s (handle 7); disconnecting it"),
                                                    .disconnect(handle: 7),
                                                    .schedule(.connectionLimit, afterMs: CentralConnections.disconnectRetryMs)])
        // Both overdue now: the lowest handle first.
        let both = c.limitReached(at: 40_000)
        XCTAssertEqual(both.filter { if case .disconnect = $0 { return true } else { return false } },
                       [.disconnect(handle: 3), .disconnect(handle: 7)])
        XCTAssertEqual(both.last, .schedule(.connectionLimit, afterMs: CentralConnections.disconnectRetryMs))
    }

    func testALateTimerIsSetForNowNotThePast() {
        var c = CentralConnections()
        _ = c.connected(1, at: 0)
        XCTAssertEqual(c.limitTimer(at: 50_000), .schedule(.connectionLimit, afterMs: 0))
    }
}
