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
        return sighting(data, rssi: rssi, at: at, address: address)!
    }

    /// The one sighting in a report of `data`; nil when there is none (fails on more than one).
    func sighting(_ data: [UInt8], rssi: Int8 = -59, at: Int64 = 0, address: [UInt8]? = nil,
                  file: StaticString = #filePath, line: UInt = #line) -> Sighting? {
        var r = report(data, rssi: rssi)
        if let address { r.address = address }
        let all = Sighting.all(in: r, atMs: at)
        XCTAssertLessThanOrEqual(all.count, 1, "\(all.map(\.type))", file: file, line: line)
        return all.first
    }

    let ibeacon = bytes(FrameTests.ibeaconHex)
    let overflow = bytes(FrameTests.overflowHex)
    let uid = bytes(FrameTests.uidHex)
    let url = bytes(FrameTests.urlHex)
    let tlm = bytes(FrameTests.tlmHex)

    func testStudyGuideSightingAndJSON() throws {
        let s = try XCTUnwrap(sighting(rig, rssi: -59))
        XCTAssertEqual(s.address, "11:22:33:44:55:66")
        XCTAssertEqual(s.type, "altbeacon")
        XCTAssertEqual(s.beacon?.minor, 2)
        // The keys and order scan has always printed, after the type.
        XCTAssertEqual(s.jsonLine, "{\"type\":\"altbeacon\",\"uuid\":\"2f234454-cf6d-4a0f-adf2-f4911ba9ffa6\",\"major\":1,\"minor\":2,"
            + "\"rssi\":-59,\"power\":-59,\"company_id\":280,\"reserved\":0,\"address\":\"11:22:33:44:55:66\","
            + "\"distance_m\":1.01,\"proximity\":\"near\"}")
    }

    /// 127 is HCI's "RSSI not available" (BlueZ's emulator reports nothing else).
    func testUnavailableRSSI() throws {
        let s = try XCTUnwrap(sighting(rig, rssi: 127))
        XCTAssertTrue(s.jsonLine.contains("\"rssi\":null,"), s.jsonLine)
        XCTAssertFalse(s.jsonLine.contains("distance_m"))
        XCTAssertTrue(s.jsonLine.hasSuffix("\"proximity\":\"unknown\"}"))
        XCTAssertTrue(BeaconTable.line("new", s).contains(" rssi=n/a "))
    }

    func testEveryFrameTypeIsRecognised() throws {
        let ib = try XCTUnwrap(sighting(ibeacon, rssi: -60))
        XCTAssertEqual(ib.type, "ibeacon")
        XCTAssertNil(ib.beacon)
        XCTAssertEqual(ib.jsonLine, "{\"type\":\"ibeacon\",\"uuid\":\"2f234454-cf6d-4a0f-adf2-f4911ba9ffa6\",\"major\":1,\"minor\":2,"
            + "\"rssi\":-60,\"power\":-59,\"address\":\"11:22:33:44:55:66\",\"distance_m\":1.14,\"proximity\":\"near\"}")
        // Eddystone's power is at 0 m: -18 at 0 m is taken as -59 at 1 m.
        let u = try XCTUnwrap(sighting(uid, rssi: -59))
        XCTAssertEqual(u.powerAt1m, -59)
        XCTAssertEqual(u.jsonLine, "{\"type\":\"eddystone-uid\",\"namespace\":\"edd1ebeac04e5defa017\",\"instance\":\"0123456789ab\","
            + "\"rssi\":-59,\"power_0m\":-18,\"address\":\"11:22:33:44:55:66\",\"distance_m\":1.01,\"proximity\":\"near\"}")
        XCTAssertEqual(try XCTUnwrap(sighting(url, rssi: -70)).jsonLine,
                       "{\"type\":\"eddystone-url\",\"url\":\"https://www.example.com/\",\"rssi\":-70,\"power_0m\":-18,"
                       + "\"address\":\"11:22:33:44:55:66\",\"distance_m\":3.47,\"proximity\":\"far\"}")
        // TLM: no IDs, no power, so no distance.
        let t = try XCTUnwrap(sighting(tlm, rssi: -60))
        XCTAssertNil(t.powerAt1m)
        XCTAssertEqual(t.jsonLine, "{\"type\":\"eddystone-tlm\",\"rssi\":-60,\"battery_mv\":3000,\"temperature_c\":25.50,"
            + "\"adv_count\":10000,\"uptime_s\":360.0,\"address\":\"11:22:33:44:55:66\",\"proximity\":\"unknown\"}")
        let none = try XCTUnwrap(sighting(bytes(FrameTests.tlmZeroHex), rssi: 127))
        XCTAssertEqual(none.jsonLine, "{\"type\":\"eddystone-tlm\",\"rssi\":null,\"battery_mv\":null,\"temperature_c\":null,"
            + "\"adv_count\":0,\"uptime_s\":0.0,\"address\":\"11:22:33:44:55:66\",\"proximity\":\"unknown\"}")
        // Eddystone-UID without the reserved bytes (the old test's frame).
        let short: [UInt8] = [0x03, 0x03, 0xaa, 0xfe, 0x15, 0x16, 0xaa, 0xfe, 0x00, 0xe7] + [UInt8](repeating: 0x22, count: 16)
        XCTAssertEqual(sighting(short)?.type, "eddystone-uid")
        // Wrong beacon code, any company ID.
        var wrongCode = rig; wrongCode[8] = 0xad
        XCTAssertNil(sighting(wrongCode))
        var otherCompany = rig; otherCompany[5] = 0x34; otherCompany[6] = 0x12
        XCTAssertEqual(sighting(otherCompany)?.beacon?.companyID, 0x1234)
        // Other adverts: a name, a flags AD alone, Eddystone-EID.
        XCTAssertNil(sighting([0x02, 0x01, 0x06, 0x05, 0x09, 0x41, 0x42, 0x43, 0x44]))
        XCTAssertNil(sighting([0x02, 0x01, 0x06]))
        XCTAssertNil(sighting([0x03, 0x03, 0xaa, 0xfe, 0x0d, 0x16, 0xaa, 0xfe, 0x30, 0xee] + [UInt8](repeating: 1, count: 8)))
    }

    /// The Overflow Area frame at either position: the matching byte and position found, major
    /// and minor; no power, so no distance.
    func testOverflowAreaSightings() throws {
        let p0 = try XCTUnwrap(sighting(overflow, rssi: -60))
        XCTAssertEqual(p0.type, "overflow-area")
        XCTAssertNil(p0.powerAt1m)
        XCTAssertEqual(p0.jsonLine, "{\"type\":\"overflow-area\",\"matching_byte\":170,\"major\":1,\"minor\":2,\"rssi\":-60,"
            + "\"position\":0,\"address\":\"11:22:33:44:55:66\",\"proximity\":\"unknown\"}")
        XCTAssertEqual(BeaconTable.line("new", p0),
                       "new 0xaa major=1 minor=2 rssi=-60 position=0 distance_m=- proximity=unknown address=11:22:33:44:55:66 type=overflow-area")
        let p1 = try XCTUnwrap(sighting(bytes("020106 14ff 4c00 01 01 0000000000 000000 5a 1234 5678 0000"), rssi: 127))
        XCTAssertEqual(p1.jsonLine, "{\"type\":\"overflow-area\",\"matching_byte\":90,\"major\":4660,\"minor\":22136,\"rssi\":null,"
            + "\"position\":1,\"address\":\"11:22:33:44:55:66\",\"proximity\":\"unknown\"}")
        XCTAssertEqual(BeaconTable.line("gone", p1),
                       "gone 0x5a major=4660 minor=22136 rssi=n/a position=1 distance_m=- proximity=unknown address=11:22:33:44:55:66 type=overflow-area")
        // The same beacon moving to the other position (the reference app rotates): one row, changed.
        var t = BeaconTable()
        XCTAssertEqual(t.record(p0), .new)
        let moved = try XCTUnwrap(sighting(bytes("020106 14ff 4c00 01 01 0000000000 000000 aa 0001 0002 0000"), rssi: -60))
        XCTAssertEqual(t.record(moved), .changed)
        XCTAssertEqual(t.record(moved), .unchanged)
        XCTAssertEqual(t.count, 1)
        // Another matching byte is another row.
        XCTAssertEqual(t.record(p1), .new)
        XCTAssertEqual(t.count, 2)
        // The fused beacon: iBeacon and Overflow Area with the same numbers are two rows, iBeacon first.
        var fused = BeaconTable()
        for data in [overflow, ibeacon] { _ = fused.record(try XCTUnwrap(sighting(data, rssi: -59, at: 1000))) }
        let rows = fused.render(now: 1500, title: "T").split(separator: "\n").map(String.init).dropFirst(2)
        XCTAssertEqual(rows.map { String($0.prefix(14)) }, ["ibeacon       ", "overflow-area "])
    }

    /// One advert, two frames (an extended advert has room): one sighting each, one row each.
    func testTwoFramesInOneAdvert() {
        let both = rig + Array(uid.dropFirst(3))
        let all = Sighting.all(in: report(both), atMs: 0)
        XCTAssertEqual(all.map(\.type), ["altbeacon", "eddystone-uid"])
        var t = BeaconTable()
        XCTAssertEqual(all.map { t.record($0) }, [.new, .new])
        XCTAssertEqual(t.count, 2)
    }

    /// A decoded URL comes from any nearby device: quotes, backslashes and odd bytes stay inside
    /// the JSON string, and no raw control character reaches a terminal.
    func testJSONEscaping() throws {
        let evil = EddystoneURLFrame(encoded: [0x03, 0x22, 0x7d, 0x5c, 0x0e, 0x01, 0x7f], power0m: -18)
        let s = Sighting(frame: evil, rssi: -59, address: "11:22:33:44:55:66", atMs: 0)
        XCTAssertEqual(evil.url, "https://\"}\\\\x0e.org/\\x7f")
        XCTAssertTrue(s.jsonLine.hasPrefix("{\"type\":\"eddystone-url\",\"url\":\"https://\\\"}\\\\\\\\x0e.org/\\\\x7f\",\"rssi\":-59,"), s.jsonLine)
        // Through a real advert too.
        let heard = try XCTUnwrap(sighting(EddystoneURLFrame(encoded: [0x02, 0x22, 0x5c, 0x22], power0m: 0).advertisingData(.zero)))
        XCTAssertTrue(heard.jsonLine.contains("\"url\":\"http://\\\"\\\\\\\"\","), heard.jsonLine)
        XCTAssertEqual(jsonString("a\"b\\c\n\r\t\u{1}\u{1b}\u{7f}\u{85}é😀"), "\"a\\\"b\\\\c\\n\\r\\t\\u0001\\u001b\\u007f\\u0085é😀\"")
        XCTAssertFalse(BeaconTable.line("new", s).unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7f })
    }

    /// Every manufacturer-data length 0-31, truncated frames and random bytes: nil, never a trap.
    func testMalformedDataNeverTraps() {
        for len in 0...31 {
            let ad: [UInt8] = [UInt8(truncatingIfNeeded: len + 1), 0xff] + Array(rig[5..<min(31, 5 + len)]) + [UInt8](repeating: 0xac, count: max(0, len - 26))
            let s = Sighting.all(in: report(ad), atMs: 0)
            XCTAssertEqual(s.map(\.type), len == 26 ? ["altbeacon"] : [], "length \(len)")
        }
        for frame in [rig, ibeacon, overflow, uid, url, tlm] {
            for cut in 0..<frame.count { XCTAssertTrue(Sighting.all(in: report(Array(frame.prefix(cut))), atMs: 0).isEmpty) }
        }
        var g = XorShift64(seed: 0xa17b_eac0)
        for _ in 0..<2000 {
            let n = Int.random(in: 0...40, using: &g)
            for s in Sighting.all(in: report((0..<n).map { _ in UInt8.random(in: 0...255, using: &g) }), atMs: 0) {
                _ = s.jsonLine; _ = BeaconTable.line("new", s); _ = BeaconTable.cells(s, now: 0)
            }
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
        XCTAssertEqual(t.expire(now: 8000), [])
        let gone = t.expire(now: 8800)
        XCTAssertEqual(gone.map(\.beacon?.minor), [2])
        XCTAssertEqual(t.count, 1)
        XCTAssertEqual(t.nextExpiryMs, 13500)
        XCTAssertEqual(t.expire(now: 13500).map(\.beacon?.minor), [3])
    }

    /// The frames of one beacon are separate rows, keyed by type and IDs; TLM by the sender.
    func testRowsPerTypeAndID() throws {
        var t = BeaconTable()
        XCTAssertEqual(t.record(sighting()), .new)
        XCTAssertEqual(t.record(try XCTUnwrap(sighting(ibeacon))), .new)     // same UUID, major, minor: another row
        XCTAssertEqual(t.record(try XCTUnwrap(sighting(uid))), .new)
        XCTAssertEqual(t.record(try XCTUnwrap(sighting(url))), .new)
        XCTAssertEqual(t.record(try XCTUnwrap(sighting(tlm))), .new)
        XCTAssertEqual(t.record(try XCTUnwrap(sighting(tlm, address: [1, 2, 3, 4, 5, 6]))), .new)   // another sender's TLM
        XCTAssertEqual(t.count, 6)
        // The same UID from another address is the same row (a change of address).
        XCTAssertEqual(t.record(try XCTUnwrap(sighting(uid, address: [9, 9, 9, 9, 9, 9]))), .changed)
        var otherInstance = uid; otherInstance[28] = 0xac
        XCTAssertEqual(t.record(try XCTUnwrap(sighting(otherInstance))), .new)
        // TLM's counters move on every advert: not a change; its temperature is.
        var later = tlm; later[20] = 0xff; later[24] = 0xff
        XCTAssertEqual(t.record(try XCTUnwrap(sighting(later))), .unchanged)
        var warmer = tlm; warmer[16] = 0x1a
        XCTAssertEqual(t.record(try XCTUnwrap(sighting(warmer))), .changed)
        // An iBeacon's power is a change of that row only.
        var louder = ibeacon; louder[29] = 0xc0
        XCTAssertEqual(t.record(try XCTUnwrap(sighting(louder))), .changed)
        XCTAssertEqual(t.count, 7)
        XCTAssertEqual(t.rows.keys.sorted().map(\.type),
                       ["altbeacon", "ibeacon", "eddystone-uid", "eddystone-uid", "eddystone-url", "eddystone-tlm", "eddystone-tlm"])
        // IDs sort as numbers.
        XCTAssertLessThan(sighting(minor: 9).key, sighting(minor: 10).key)
        XCTAssertEqual(try XCTUnwrap(sighting(tlm)).key, BeaconKey(try XCTUnwrap(sighting(later))))
        XCTAssertEqual(try XCTUnwrap(sighting(tlm)).key.parts, [.text("11:22:33:44:55:66")])
    }

    func testRenderAndLine() throws {
        var t = BeaconTable()
        _ = t.record(sighting(minor: 3, rssi: -70, at: 0))
        _ = t.record(sighting(minor: 2, rssi: -59, at: 0))
        let text = t.render(now: 1500, title: "T")
        let lines = text.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.count, 4)
        XCTAssertEqual(lines[0], "T")
        XCTAssertEqual(lines[1], "TYPE           ID                                    MAJOR  MINOR  RSSI  POWER  COMPANY   DIST m  PROXIMITY    HEARD  DETAILS")
        XCTAssertEqual(lines[2], "altbeacon      2f234454-cf6d-4a0f-adf2-f4911ba9ffa6      1      2   -59    -59  0x0118      1.01  near         1.5 s  reserved=0")
        XCTAssertTrue(lines[3].contains("     3   -70"), lines[3])
        XCTAssertTrue(BeaconTable().render(now: 0, title: "T").contains("no beacon heard yet"))
        XCTAssertEqual(BeaconTable.line("new", sighting()),
                       "new 2f234454-cf6d-4a0f-adf2-f4911ba9ffa6 major=1 minor=2 rssi=-59 power=-59 company=0x0118 "
                       + "reserved=0 distance_m=1.01 proximity=near address=11:22:33:44:55:66 type=altbeacon")
    }

    func testRenderAndLinesOfEveryFrame() throws {
        var t = BeaconTable()
        for data in [tlm, url, uid, overflow, ibeacon, rig] { _ = t.record(try XCTUnwrap(sighting(data, rssi: -59, at: 1000))) }
        let lines = t.render(now: 1500, title: "T").split(separator: "\n").map(String.init)
        XCTAssertEqual(Array(lines.dropFirst(2)), [
            "altbeacon      2f234454-cf6d-4a0f-adf2-f4911ba9ffa6      1      2   -59    -59  0x0118      1.01  near         0.5 s  reserved=0",
            "ibeacon        2f234454-cf6d-4a0f-adf2-f4911ba9ffa6      1      2   -59    -59  -           1.01  near         0.5 s",
            "overflow-area  0xaa                                      1      2   -59      -  -              -  unknown      0.5 s  position=0",
            "eddystone-uid  edd1ebeac04e5defa017 0123456789ab         -      -   -59      -  -           1.01  near         0.5 s  power_0m=-18",
            "eddystone-url  https://www.example.com/                  -      -   -59      -  -           1.01  near         0.5 s  power_0m=-18",
            "eddystone-tlm  11:22:33:44:55:66                         -      -   -59      -  -              -  unknown      0.5 s  battery_mv=3000 temperature_c=25.50 adv_count=10000 uptime_s=360.0",
        ])
        let a = "distance_m=1.01 proximity=near address=11:22:33:44:55:66"
        XCTAssertEqual(BeaconTable.line("new", try XCTUnwrap(sighting(ibeacon))),
                       "new 2f234454-cf6d-4a0f-adf2-f4911ba9ffa6 major=1 minor=2 rssi=-59 power=-59 \(a) type=ibeacon")
        XCTAssertEqual(BeaconTable.line("changed", try XCTUnwrap(sighting(uid))),
                       "changed edd1ebeac04e5defa017 instance=0123456789ab rssi=-59 power_0m=-18 \(a) type=eddystone-uid")
        XCTAssertEqual(BeaconTable.line("gone", try XCTUnwrap(sighting(url))),
                       "gone https://www.example.com/ rssi=-59 power_0m=-18 \(a) type=eddystone-url")
        XCTAssertEqual(BeaconTable.line("new", try XCTUnwrap(sighting(tlm))),
                       "new 11:22:33:44:55:66 rssi=-59 battery_mv=3000 temperature_c=25.50 adv_count=10000 uptime_s=360.0 "
                       + "distance_m=- proximity=unknown address=11:22:33:44:55:66 type=eddystone-tlm")
    }

    /// A whole LE Meta event off the wire, legacy and extended, down to a sighting.
    func testFromHCIEventPackets() throws {
        let legacy: [UInt8] = [0x04, 0x3e, UInt8(12 + rig.count), 0x02, 0x01, 0x03, 0x00,
                               0x66, 0x55, 0x44, 0x33, 0x22, 0x11, UInt8(rig.count)] + rig + [0xc4]
        guard case .success(.advertisingReports(let rs)) = HCIEvent.decode(legacy[...]) else { return XCTFail("decode") }
        XCTAssertEqual(Sighting.all(in: rs[0], atMs: 0).first?.rssi, -60)
        var ext: [UInt8] = [0x3e, 0x00, 0x0d, 0x01, 0x10, 0x00, 0x00, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11,
                            0x01, 0x00, 0xff, 0x7f, 0xc3, 0x00, 0x00, 0x00, 0, 0, 0, 0, 0, 0, UInt8(rig.count)] + rig
        ext[1] = UInt8(ext.count - 2)
        guard case .success(.advertisingReports(let xs)) = HCIEvent.decode(([0x04] + ext)[...]) else { return XCTFail("decode ext") }
        XCTAssertEqual(Sighting.all(in: xs[0], atMs: 0).first?.rssi, -61)
        XCTAssertEqual(Sighting.all(in: xs[0], atMs: 0).first?.beacon?.minor, 2)
    }
}
