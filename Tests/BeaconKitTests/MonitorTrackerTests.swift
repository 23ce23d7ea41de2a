import XCTest
@testable import BeaconKit

final class MonitorTrackerTests: XCTestCase {
    let lobby = Expectation(name: "lobby", frame: AltBeaconFrame(BeaconIdentity(uuid: studyGuideUUID, major: 1, minor: 2)))
    let hall = Expectation(name: "hall", frame: EddystoneUIDFrame(namespace: bytes("edd1ebeac04e5defa017"), instance: bytes("0123456789ab"), power0m: 0))
    let wall: Int64 = 1_764_000_000
    let otherAddress: [UInt8] = [0x01, 0x00, 0x00, 0x00, 0x00, 0xaa]   // AA:00:00:00:00:01

    func alt(at ms: Int64, rssi: Int8 = -60) -> Sighting { monitorSighting(FrameTests.altbeaconHex, rssi: rssi, atMs: ms) }
    func uid(at ms: Int64, address: [UInt8]? = nil) -> Sighting {
        address.map { monitorSighting(FrameTests.uidHex, atMs: ms, address: $0) } ?? monitorSighting(FrameTests.uidHex, atMs: ms)
    }
    /// An Eddystone-TLM of uptime `deciseconds` (3000 mV, 25.5 °C, count 10000).
    func tlm(_ deciseconds: UInt32, at ms: Int64 = 0, address: [UInt8] = [0x66, 0x55, 0x44, 0x33, 0x22, 0x11]) -> Sighting {
        let up = hexString([UInt8(deciseconds >> 24), UInt8(deciseconds >> 16 & 0xff), UInt8(deciseconds >> 8 & 0xff), UInt8(deciseconds & 0xff)])
        return monitorSighting("020106 0303aafe 1116aafe 20 00 0bb8 1980 00002710 " + up, atMs: ms, address: address)
    }

    func testHeardSilentHeard() {
        var t = BeaconTracker(expectations: [lobby], silentAfterMs: 10_000, startMs: 1000)
        XCTAssertEqual(t.states, [BeaconState(name: "lobby")])
        XCTAssertFalse(t.allHeard)
        XCTAssertEqual(t.nextDeadlineMs, 11_000, "never heard: silent_after_s after start")
        XCTAssertEqual(t.record(alt(at: 2000, rssi: -61), wallSeconds: wall), [.heard(name: "lobby", first: true)])
        XCTAssertEqual(t.record(alt(at: 3000, rssi: -59), wallSeconds: wall + 1), [], "already heard: no event")
        var expected = BeaconState(name: "lobby")
        expected.heard = true; expected.everHeard = true
        expected.lastSeenMs = 3000; expected.lastSeenWall = wall + 1
        expected.adverts = 2; expected.rssi = -60; expected.address = "11:22:33:44:55:66"
        XCTAssertEqual(t.states, [expected])
        XCTAssertTrue(t.allHeard)
        XCTAssertEqual(t.nextDeadlineMs, 13_000)
        XCTAssertEqual(t.tick(now: 12_999), [])
        XCTAssertEqual(t.tick(now: 13_000), [.silent(name: "lobby", lastSeenWall: wall + 1)])
        XCTAssertFalse(t.states[0].heard)
        XCTAssertTrue(t.states[0].everHeard)
        XCTAssertNil(t.states[0].rssi, "a silent beacon's RSSI is not known")
        XCTAssertEqual(t.states[0].lastSeenWall, wall + 1, "kept")
        XCTAssertNil(t.nextDeadlineMs, "nothing pending while silent")
        XCTAssertEqual(t.tick(now: 50_000), [], "silent once")
        XCTAssertEqual(t.record(alt(at: 60_000, rssi: -70), wallSeconds: wall + 60), [.heard(name: "lobby", first: false)])
        XCTAssertEqual(t.states[0].rssi, -70, "samples from before the silence are forgotten")
        XCTAssertEqual(t.states[0].adverts, 3)
        XCTAssertEqual(t.nextDeadlineMs, 70_000)
    }

    func testNeverHeardGoesSilentOnce() {
        var t = BeaconTracker(expectations: [lobby, hall], silentAfterMs: 10_000, startMs: 0)
        XCTAssertEqual(t.tick(now: 5000), [])
        XCTAssertEqual(t.record(alt(at: 5000), wallSeconds: wall), [.heard(name: "lobby", first: true)])
        XCTAssertEqual(t.nextDeadlineMs, 10_000, "hall's start deadline comes first")
        XCTAssertEqual(t.tick(now: 10_000), [.silent(name: "hall", lastSeenWall: nil)])
        XCTAssertEqual(t.nextDeadlineMs, 15_000, "hall is reported: only lobby's deadline is left")
        XCTAssertEqual(t.tick(now: 10_001), [])
        XCTAssertFalse(t.allHeard)
        XCTAssertEqual(t.tick(now: 15_000), [.silent(name: "lobby", lastSeenWall: wall)])
        XCTAssertEqual(t.tick(now: 99_000), [])
        XCTAssertEqual(t.record(uid(at: 100_000), wallSeconds: wall + 95), [.heard(name: "hall", first: true)])
        XCTAssertEqual(t.states.map(\.heard), [false, true])
        // Both silent at one tick: events in expectation order.
        XCTAssertEqual(t.record(alt(at: 100_000), wallSeconds: wall + 95), [.heard(name: "lobby", first: false)])
        XCTAssertTrue(t.allHeard)
        XCTAssertEqual(t.tick(now: 200_000), [.silent(name: "lobby", lastSeenWall: wall + 95), .silent(name: "hall", lastSeenWall: wall + 95)])
    }

    func testHeardBeforeTheStartDeadlineIsNeverReportedSilentFromStart() {
        var t = BeaconTracker(expectations: [lobby], silentAfterMs: 10_000, startMs: 0)
        _ = t.record(alt(at: 9000), wallSeconds: wall)
        XCTAssertEqual(t.tick(now: 10_000), [])
        XCTAssertEqual(t.tick(now: 19_000), [.silent(name: "lobby", lastSeenWall: wall)])
    }

    func testOtherSightingsChangeNothing() {
        var t = BeaconTracker(expectations: [lobby, hall], silentAfterMs: 10_000, startMs: 0)
        let before = t.states
        XCTAssertEqual(t.record(monitorSighting(FrameTests.ibeaconHex), wallSeconds: wall), [], "same IDs, other frame type")
        XCTAssertEqual(t.record(monitorSighting(FrameTests.urlHex), wallSeconds: wall), [])
        XCTAssertEqual(t.record(tlm(3600), wallSeconds: wall), [], "a TLM from an address no expected beacon used")
        XCTAssertEqual(t.states, before)
        XCTAssertEqual(t.advertsTotal, 0, "only countAdvert counts reports")
    }

    func testAdvertsTotal() {
        var t = BeaconTracker(expectations: [lobby], silentAfterMs: 10_000, startMs: 0)
        for _ in 0..<3 { t.countAdvert() }
        _ = t.record(alt(at: 1), wallSeconds: wall)
        XCTAssertEqual(t.advertsTotal, 3)
        XCTAssertEqual(t.states[0].adverts, 1)
    }

    func testTrimmedMean() {
        var w = RSSIWindow()
        XCTAssertNil(w.trimmedMean)
        w.add(127)
        XCTAssertNil(w.trimmedMean, "127: not available")
        XCTAssertEqual(w.count, 0)
        for v in [-60, -62, -64] { w.add(v) }
        XCTAssertEqual(w.trimmedMean, -62, "fewer than 10 samples: all of them")
        // 10 samples: 1 dropped at each end. The plain mean would be -62.
        w = RSSIWindow()
        for v in [-50] + Array(repeating: -60, count: 8) + [-90] { w.add(v) }
        XCTAssertEqual(w.trimmedMean, -60)
        // 20 samples -41...-60: the 2 highest and 2 lowest go, (-43 + ... + -58) / 16 = -50.5.
        w = RSSIWindow()
        for v in stride(from: -41, through: -60, by: -1) { w.add(v) }
        XCTAssertEqual(w.count, 20)
        XCTAssertEqual(w.trimmedMean, -50.5)
        // 19 samples: 1 at each end; -41...-59 without -41 and -59: -50.
        w = RSSIWindow()
        for v in stride(from: -41, through: -59, by: -1) { w.add(v) }
        XCTAssertEqual(w.trimmedMean, -50)
        // Only the last 20 count: five -100s, then -41...-60, leave the same window as above.
        w = RSSIWindow()
        for _ in 0..<5 { w.add(-100) }
        for v in stride(from: -41, through: -60, by: -1) { w.add(v) }
        XCTAssertEqual(w.count, 20)
        XCTAssertEqual(w.trimmedMean, -50.5)
        // One outlier among 20 steady readings leaves no trace: -70 x 19, then -30.
        w = RSSIWindow()
        for _ in 0..<19 { w.add(-70) }
        w.add(-30)
        XCTAssertEqual(w.trimmedMean, -70)
        w.add(127)
        XCTAssertEqual(w.trimmedMean, -70, "127 does not push a sample out")
        // 12 samples: cut 1 at each end: -61 -62 ... -70 over 10... (-60...-71): (-61 + -70) / 2 = -65.5.
        w = RSSIWindow()
        for v in stride(from: -60, through: -71, by: -1) { w.add(v) }
        XCTAssertEqual(w.trimmedMean, -65.5)
    }

    func testUnavailableRSSIIsNotCounted() {
        var t = BeaconTracker(expectations: [lobby], silentAfterMs: 10_000, startMs: 0)
        XCTAssertEqual(t.record(alt(at: 1, rssi: 127), wallSeconds: wall), [.heard(name: "lobby", first: true)])
        XCTAssertNil(t.states[0].rssi, "heard, but the controller cannot measure RSSI")
        XCTAssertEqual(t.states[0].adverts, 1)
        _ = t.record(alt(at: 2, rssi: -64), wallSeconds: wall)
        _ = t.record(alt(at: 3, rssi: 127), wallSeconds: wall)
        _ = t.record(alt(at: 4, rssi: -66), wallSeconds: wall)
        XCTAssertEqual(t.states[0].rssi, -65)
        XCTAssertEqual(t.states[0].adverts, 4)
    }

    func testTLMByAddressAndReboots() {
        var t = BeaconTracker(expectations: [hall], silentAfterMs: 10_000, startMs: 0)
        XCTAssertEqual(t.record(tlm(3600), wallSeconds: wall), [], "no expected beacon heard from that address yet")
        XCTAssertNil(t.states[0].tlm)
        _ = t.record(uid(at: 1), wallSeconds: wall)
        XCTAssertEqual(t.record(tlm(3600, at: 2), wallSeconds: wall), [])
        XCTAssertEqual(t.states[0].tlm, TLMReading(uptimeS: 360, advertCount: 10_000, temperatureC: 25.5, batteryMV: 3000))
        XCTAssertEqual(t.states[0].adverts, 1, "a TLM frame is not the expected frame")
        XCTAssertEqual(t.record(tlm(3610, at: 3), wallSeconds: wall), [])
        XCTAssertEqual(t.record(tlm(3610, at: 4), wallSeconds: wall), [], "the same uptime twice is no reboot")
        XCTAssertEqual(t.record(tlm(5, at: 5, address: otherAddress), wallSeconds: wall), [], "another sender")
        XCTAssertEqual(t.states[0].tlm?.uptimeS, 361)
        XCTAssertEqual(t.record(tlm(10, at: 6), wallSeconds: wall), [.rebooted(name: "hall", uptimeS: 1)])
        XCTAssertEqual(t.states[0].reboots, 1)
        XCTAssertEqual(t.states[0].tlm?.uptimeS, 1)
        // The beacon now sends from another address: its TLM follows.
        _ = t.record(uid(at: 7, address: otherAddress), wallSeconds: wall)
        XCTAssertEqual(t.states[0].address, "AA:00:00:00:00:01")
        XCTAssertEqual(t.record(tlm(20, at: 8), wallSeconds: wall), [], "the old address is no longer the beacon's")
        XCTAssertEqual(t.record(tlm(0, at: 9, address: otherAddress), wallSeconds: wall), [.rebooted(name: "hall", uptimeS: 0)])
        XCTAssertEqual(t.states[0].reboots, 2)
        // "Not supported" readings.
        _ = t.record(monitorSighting(FrameTests.tlmZeroHex, address: otherAddress), wallSeconds: wall)
        XCTAssertEqual(t.states[0].tlm, TLMReading(uptimeS: 0, advertCount: 0, temperatureC: nil, batteryMV: nil))
    }

    /// A beacon expected by two frames (AltBeacon and iBeacon) from one address: its TLM goes to both.
    func testTLMGoesToEveryExpectationOfThatAddress() {
        let ib = Expectation(name: "lobby-ios", frame: IBeaconFrame(uuid: studyGuideUUID, major: 1, minor: 2, power: -59))
        var t = BeaconTracker(expectations: [lobby, ib], silentAfterMs: 10_000, startMs: 0)
        XCTAssertEqual(t.record(alt(at: 1), wallSeconds: wall), [.heard(name: "lobby", first: true)])
        XCTAssertEqual(t.record(monitorSighting(FrameTests.ibeaconHex, atMs: 2), wallSeconds: wall), [.heard(name: "lobby-ios", first: true)])
        _ = t.record(tlm(100), wallSeconds: wall)
        XCTAssertEqual(t.record(tlm(50), wallSeconds: wall), [.rebooted(name: "lobby", uptimeS: 5), .rebooted(name: "lobby-ios", uptimeS: 5)])
        XCTAssertEqual(t.states.map(\.reboots), [1, 1])
    }

    func testTLMReadingFromTelemetry() {
        XCTAssertEqual(TLMReading(Telemetry(uptimeDeciseconds: 13275, advertisingCount: 5310, temperature: 0x3050, batteryMillivolts: 0)),
                       TLMReading(uptimeS: 1327.5, advertCount: 5310, temperatureC: 48.3125, batteryMV: nil))
        XCTAssertEqual(TLMReading(Telemetry(uptimeDeciseconds: 1, advertisingCount: 1, temperature: -256, batteryMillivolts: 2900)),
                       TLMReading(uptimeS: 0.1, advertCount: 1, temperatureC: -1, batteryMV: 2900))
    }

    func testClockExtremesDoNotTrap() {
        var t = BeaconTracker(expectations: [lobby], silentAfterMs: 10_000, startMs: .max - 5)
        XCTAssertEqual(t.nextDeadlineMs, .max)
        XCTAssertEqual(t.tick(now: .min), [])
        _ = t.record(alt(at: .max), wallSeconds: wall)
        XCTAssertEqual(t.tick(now: .max), [.silent(name: "lobby", lastSeenWall: wall)])
    }
}
