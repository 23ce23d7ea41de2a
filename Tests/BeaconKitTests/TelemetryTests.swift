import XCTest
@testable import BeaconKit

/// What the Eddystone-TLM frame carries (SPEC §3): the 8.8 temperature, "not supported", the
/// fields `scan` shows, and the board reading the advertiser's runner hands in. The vectors are
/// FrameTests'.
final class TelemetryTests: XCTestCase {
    func testFixed88() {
        XCTAssertEqual(Telemetry.fixed88(millidegrees: 25_500), 0x1980)
        XCTAssertEqual(Telemetry.fixed88(millidegrees: 0), 0)
        XCTAssertEqual(Telemetry.fixed88(millidegrees: 1_000), 0x0100)
        XCTAssertEqual(Telemetry.fixed88(millidegrees: 500), 0x0080)
        XCTAssertEqual(Telemetry.fixed88(millidegrees: -1_250), -320)
        XCTAssertEqual(Telemetry.fixed88(millidegrees: 45_678), 0x2dad)   // 11693.568, truncated
        XCTAssertEqual(Telemetry.fixed88(millidegrees: 127_999), 0x7fff)
        XCTAssertEqual(Telemetry.fixed88(millidegrees: 200_000), 0x7fff)
        // Clamped, never 0x8000 (that says "not supported"), and no overflow on absurd readings.
        XCTAssertEqual(Telemetry.fixed88(millidegrees: -200_000), -0x7fff)
        XCTAssertEqual(Telemetry.fixed88(millidegrees: -128_000), -0x7fff)
        XCTAssertEqual(Telemetry.fixed88(millidegrees: .max), 0x7fff)
        XCTAssertEqual(Telemetry.fixed88(millidegrees: .min), -0x7fff)
        XCTAssertEqual(Telemetry.fixed88(millidegrees: Int64.max / 256 + 1), 0x7fff)
    }

    func testTLMNotSupportedAndFields() throws {
        XCTAssertEqual(EddystoneTLMFrame.temperatureNotSupported, 0x8000)
        let none = try XCTUnwrap(EddystoneTLMFrame.decode(bytes(FrameTests.tlmZeroHex)[...]))
        XCTAssertNil(none.received?.temperature)
        XCTAssertEqual(none.fields, [FrameField("battery_mv", "null", number: true), FrameField("temperature_c", "null", number: true),
                                     FrameField("adv_count", "0", number: true), FrameField("uptime_s", "0.0", number: true)])
        let full = try XCTUnwrap(EddystoneTLMFrame.decode(bytes(FrameTests.tlmHex)[...]))
        XCTAssertEqual(full.received, FrameTests.telemetry)
        XCTAssertEqual(full.fields, [FrameField("battery_mv", "3000", number: true), FrameField("temperature_c", "25.50", number: true),
                                     FrameField("adv_count", "10000", number: true), FrameField("uptime_s", "360.0", number: true)])
        XCTAssertEqual(EddystoneTLMFrame.celsius(-320), "-1.25")
        XCTAssertEqual(EddystoneTLMFrame.celsius(0x0080), "0.50")
        XCTAssertEqual(EddystoneTLMFrame.celsius(0x0005), "0.01")
        XCTAssertEqual(EddystoneTLMFrame.celsius(-0x7fff), "-127.99")
        // Only version 0 (unencrypted) is read; 0x01 is encrypted TLM.
        var encrypted = bytes(FrameTests.tlmHex); encrypted[12] = 0x01
        XCTAssertNil(EddystoneTLMFrame.decode(encrypted[...]))
        // The frame the daemon sends describes itself without numbers.
        XCTAssertEqual(EddystoneTLMFrame().fields.map(\.key), ["telemetry"])
    }

    /// The runner's board reading: the uptime at a later send is the reading plus the time since
    /// (whole 0.1 s), never past UInt32's end; the temperature as read.
    func testBoardReadingExtrapolatesTheUptime() {
        let r = BoardReading(uptimeDeciseconds: 100, temperature: 0x1900, readAtMs: 1000)
        XCTAssertEqual(r.telemetry(advertisingCount: 5, now: 3550),
                       Telemetry(uptimeDeciseconds: 125, advertisingCount: 5, temperature: 0x1900))
        XCTAssertEqual(r.telemetry(advertisingCount: 5, now: 500).uptimeDeciseconds, 100, "a clock before the reading adds nothing")
        let late = BoardReading(uptimeDeciseconds: .max - 1, temperature: nil, readAtMs: 0)
        XCTAssertEqual(late.telemetry(advertisingCount: 0, now: 10_000).uptimeDeciseconds, .max)
    }
}
