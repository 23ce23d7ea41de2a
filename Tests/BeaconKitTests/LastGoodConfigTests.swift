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
