import XCTest
@testable import BeaconKit

/// `altbeacond calibrate`'s arithmetic: the middle 80 % of the samples averaged, per frame, and
/// the lines to paste (SPEC §10).
final class CalibrationTests: XCTestCase {
    let altbeacon = "0201061bff1801beac2f234454cf6d4a0fadf2f4911ba9ffa600010002c500"
    let eddystoneUID = "0201060303aafe1716aafe00eeedd1ebeac04e5defa0170123456789ab0000"
    let tlm = "0201060303aafe1116aafe20000bb819800000271000000e10"

    func testMiddleMeanDropsATenthAtEachEnd() {
        XCTAssertNil(Calibration.middleMean([]))
        XCTAssertEqual(Calibration.middleMean([-60]), -60)
        // 9 samples: nothing dropped.
        XCTAssertEqual(Calibration.middleMean([-60, -61, -62, -63, -64, -65, -66, -67, -68]), -64)
        // 20 samples: the 2 lowest (-99, -98) and 2 highest (-30, -31) dropped; the 16 left are -60 x 8 and -64 x 8.
        let twenty = [-99, -98, -30, -31] + Array(repeating: -60, count: 8) + Array(repeating: -64, count: 8)
        XCTAssertEqual(Calibration.middleMean(twenty), -62)
    }

    func testPowerLinesPerFrame() throws {
        var c = Calibration()
        for r in [-70, -71, -72, -73, -74, -75, -76, -77, -78, -79, -20, -120] { c.record(monitorSighting(altbeacon, rssi: Int8(r))) }
        for r in [-60, -61, -62, -63, -64, -65, -66, -67, -68, -69] { c.record(monitorSighting(eddystoneUID, rssi: Int8(r))) }
        c.record(monitorSighting(tlm, rssi: -50))   // no power to calibrate: ignored
        let results = c.results
        XCTAssertEqual(results.map(\.type), ["altbeacon", "eddystone-uid"])
        // AltBeacon: 12 samples, 1 dropped at each end (-120 and -20): the mean of -70...-79 is -74.5 -> -75.
        XCTAssertEqual(results[0].samples, 12)
        XCTAssertEqual(results[0].rssiAt1m, -74.5)
        XCTAssertEqual(results[0].configLine, "power = -75   # [beacon]")
        // Eddystone-UID: 10 samples, -60 and -69 dropped: -64.5 -> -65 at 1 m, + 41 = -24 at 0 m.
        XCTAssertEqual(results[1].rssiAt1m, -64.5)
        XCTAssertEqual(results[1].configLine, "power_0m = -24   # [eddystone]")
        let report = c.report(adapter: "hci1", seconds: 20)
        XCTAssertTrue(report.hasPrefix("altbeacond calibrate: 20 s on hci1"))
        XCTAssertTrue(report.contains("altbeacon uuid 2f234454-cf6d-4a0f-adf2-f4911ba9ffa6 major 1 minor 2: 12 adverts, -74.5 dBm at 1 m (middle 80 %)\n  power = -75   # [beacon]\n"), report)
        XCTAssertTrue(report.contains("belong to this receiver"))
        XCTAssertFalse(report.contains("too few"))
    }

    func testNoRSSIIsCountedNotCalibrated() {
        var c = Calibration()
        for _ in 0..<5 { c.record(monitorSighting(altbeacon, rssi: 127)) }
        XCTAssertTrue(c.results.isEmpty)
        XCTAssertEqual(c.withoutRSSI, 5)
    }

    func testFewSamplesAreFlagged() {
        var c = Calibration()
        c.record(monitorSighting(altbeacon, rssi: -60))
        XCTAssertTrue(c.report(adapter: "hci0", seconds: 5).contains("only 1 adverts: too few to trust"))
    }
}
