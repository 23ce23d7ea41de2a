import XCTest
@testable import BeaconKit

final class ScanTests: XCTestCase {
    let rig: [UInt8] = [0x02, 0x01, 0x06, 0x1b, 0xff, 0x18, 0x01, 0xbe, 0xac,
                        0x2f, 0x23, 0x44, 0x54, 0xcf, 0x6d, 0x4a, 0x0f, 0xad, 0xf2, 0xf4, 0x91, 0x1b, 0xa9, 0xff, 0xa6,
                        0x00, 0x01, 0x00, 0x02, 0xc5, 0x00]

    func report(_ data: [UInt8], rssi: Int8 = -59) -> AdvertisingReport {
        AdvertisingReport(eventType: 3, addressType: 0, address: [0x66, 0x55, 0x44, 0x33, 0x22, 0x11], rssi: rssi, data: data)
    }

    func sighting(minor: UInt16 = 2, rssi: Int8 = -59, at: Int64 = 0, address: [UInt8]? = nil) -> Sighting {
        var data = rig
        data[27] = UInt8(minor >> 8); data[28] = UInt8(minor & 0xff)
        var r = report(data, rssi: rssi)
        if let address { r.address = address }
        return Sighting(report: r, atMs: at)!
    }

    func testStudyGuideSightingAndJSON() throws {
        let s = try XCTUnwrap(Sighting(report: report(rig, rssi: -59), atMs: 0))
        XCTAssertEqual(s.address, "11:22:33:44:55:66")
        XCTAssertEqual(s.jsonLine, "{\"uuid\":\"2f234454-cf6d-4a0f-adf2-f4911ba9ffa6\",\"major\":1,\"minor\":2,"
            + "\"rssi\":-59,\"power\":-59,\"company_id\":280,\"reserved\":0,\"address\":\"11:22:33:44:55:66\","
            + "\"distance_m\":1.01,\"proximity\":\"near\"}")
    }

    /// 127 is HCI's "RSSI not available" (BlueZ's emulator reports nothing else).
    func testUnavailableRSSI() throws {
        let s = try XCTUnwrap(Sighting(report: report(rig, rssi: 127), atMs: 0))
        XCTAssertTrue(s.jsonLine.contains("\"rssi\":null,"), s.jsonLine)
        XCTAssertFalse(s.jsonLine.contains("distance_m"))
        XCTAssertTrue(s.jsonLine.hasSuffix("\"proximity\":\"unknown\"}"))
        XCTAssertTrue(BeaconTable.line("new", s).contains(" rssi=n/a "))
    }

    func testOtherFramesAreIgnored() {
        // iBeacon: Apple 0x004c, type 0x02 0x15.
        let ibeacon: [UInt8] = [0x02, 0x01, 0x06, 0x1a, 0xff, 0x4c, 0x00, 0x02, 0x15] + [UInt8](repeating: 0x11, count: 16) + [0, 1, 0, 2, 0xc5]
        // Eddystone-UID: 16-bit service data for 0xfeaa.
        let eddystone: [UInt8] = [0x03, 0x03, 0xaa, 0xfe, 0x15, 0x16, 0xaa, 0xfe, 0x00, 0xe7] + [UInt8](repeating: 0x22, count: 16)
        XCTAssertNil(Sighting(report: report(ibeacon), atMs: 0))
        XCTAssertNil(Sighting(report: report(eddystone), atMs: 0))
        // Wrong beacon code, any company ID.
        var wrongCode = rig; wrongCode[8] = 0xad
        XCTAssertNil(Sighting(report: report(wrongCode), atMs: 0))
        var otherCompany = rig; otherCompany[5] = 0x34; otherCompany[6] = 0x12
        XCTAssertEqual(Sighting(report: report(otherCompany), atMs: 0)?.beacon.companyID, 0x1234)
    }

    /// Every manufacturer-data length 0-31, truncated frames and random bytes: nil, never a trap.
    func testMalformedDataNeverTraps() {
        for len in 0...31 {
            let ad: [UInt8] = [UInt8(truncatingIfNeeded: len + 1), 0xff] + Array(rig[5..<min(31, 5 + len)]) + [UInt8](repeating: 0xac, count: max(0, len - 26))
            let s = Sighting(report: report(ad), atMs: 0)
            XCTAssertEqual(s != nil, len == 26, "length \(len)")
        }
        for cut in 0..<rig.count { XCTAssertNil(Sighting(report: report(Array(rig.prefix(cut))), atMs: 0)) }
        var g = SystemRandomNumberGenerator()
        for _ in 0..<2000 {
            let n = Int.random(in: 0...40, using: &g)
            _ = Sighting(report: report((0..<n).map { _ in UInt8.random(in: 0...255, using: &g) }), atMs: 0)
        }
    }

    func testDistanceAndProximity() throws {
        XCTAssertEqual(try XCTUnwrap(DistanceEstimate.meters(rssi: -59, power: -59)), 1.01076, accuracy: 0.0001)
        XCTAssertEqual(try XCTUnwrap(DistanceEstimate.meters(rssi: -50, power: -59)), 0.1911, accuracy: 0.001)
        XCTAssertGreaterThan(try XCTUnwrap(DistanceEstimate.meters(rssi: -80, power: -59)), 3)
        XCTAssertNil(DistanceEstimate.meters(rssi: 127, power: -59))   // RSSI not available
        XCTAssertNil(DistanceEstimate.meters(rssi: -60, power: 0))
        XCTAssertEqual(Proximity(distanceMeters: 0.2), .immediate)
        XCTAssertEqual(Proximity(distanceMeters: 2.9), .near)
        XCTAssertEqual(Proximity(distanceMeters: 3), .far)
        XCTAssertEqual(Proximity(distanceMeters: nil), .unknown)
        XCTAssertEqual(DistanceEstimate.format(1.0107), "1.01")
        XCTAssertEqual(DistanceEstimate.format(0.049), "0.05")
        XCTAssertEqual(DistanceEstimate.format(12.5), "12.50")
        XCTAssertEqual(DistanceEstimate.format(.infinity), "-")
    }

    func testTableNewChangedUnchangedAndExpiry() {
        var t = BeaconTable()
        XCTAssertEqual(t.record(sighting(rssi: -59, at: 0)), .new)
        XCTAssertEqual(t.record(sighting(rssi: -60, at: 100)), .unchanged)   // jitter
        XCTAssertEqual(t.record(sighting(rssi: -63, at: 200)), .changed)     // moved 4 dB from the printed -59
        XCTAssertEqual(t.record(sighting(rssi: -63, at: 300, address: [1, 2, 3, 4, 5, 6])), .changed)
        XCTAssertEqual(t.record(sighting(minor: 3, at: 5000)), .new)
        XCTAssertEqual(t.count, 2)
        XCTAssertEqual(t.expire(nowMs: 8000), [])
        let gone = t.expire(nowMs: 8800)
        XCTAssertEqual(gone.map(\.beacon.minor), [2])
        XCTAssertEqual(t.count, 1)
        XCTAssertEqual(t.nextExpiryMs, 13500)
        XCTAssertEqual(t.expire(nowMs: 13500).map(\.beacon.minor), [3])
    }

    func testRenderAndLine() {
        var t = BeaconTable()
        _ = t.record(sighting(minor: 3, rssi: -70, at: 0))
        _ = t.record(sighting(minor: 2, rssi: -59, at: 0))
        let text = t.render(nowMs: 1500, title: "T")
        let lines = text.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.count, 4)
        XCTAssertEqual(lines[0], "T")
        XCTAssertTrue(lines[1].hasPrefix("UUID"))
        XCTAssertTrue(lines[2].hasPrefix("2f234454-cf6d-4a0f-adf2-f4911ba9ffa6      1      2   -59    -59  0x0118"), lines[2])
        XCTAssertTrue(lines[2].hasSuffix("1.01  near         1.5 s"), lines[2])
        XCTAssertTrue(lines[3].contains("     3   -70"), lines[3])
        XCTAssertTrue(BeaconTable().render(nowMs: 0, title: "T").contains("no AltBeacon heard yet"))
        XCTAssertEqual(BeaconTable.line("new", sighting()),
                       "new 2f234454-cf6d-4a0f-adf2-f4911ba9ffa6 major=1 minor=2 rssi=-59 power=-59 company=0x0118 "
                       + "reserved=0 distance_m=1.01 proximity=near address=11:22:33:44:55:66")
    }

    /// A whole LE Meta event off the wire, legacy and extended, down to a sighting.
    func testFromHCIEventPackets() throws {
        let legacy: [UInt8] = [0x04, 0x3e, UInt8(12 + rig.count), 0x02, 0x01, 0x03, 0x00,
                               0x66, 0x55, 0x44, 0x33, 0x22, 0x11, UInt8(rig.count)] + rig + [0xc4]
        guard case .success(.advertisingReports(let rs)) = HCIEvent.decode(legacy[...]) else { return XCTFail("decode") }
        XCTAssertEqual(Sighting(report: rs[0], atMs: 0)?.rssi, -60)
        var ext: [UInt8] = [0x3e, 0x00, 0x0d, 0x01, 0x10, 0x00, 0x00, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11,
                            0x01, 0x00, 0xff, 0x7f, 0xc3, 0x00, 0x00, 0x00, 0, 0, 0, 0, 0, 0, UInt8(rig.count)] + rig
        ext[1] = UInt8(ext.count - 2)
        guard case .success(.advertisingReports(let xs)) = HCIEvent.decode(([0x04] + ext)[...]) else { return XCTFail("decode ext") }
        XCTAssertEqual(Sighting(report: xs[0], atMs: 0)?.rssi, -61)
        XCTAssertEqual(Sighting(report: xs[0], atMs: 0)?.beacon.minor, 2)
    }
}
