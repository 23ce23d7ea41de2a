import XCTest
@testable import BeaconKit

/// `BeaconTracker.record(_: AdvertisingReport, ...)`, the monitor's path with the payload cache:
/// it must end in the very states the sighting path gives, whatever the cache holds.
final class MonitorTrackerReportTests: XCTestCase {
    let lobby = Expectation(name: "lobby", frame: AltBeaconFrame(BeaconIdentity(uuid: studyGuideUUID, major: 1, minor: 2)))
    let hall = Expectation(name: "hall", frame: EddystoneUIDFrame(namespace: bytes("edd1ebeac04e5defa017"), instance: bytes("0123456789ab"), power0m: 0))
    let wall: Int64 = 1_764_000_000
    let home: [UInt8] = [0x66, 0x55, 0x44, 0x33, 0x22, 0x11]   // 11:22:33:44:55:66
    let other: [UInt8] = [0x01, 0x00, 0x00, 0x00, 0x00, 0xaa]  // AA:00:00:00:00:01

    func report(_ hex: String, rssi: Int8 = -60, address: [UInt8]? = nil) -> AdvertisingReport {
        AdvertisingReport(eventType: 3, addressType: 0, address: address ?? home, rssi: rssi, data: bytes(hex))
    }

    func tlmHex(_ deciseconds: UInt32) -> String {
        "020106 0303aafe 1116aafe 20 00 0bb8 1980 00002710 "
            + hexString([UInt8(deciseconds >> 24), UInt8(deciseconds >> 16 & 0xff), UInt8(deciseconds >> 8 & 0xff), UInt8(deciseconds & 0xff)])
    }

    /// The same reports through both paths: the same events and the same states.
    func testReportsAndSightingsEndAlike() {
        let reports: [AdvertisingReport] = [
            report(FrameTests.altbeaconHex, rssi: -61), report(FrameTests.uidHex, rssi: -70),
            report(FrameTests.altbeaconHex, rssi: -59), report(tlmHex(3600)), report(FrameTests.ibeaconHex),
            report(FrameTests.altbeaconHex, rssi: -65, address: other), report(tlmHex(3610), address: other),
            report(FrameTests.uidHex, rssi: 127), report(FrameTests.altbeaconHex, rssi: -62), report(tlmHex(10)),
            report(FrameTests.uidHex, address: other), report(tlmHex(5), address: other),
        ]
        var bySighting = BeaconTracker(expectations: [lobby, hall], silentAfterMs: 10_000, startMs: 0)
        var byReport = bySighting
        for (i, r) in reports.enumerated() {
            let at = Int64(i) * 100
            bySighting.countAdvert()
            var expected: [TrackerEvent] = []
            for s in Sighting.all(in: r, atMs: at) { expected += bySighting.record(s, wallSeconds: wall + Int64(i)) }
            XCTAssertEqual(byReport.record(r, atMs: at, wallSeconds: wall + Int64(i)), expected, "report \(i)")
            XCTAssertEqual(byReport.states, bySighting.states, "after report \(i)")
        }
        XCTAssertEqual(byReport.advertsTotal, UInt64(reports.count))
        XCTAssertEqual(byReport.states[0].address, "11:22:33:44:55:66", "the sender follows the last advert")
        XCTAssertEqual(byReport.states[1].reboots, 2, "TLM payloads are read every time, never from the cache")
    }

    /// A payload known from one sender, heard from another: the state takes the new sender.
    func testACachedPayloadFromAnotherSenderMovesTheAddress() {
        var t = BeaconTracker(expectations: [lobby], silentAfterMs: 10_000, startMs: 0)
        XCTAssertEqual(t.record(report(FrameTests.altbeaconHex), atMs: 1, wallSeconds: wall), [.heard(name: "lobby", first: true)])
        _ = t.record(report(FrameTests.altbeaconHex, address: other), atMs: 2, wallSeconds: wall)
        XCTAssertEqual(t.states[0].address, "AA:00:00:00:00:01")
        _ = t.record(report(FrameTests.altbeaconHex), atMs: 3, wallSeconds: wall)
        XCTAssertEqual(t.states[0].address, "11:22:33:44:55:66")
        XCTAssertEqual(t.states[0].adverts, 3)
    }

    /// More distinct payloads than the cache holds (a street of phones): matching never suffers.
    func testManyUnknownPayloadsDoNotDisturbMatching() {
        var t = BeaconTracker(expectations: [lobby], silentAfterMs: 10_000, startMs: 0)
        for n in 0..<(BeaconTracker.payloadCacheLimit * 3) {
            let payload = "0201060aff4c00" + hexString([UInt8(n >> 8), UInt8(n & 0xff)]) + "0000000000"
            XCTAssertEqual(t.record(report(payload), atMs: Int64(n), wallSeconds: wall), [])
            if n % 100 == 0 { _ = t.record(report(FrameTests.altbeaconHex), atMs: Int64(n), wallSeconds: wall) }
        }
        XCTAssertEqual(t.states[0].adverts, UInt64(BeaconTracker.payloadCacheLimit * 3 / 100 + 1))
        XCTAssertTrue(t.states[0].heard)
    }

    func testAddressText() {
        XCTAssertEqual(report("", address: [0xff, 0x0a, 0x00, 0x9c, 0xb1, 0x01]).addressString, "01:B1:9C:00:0A:FF")
    }
}
