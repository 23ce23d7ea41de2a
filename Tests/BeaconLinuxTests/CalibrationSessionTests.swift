import BeaconKit
import XCTest
@testable import BeaconLinux

/// `calibrate`'s session (issue 40: out of the executable) on the virtual clock with a fake radio:
/// the samples of the given seconds, no more; a signal, a lost adapter, a start that fails.
final class CalibrationSessionTests: XCTestCase {
    var loop: EventLoop!
    var radio: ScanSessionTests.FakeRadio!

    override func setUp() {
        loop = EventLoop(clock: LoopClock(virtualStartingAt: 0))
        radio = ScanSessionTests.FakeRadio(loop: loop)
    }

    func altbeacon(rssi: Int8) -> AdvertisingReport {
        AdvertisingReport(eventType: 3, addressType: 0, address: [7, 2, 3, 4, 5, 6], rssi: rssi,
                          data: AltBeacon.advertisingData(BeaconIdentity(uuid: Array(repeating: 0x2f, count: 16), major: 1, minor: 2)))
    }


    func testTheSamplesOfTheGivenSecondsThenTheFigures() throws {
        let s = CalibrationSession(seconds: 10, scanner: radio, loop: loop)
        var scanningAt: Int64?
        s.start { scanningAt = self.loop.now }
        loop.turn(forMs: 10)
        XCTAssertEqual(scanningAt, 0)
        XCTAssertEqual(radio.calls, ["start active=false"], "passive: nothing sent on air")
        for _ in 0..<12 { radio.hear([altbeacon(rssi: -63)]) }
        loop.turn(forMs: 9000)
        radio.hear([altbeacon(rssi: -61)])
        loop.turn(forMs: 2000)
        XCTAssertTrue(loop.isStopped)
        XCTAssertEqual(radio.calls.last, "stop@10000", "scanning off when the time is up")
        radio.hear([altbeacon(rssi: -20)])   // a late report: not a sample
        XCTAssertEqual(s.outcome, .done)
        let r = try XCTUnwrap(s.calibration.results.first)
        XCTAssertEqual(r.samples, 13)
        XCTAssertEqual(r.type, "altbeacon")
    }

    func testASignalEndsItWithoutFigures() {
        let s = CalibrationSession(seconds: 10, scanner: radio, loop: loop)
        s.start {}
        loop.turn(forMs: 1000)
        s.interrupt()
        loop.turn(forMs: 1000)
        XCTAssertTrue(loop.isStopped)
        XCTAssertEqual(s.outcome, .interrupted)
    }

    func testALostAdapterAndAFailedStartAreTheOutcome() {
        let s = CalibrationSession(seconds: 10, scanner: radio, loop: loop)
        s.start {}
        loop.turn(forMs: 1000)
        radio.delegate?.scanner(.lost(.noDevice))
        loop.turn(forMs: 1000)
        XCTAssertEqual(s.outcome, .adapterLost(.noDevice))

        setUp()
        radio.startFailure = .permission
        let t = CalibrationSession(seconds: 10, scanner: radio, loop: loop)
        var scanning = false
        t.start { scanning = true }
        loop.turn(forMs: 1000)
        XCTAssertTrue(loop.isStopped)
        XCTAssertFalse(scanning)
        XCTAssertEqual(t.outcome, .couldNotStart(.permission))
    }
}
