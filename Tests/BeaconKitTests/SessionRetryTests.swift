import XCTest
@testable import BeaconKit

/// Issue 38: two monitors with one client ID (cloned cards) took the session from each other
/// every second for ever, the back-off reset at every CONNACK. A session the broker ends within
/// 5 s of accepting it is a failure; only one that lives 5 s starts the back-off again.
final class SessionRetryTests: XCTestCase {
    let range: ClosedRange<Int64> = 1000...60_000

    /// Connect, CONNACK, closed by the broker 300 ms later, again and again, on a virtual clock:
    /// the waits between the attempts. With the old rule (`RetryBackoff.succeeded()` at each
    /// CONNACK) every wait was 1 s.
    func pingPong(_ r: inout SessionRetry, sessions: Int, now: inout Int64) -> [Int64] {
        var waits: [Int64] = []
        for _ in 0..<sessions {
            now += 20
            _ = r.accepted(atMs: now)
            now += 300
            XCTAssertNil(r.settled(atMs: now), "not yet")
            let (_, after) = r.failed("the broker closed the connection", atMs: now)
            waits.append(after)
            now += after
        }
        return waits
    }

    func testSessionsTakenOverRightAfterConnAckGrowTheWaitToTheCap() {
        var r = SessionRetry(range: range, settleMs: 5000)
        var now: Int64 = 0
        XCTAssertEqual(pingPong(&r, sessions: 9, now: &now), [1000, 2000, 4000, 8000, 16_000, 32_000, 60_000, 60_000, 60_000])
        XCTAssertEqual(r.shortSessions, 9)
    }

    /// A session that lives 10 s (its settle timer fired at 5 s) starts the wait again from 1 s.
    func testASessionThatLivesTenSecondsResetsTheWait() {
        var r = SessionRetry(range: range, settleMs: 5000)
        var now: Int64 = 0
        XCTAssertEqual(pingPong(&r, sessions: 5, now: &now).last, 16_000)
        let a = r.accepted(atMs: now)
        XCTAssertFalse(a.say, "not said again while sessions end at once")
        XCTAssertTrue(a.again)
        XCTAssertEqual(a.settleAfterMs, 5000)
        XCTAssertNil(r.settled(atMs: now + 4999))
        XCTAssertEqual(r.settled(atMs: now + 5000), 5, "five sessions ended at once before it")
        XCTAssertNil(r.settled(atMs: now + 6000), "said once")
        XCTAssertNil(r.problem)
        let (say, after) = r.failed("the broker closed the connection", atMs: now + 10_000)
        XCTAssertTrue(say, "a new loss after a good session is said")
        XCTAssertEqual(after, 1000)
        XCTAssertEqual(r.shortSessions, 0)
        XCTAssertTrue(r.accepted(atMs: now + 11_000).say)
    }

    /// The same without the timer: the session's end finds it lived past the window.
    func testALongSessionEndedBeforeItsTimerStillResetsTheWait() {
        var r = SessionRetry(range: range, settleMs: 5000)
        var now: Int64 = 0
        _ = pingPong(&r, sessions: 4, now: &now)
        _ = r.accepted(atMs: now)
        XCTAssertEqual(r.failed("the broker closed the connection", atMs: now + 10_000).afterMs, 1000)
        XCTAssertEqual(r.shortSessions, 0)
    }

    /// Said once: the acceptance and the same cause of loss are not said at every reconnection.
    func testThePingPongIsSaidOnce() {
        var r = SessionRetry(range: range, settleMs: 5000)
        let first = r.accepted(atMs: 0)
        XCTAssertTrue(first.say)
        XCTAssertFalse(first.again)
        XCTAssertTrue(r.failed("the broker closed the connection", atMs: 100).say)
        for i in 1...5 {
            let t = Int64(i) * 100_000
            XCTAssertFalse(r.accepted(atMs: t).say)
            XCTAssertFalse(r.failed("the broker closed the connection", atMs: t + 100).say)
        }
    }

    /// Attempts that fail before any session (refused, unreachable) grow the wait as before, and
    /// leave the count of short sessions alone.
    func testFailedAttemptsWithoutASession() {
        var r = SessionRetry(range: range, settleMs: 5000)
        XCTAssertEqual(r.failed("connection refused", atMs: 0).afterMs, 1000)
        XCTAssertEqual(r.failed("connection refused", atMs: 1000).afterMs, 2000)
        XCTAssertEqual(r.shortSessions, 0)
        let a = r.accepted(atMs: 3000)
        XCTAssertTrue(a.say && a.again)
        XCTAssertEqual(r.settled(atMs: 8000), 0)
        XCTAssertEqual(r.delayMs, 1000)
    }
}
