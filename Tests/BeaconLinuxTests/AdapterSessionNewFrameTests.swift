import BeaconKit
import XCTest
@testable import BeaconLinux

/// Frames in turn on a legacy-only controller: a frame switched on (from afar, or by an edit)
/// goes on air first, not a whole rotation later (issue 32: heard within 1 s).
final class AdapterSessionNewFrameTests: ScriptedTestCase {
    func testANewFrameStartsTheRotation() {
        let c = controller(legacy: true)
        let p = session(c, TestBeacons.config([TestBeacons.altBeacon()]))
        p.session.start()
        XCTAssertNotNil(msUntil(c, airs: [TestBeacons.payload()], atMostMs: 5000))
        loop.run(forMs: 500)
        let ibeacon = TestBeacons.iBeacon().frame.advertisingData(.zero)
        p.session.configChanged(TestBeacons.config([TestBeacons.altBeacon(), TestBeacons.iBeacon()]), generation: 2)
        let ms = msUntil(c, airs: [ibeacon], atMostMs: 5000)
        XCTAssertNotNil(ms, dumpLog())
        XCTAssertLessThan(ms ?? .max, 500, "the new frame's turn comes first (rotation_ms is 1000)")
        // Then the rotation goes on as usual, the AltBeacon frame in its turn.
        XCTAssertNotNil(msUntil(c, airs: [TestBeacons.payload()], atMostMs: 3000))
        XCTAssertNotNil(msUntil(c, airs: [ibeacon], atMostMs: 3000))
    }

    func testTheSameFramesStartAtTheFirst() {
        let c = controller(legacy: true)
        let two = [TestBeacons.altBeacon(), TestBeacons.iBeacon()]
        let p = session(c, TestBeacons.config(two))
        p.session.start()
        let first = c.airHistory.count
        XCTAssertNotNil(msUntil(c, airs: [TestBeacons.payload()], atMostMs: 5000))
        XCTAssertEqual(c.airHistory.dropFirst(first).first { !$0.air.isEmpty }?.air, [TestBeacons.payload()], "the first frame first")
    }
}
