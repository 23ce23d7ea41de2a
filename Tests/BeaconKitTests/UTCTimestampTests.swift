import XCTest
@testable import BeaconKit

final class UTCTimestampTests: XCTestCase {
    /// Golden values from Python's `datetime.fromtimestamp(s, timezone.utc).isoformat()`: the
    /// epoch, a day's last second, a leap day, a century that is no leap year, before 1970, 9999.
    func testRFC3339MatchesPythonsIsoformat() {
        let golden: [(Int64, String)] = [
            (0, "1970-01-01T00:00:00+00:00"), (86_399, "1970-01-01T23:59:59+00:00"), (86_400, "1970-01-02T00:00:00+00:00"),
            (951_782_400, "2000-02-29T00:00:00+00:00"), (1_764_356_400, "2025-11-28T19:00:00+00:00"),
            (4_107_542_399, "2100-02-28T23:59:59+00:00"), (-1, "1969-12-31T23:59:59+00:00"),
            (-86_401, "1969-12-30T23:59:59+00:00"), (253_402_300_799, "9999-12-31T23:59:59+00:00"),
        ]
        for (s, want) in golden { XCTAssertEqual(UTCTimestamp.rfc3339(s), want, "\(s)") }
    }

    /// Every day of 400 years (one Gregorian cycle) follows the one before it.
    func testDaysFollowEachOther() {
        var last = UTCTimestamp.civil(days: -1)
        for day in Int64(0)..<146_097 {
            let c = UTCTimestamp.civil(days: day)
            let next = c.2 == last.2 + 1 && c.1 == last.1 && c.0 == last.0
                || c.2 == 1 && (c.1 == last.1 + 1 && c.0 == last.0 || c.1 == 1 && last.1 == 12 && c.0 == last.0 + 1)
            XCTAssertTrue(next, "day \(day): \(c) after \(last)")
            if !next { return }
            last = c
        }
    }
}
