@testable import BeaconKit
import XCTest

/// The re-arms counted by cause, the storm detector's window and threshold, and the summary of
/// a persistent interferer's quiet re-arms.
final class RearmHistoryTests: XCTestCase {
    let rearming = PolicyAction.notice("advertising data overwritten by another process; re-arming")

    /// A history with a re-arm at each of `times`.
    func history(at times: [Int64]) -> RearmHistory {
        var h = RearmHistory()
        for t in times { h.count(.overwritten, at: t) }
        return h
    }

    func testEachCauseIsCountedAndTheStormHistoryIsBounded() {
        var h = RearmHistory()
        h.count(.reset, at: 0)
        h.count(.reset, at: 10)
        h.count(.down, at: 20)
        XCTAssertEqual(h.counts, [.reset: 2, .down: 1])
        XCTAssertEqual(h.total, 3)
        for t in Int64(1)...20 { h.count(.hung, at: t * 100) }
        XCTAssertEqual(h.total, 23)
        XCTAssertEqual(h.recent, [1600, 1700, 1800, 1900, 2000], "only the last stormThreshold")
    }

    func testFewerReArmsThanTheThresholdAreNoStorm() {
        var h = history(at: [0, 100, 200, 300])
        let r = h.interfered(.advertisingOverwritten, at: 400)
        XCTAssertFalse(r.storm)
        XCTAssertEqual(r.notices, [rearming])
    }

    func testTheThresholdWithinTheWindowIsAStormAndOlderReArmsDoNotCount() {
        let times: [Int64] = [0, 100, 200, 300, 400]
        var h = history(at: times)
        let r = h.interfered(.advertisingDisabled, at: RearmHistory.stormWindowMs)
        XCTAssertTrue(r.storm, "the first re-arm is exactly stormWindowMs old: still in the window")
        XCTAssertEqual(r.notices, [], "a storm's re-arm is not logged one by one")
        var later = history(at: times)
        XCTAssertFalse(later.interfered(.advertisingDisabled, at: RearmHistory.stormWindowMs + 1).storm)
    }

    func testAPersistentInterfererIsSummarisedOncePerPeriodAndWhenItStops() {
        var h = history(at: [0, 100, 200, 300, 400])
        var now: Int64 = 400
        var summaries: [(at: Int64, PolicyAction)] = []
        // Someone overwrites the data every 300 ms for two and a half minutes.
        for _ in 0..<500 {
            now += 300
            let r = h.interfered(.advertisingOverwritten, at: now)
            XCTAssertTrue(r.storm)
            summaries += r.notices.map { (now, $0) }
            h.count(.overwritten, at: now)
        }
        let expected: [Int64] = [700 + 60_000, 700 + 120_000]
        XCTAssertEqual(summaries.map { $0.at }, expected, "one line a period, from the first quiet re-arm")
        XCTAssertEqual(summaries.first?.1, .notice("another process keeps changing advertising: 201 re-arms in 60 s (overwritten 201), one log line a minute while it goes on"))
        XCTAssertEqual(summaries.last?.1, .notice("another process keeps changing advertising: 200 re-arms in 60 s (overwritten 200), one log line a minute while it goes on"))
        // It stops; the next interference, past the window, is no storm: what was left is said at once.
        now += RearmHistory.stormWindowMs + 1
        let r = h.interfered(.advertisingOverwritten, at: now)
        XCTAssertFalse(r.storm)
        XCTAssertEqual(r.notices, [.notice("another process keeps changing advertising: 99 re-arms in 32 s (overwritten 99), one log line a minute while it goes on"),
                                   rearming])
        XCTAssertNil(h.quietSince)
        XCTAssertEqual(h.quiet, [:])
    }

    func testAStormEndingRightAfterItsSummaryLeavesNothingForTheNextOne() {
        var h = history(at: [0, 100, 200, 300, 400])
        var now: Int64 = 400
        var summaryAt: Int64?
        // Interference every 300 ms until the first summary line, then nothing.
        while summaryAt == nil {
            now += 300
            if !h.interfered(.advertisingOverwritten, at: now).notices.isEmpty { summaryAt = now }
            h.count(.overwritten, at: now)
        }
        now += RearmHistory.stormWindowMs + 1
        XCTAssertEqual(h.interfered(.advertisingOverwritten, at: now).notices, [rearming], "nothing left unsaid")
        XCTAssertNil(h.quietSince, "the storm is over")
        // An hour later, another storm: its first summary a whole period after it began, not at once.
        now += 3_600_000
        for _ in 0..<5 { now += 300; _ = h.interfered(.advertisingOverwritten, at: now); h.count(.overwritten, at: now) }
        let start = now
        var next: Int64?
        while next == nil {
            now += 300
            if !h.interfered(.advertisingOverwritten, at: now).notices.isEmpty { next = now }
            h.count(.overwritten, at: now)
        }
        XCTAssertGreaterThanOrEqual(try XCTUnwrap(next) - start, RearmHistory.summaryPeriodMs)
    }
}
