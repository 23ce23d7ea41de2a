import XCTest
@testable import BeaconKit

/// SPEC §6: the last good config and the choice made at start.
final class LastGoodConfigTests: XCTestCase {
    let good = Array(minimalBeacon.utf8)

    func testDirectory() {
        XCTAssertEqual(LastGoodConfig.directory(environment: nil), "/var/lib/altbeacond")
        XCTAssertEqual(LastGoodConfig.directory(environment: ""), "/var/lib/altbeacond")
        XCTAssertEqual(LastGoodConfig.directory(environment: "/var/lib/altbeacond"), "/var/lib/altbeacond")
        XCTAssertEqual(LastGoodConfig.directory(environment: "/tmp/state"), "/tmp/state")
        XCTAssertEqual(LastGoodConfig.directory(environment: "/var/lib/a:/var/lib/b"), "/var/lib/a")
    }

    func testWritesOnlyWhenTheBytesDiffer() {
        XCTAssertTrue(LastGoodConfig.needsWrite(applied: good, stored: nil))
        XCTAssertFalse(LastGoodConfig.needsWrite(applied: good, stored: good))
        XCTAssertTrue(LastGoodConfig.needsWrite(applied: good + Array("# a comment\n".utf8), stored: good))
        // Canonically equivalent text is still a different file.
        XCTAssertTrue(LastGoodConfig.needsWrite(applied: Array("# \u{E9}\n".utf8), stored: Array("# e\u{301}\n".utf8)))
    }

    func testStartChoice() throws {
        let fileConfig = try XCTUnwrap(config(minimalBeacon))
        let other = Array(minimalBeacon.replacingOccurrences(of: "major = 1", with: "major = 9").utf8)
        // A good file always wins, whatever is stored.
        XCTAssertEqual(LastGoodConfig.start(file: fileConfig, stored: other, storedPath: "s").0, .file(fileConfig))
        XCTAssertEqual(LastGoodConfig.start(file: fileConfig, stored: nil, storedPath: "s").0, .file(fileConfig))
        // A refused file falls back on the stored config.
        let (start, problem) = LastGoodConfig.start(file: nil, stored: other, storedPath: "s")
        guard case .lastGood(let c) = start else { return XCTFail("\(start)") }
        XCTAssertEqual(c.beacon.major, 9)
        XCTAssertNil(problem)
        // Nothing stored: refuse (exit 78).
        XCTAssertEqual(LastGoodConfig.start(file: nil, stored: nil, storedPath: "s").0, .refuse)
        // A stored copy that no longer parses is treated as absent, and said why.
        let (bad, why) = LastGoodConfig.start(file: nil, stored: Array("[beacon]\nmajor = \n".utf8), storedPath: "/state/last-good.toml")
        XCTAssertEqual(bad, .refuse)
        XCTAssertEqual(why?.headline.hasPrefix("/state/last-good.toml:2:9:"), true, why?.headline ?? "nil")
        XCTAssertEqual(LastGoodConfig.start(file: nil, stored: [], storedPath: "s").0, .refuse)
    }
}

/// The applied files waiting for the controller's word (`UnconfirmedConfigs`), and the changes
/// from afar as the status keeps them (`RemoteChangeHistory`).
final class UnconfirmedConfigsTests: XCTestCase {
    func testTheNewestFileConfirmedIsStoredAndTheOlderOnesDropped() {
        var u = UnconfirmedConfigs()
        u.applied([1], generation: 1)
        u.applied([2], generation: 2)
        u.applied([3], generation: 3)
        XCTAssertNil(u.confirmed(0), "nothing that old waits")
        XCTAssertEqual(u.confirmed(2), [2], "generation 2 on air: its file, not 3's")
        XCTAssertNil(u.confirmed(2), "1 went with it")
        XCTAssertEqual(u.confirmed(5), [3], "a later generation confirms the newest before it")
        XCTAssertNil(u.confirmed(5))
    }

    func testOnlyTheNewestFewWait() {
        var u = UnconfirmedConfigs()
        for g in 1...10 { u.applied([UInt8(g)], generation: g) }
        XCTAssertNil(u.confirmed(10 - UnconfirmedConfigs.kept), "dropped")
        XCTAssertEqual(u.confirmed(10 - UnconfirmedConfigs.kept + 1), [UInt8(10 - UnconfirmedConfigs.kept + 1)])
    }

    func testTheHistoryKeepsTheLastAndCountsEvery() {
        var h = RemoteChangeHistory()
        XCTAssertNil(h.last)
        for i in 1...(RemoteChangeReport.kept + 3) {
            h.record(RemoteChangeReport(request: "set minor \(i)", origin: "", applied: i % 2 == 0, message: "", time: Int64(i)))
        }
        XCTAssertEqual(h.count, RemoteChangeReport.kept + 3)
        XCTAssertEqual(h.recent.count, RemoteChangeReport.kept)
        XCTAssertEqual(h.recent.first?.request, "set minor 4", "oldest kept first")
        XCTAssertEqual(h.last?.request, "set minor \(RemoteChangeReport.kept + 3)")
        XCTAssertEqual(h.recent.last, h.last)
    }
}
