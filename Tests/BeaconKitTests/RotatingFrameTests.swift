import XCTest
@testable import BeaconKit

/// Issue 50: a frame whose bytes rotate while on air (an ephemeral ID, as Eddystone-EID's) is
/// one file: this test-only type says `refreshedOnAir` in its traits and computes its bytes from
/// the moment's `Telemetry`; the advertiser refreshes it with no change anywhere else. It carries
/// no telemetry readings, so it is no `TelemetryFrame`: the board's readings are not its business.
struct RotatingTestFrame: BeaconFrame, Equatable {
    static let traits = FrameTraits(name: "test-rotating", switchedBy: nil, refreshedOnAir: true)
    var seed: UInt8

    /// A new 8-byte ID every 10 s of the beacon's uptime, in manufacturer data (company 0xFFFF,
    /// reserved for tests by the Bluetooth SIG).
    func advertisingData(_ t: Telemetry) -> [UInt8] {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in [seed] + withUnsafeBytes(of: (t.uptimeDeciseconds / 100).littleEndian, Array.init) {
            h = (h ^ UInt64(b)) &* 0x0000_0100_0000_01b3
        }
        return [0x02, 0x01, 0x06, 0x0b, 0xff, 0xff, 0xff] + withUnsafeBytes(of: h.littleEndian, Array.init)
    }
    var fields: [FrameField] { [FrameField("seed", "\(seed)", number: true)] }
    static func decode(_ data: ArraySlice<UInt8>) -> RotatingTestFrame? { nil }
}

final class RotatingFrameTests: XCTestCase {
    func testAFrameWhoseBytesRotateIsRefreshedOnAirByItsTraitAlone() throws {
        let frame = RotatingTestFrame(seed: 7)
        XCTAssertTrue(frame.isRefreshedOnAir)
        XCTAssertFalse(frame.carriesTelemetry, "refreshed on air, yet no TLM")
        var config = BenchConfigs.make()
        config.frames = [ConfiguredFrame(frame)]
        var b = AdvertiserBench(extended: false)
        XCTAssertEqual(try XCTUnwrap(b.arm(config)).get(), AirSummary(refreshesPayloads: true),
                       "the policy schedules the payload refresh for it (OnAirPolicy), as for TLM")
        XCTAssertFalse(b.p.wantsBoardReading(for: config), "no board reading: it carries no readings")
        let first = b.controller.onAir
        XCTAssertEqual(first, [frame.advertisingData(Telemetry(uptimeDeciseconds: 10, advertisingCount: 0, temperature: nil))])
        // the board read 1 s after boot at 0 ms; 25 s later the uptime is 26 s: another 10 s epoch
        b.run(b.p.refreshPayloads(now: 25_000))
        let later = b.controller.onAir
        XCTAssertEqual(later.count, 1)
        XCTAssertNotEqual(later, first, "the bytes on air rotated")
        XCTAssertEqual(later, [frame.advertisingData(Telemetry(uptimeDeciseconds: 260, advertisingCount: 0, temperature: nil))])
        XCTAssertEqual(b.ops.suffix(1), [.leSetAdvertisingData], "a refresh is one data write, nothing re-armed")
    }
}
