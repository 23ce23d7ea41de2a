import XCTest
@testable import BeaconKit

/// The monitor's pure decisions: back-off, deafness, the status text.
final class MonitorPolicyTests: XCTestCase {
    func testBackoffDoublesToItsCapAndSaysEachCauseOnce() {
        var r = RetryBackoff(range: 1000...30_000)
        var waits: [Int64] = []
        for _ in 0..<7 {
            let (say, wait) = r.failed("no adapter hci1; waiting for it")
            XCTAssertEqual(say, waits.isEmpty, "said the first time only")
            waits.append(wait)
        }
        XCTAssertEqual(waits, [1000, 2000, 4000, 8000, 16_000, 30_000, 30_000])
        XCTAssertTrue(r.failed("hci1 went down").say, "another cause is said")
        XCTAssertTrue(r.failed("no adapter hci1; waiting for it").say, "and the first again after it")
    }

    func testSuccessResetsAndTellsWhatItEnded() {
        var r = RetryBackoff(range: 1000...60_000)
        XCTAssertNil(r.succeeded(), "nothing to end")
        _ = r.failed("refused")
        _ = r.failed("refused")
        XCTAssertEqual(r.succeeded(), "refused")
        XCTAssertNil(r.problem)
        XCTAssertEqual(r.failed("refused").afterMs, 1000, "the back-off starts over")
    }

    func testShortenKeepsTheProblem() {
        var r = RetryBackoff(range: 1000...30_000)
        _ = r.failed("hci1 went away"); _ = r.failed("hci1 went away"); _ = r.failed("hci1 went away")
        r.shorten()
        XCTAssertEqual(r.problem, "hci1 went away")
        let (say, wait) = r.failed("hci1 went away")
        XCTAssertFalse(say)
        XCTAssertEqual(wait, 1000)
    }

    func testDeafWhenNothingAtAllWasHeardSinceTheLastCheck() {
        var d = ScanDeafness(rescanS: 0)
        XCTAssertEqual(d.checkAfterMs, 60_000)
        d.scanStarted(advertsTotal: 500)
        XCTAssertEqual(d.check(advertsTotal: 501), .hearing)
        XCTAssertEqual(d.check(advertsTotal: 900), .hearing)
        XCTAssertEqual(d.check(advertsTotal: 900), .deaf)
        d.scanStarted(advertsTotal: 900)
        XCTAssertEqual(d.check(advertsTotal: 900), .deaf, "a restarted scan that still hears nothing")
    }

    func testRescanCyclesWhateverWasHeard() {
        var d = ScanDeafness(rescanS: 15)
        XCTAssertEqual(d.checkAfterMs, 15_000)
        d.scanStarted(advertsTotal: 0)
        XCTAssertEqual(d.check(advertsTotal: 0), .cycle)
        XCTAssertEqual(d.check(advertsTotal: 40), .cycle)
    }

    func testStatusText() {
        let lobby = Expectation(name: "lobby", frame: AltBeaconFrame(BeaconIdentity(uuid: studyGuideUUID, major: 1, minor: 2)))
        var t = BeaconTracker(expectations: [lobby, lobby.with(name: "hall")], silentAfterMs: 10_000, startMs: 0)
        var s = MonitorStatus(adapter: "hci1", tracker: t, scanning: false, scanProblem: nil)
        XCTAssertEqual(s.text, "not scanning; 0 of 2 expected beacons heard (silent: lobby, hall)")
        s.scanProblem = "no adapter hci1; waiting for it"
        XCTAssertEqual(s.text, "no adapter hci1; waiting for it; 0 of 2 expected beacons heard (silent: lobby, hall)")
        _ = t.record(monitorSighting(FrameTests.altbeaconHex, atMs: 100), wallSeconds: 1)
        s = MonitorStatus(adapter: "hci1", tracker: t, scanning: true, scanProblem: nil)
        XCTAssertEqual(s.text, "scanning on hci1; 2 of 2 expected beacons heard")
    }
}
