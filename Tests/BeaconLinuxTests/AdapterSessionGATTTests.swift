import BeaconKit
import XCTest
@testable import BeaconLinux

/// The GATT identity on a scripted controller: connectable advertising beside the frames, a
/// central's connection and its end, the 30 s limit, end to end through the session.
final class AdapterSessionGATTTests: ScriptedTestCase {
    let identity = GATTIdentity(identifier: "2F234454-CF6D-4A0F-ADF2-F4911BA9FFA6")

    func config() -> BeaconConfig {
        var c = TestBeacons.config(rotationMs: 300)
        c.gattIdentity = identity
        return c
    }

    func testSetsTheIdentityGetsAConnectableSetOfItsOwnWithItsScanResponse() {
        let c = controller(sets: 4)
        let p = session(c, config())
        p.session.start()
        XCTAssertNotNil(msUntil(c, airs: [TestBeacons.payload(), identity.advertisingData], atMostMs: 5000), dumpLog())
        XCTAssertEqual(c.sets[3]?.connectable, false, "the AltBeacon frame stays ADV_NONCONN_IND")
        XCTAssertEqual(c.sets[2]?.connectable, true)
        XCTAssertEqual(c.sets[2]?.scanResponse, identity.scanResponse)
    }

    func testLegacyTheIdentityTakesItsTurnAsADVINDAndTheFrameGoesBackToNonConnectable() {
        let c = controller(legacy: true)
        let p = session(c, config())
        p.session.start()
        XCTAssertNotNil(msUntil(c, airs: [TestBeacons.payload()], atMostMs: 5000))
        XCTAssertFalse(c.legacyConnectable)
        XCTAssertTrue(loop.run(atMostMs: 2000) { c.onAir == [identity.advertisingData] }, dumpLog())
        XCTAssertTrue(c.legacyConnectable, "ADV_IND in the identity's turn")
        XCTAssertEqual(c.legacyScanResponse, identity.scanResponse)
        XCTAssertTrue(loop.run(atMostMs: 2000) { c.onAir == [TestBeacons.payload()] })
        XCTAssertFalse(c.legacyConnectable, "ADV_NONCONN_IND again for the AltBeacon frame")
    }

    func testAConnectionKeepsTheFramesOnAirAndTheIdentityComesBackAfterIt() {
        for legacy in [true, false] {
            freshLoop()
            let c = controller(legacy: legacy)
            let p = session(c, config())
            p.session.start()
            loop.run(forMs: 3000)
            XCTAssertTrue(loop.run(atMostMs: 2000) { c.onAir.contains(identity.advertisingData) })
            c.centralConnects(handle: 42)
            XCTAssertNotNil(msUntil(c, airs: [TestBeacons.payload()], atMostMs: 1000), "frames back at once (legacy: \(legacy))")
            // (A probe already in flight may re-enable the last data for a moment; the re-arm's
            // disable follows at once. From the re-arm on, never again.)
            loop.run(forMs: 200)
            XCTAssertEqual(c.onAir, [TestBeacons.payload()])
            let settled = c.airHistory.count
            loop.run(forMs: 10_000)
            XCTAssertFalse(c.airHistory[settled...].contains { $0.air.contains(identity.advertisingData) },
                           "no connectable advertising while the central is connected")
            if !legacy { XCTAssertNotNil(c.sets[3], "the AltBeacon frame kept its set") }
            c.linkEnds(handle: 42)
            XCTAssertTrue(loop.run(atMostMs: 2000) { c.onAir.contains(identity.advertisingData) }, dumpLog())
            loop.run(forMs: 1000)
            XCTAssertEqual(p.session.policy.totalRearms, 0, "a connection is not a fault")
            XCTAssertEqual(p.session.policy.ladderFailures, 0)
            XCTAssertEqual(p.phase, .advertising)
        }
    }

    func testACentralHoldingOnIsDisconnectedThroughTheKernelAfterThirtySeconds() {
        let c = controller(legacy: true)
        let p = session(c, config())
        p.session.start()
        loop.run(forMs: 3000)
        c.centralConnects(handle: 7, peer: [0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff])
        loop.run(forMs: 29_000)
        XCTAssertEqual(c.disconnectRequests.count, 0)
        loop.run(forMs: 1_500)
        XCTAssertEqual(c.disconnectRequests, [[0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff]])
        XCTAssertEqual(p.released, [[0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff]], "the ATT channel goes before the link")
        XCTAssertTrue(p.session.policy.connections.isEmpty)
        XCTAssertTrue(loop.run(atMostMs: 2000) { c.onAir.contains(identity.advertisingData) })
    }

    /// A controller that answers Command Disallowed to every enable while a central is connected:
    /// not taken for "already enabled" (the parameters were just accepted, so advertising was
    /// off). The frames wait for the disconnection, the phase says so, no fault is counted, and
    /// everything is back after it.
    /// Another program's GATT server on the beacon's adapter (issue 30): its central is neither
    /// tracked nor disconnected, and the frames stay as they are.
    func testACentralOfAnotherProgramIsLeftConnected() {
        let c = controller()
        let p = session(c, TestBeacons.config(TestBeacons.three()))
        p.session.start()
        loop.run(forMs: 3000)
        XCTAssertEqual(p.phase, .advertising)
        let armsBefore = c.count(.leSetExtendedAdvertisingParameters)
        c.centralConnects(handle: 5, peer: [0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff])
        loop.run(forMs: 40_000)
        XCTAssertEqual(c.disconnectRequests, [], "not ours to cut")
        XCTAssertTrue(p.session.policy.connections.isEmpty)
        XCTAssertEqual(c.count(.leSetExtendedAdvertisingParameters), armsBefore, "nothing re-armed for it")
        XCTAssertEqual(c.onAir, TestBeacons.payloads(TestBeacons.three()))
    }

    func testAnEnableRefusedWhileConnectedWaitsForTheDisconnection() {
        for legacy in [true, false] {
            freshLoop()
            let c = controller(legacy: legacy)
            c.refusesEnableWhileConnected = true
            let p = session(c, config())
            p.session.start()
            loop.run(forMs: 3000)
            XCTAssertTrue(loop.run(atMostMs: 2000) { c.onAir.contains(identity.advertisingData) })
            c.centralConnects(handle: 42)
            XCTAssertTrue(loop.run(atMostMs: 2000) { p.phase == .fault(.connected) }, "legacy: \(legacy)\n" + dumpLog())
            loop.run(forMs: 5000)
            XCTAssertEqual(c.onAir, [], "the controller advertises nothing beside the link")
            XCTAssertEqual(p.phase, .fault(.connected), "still waiting, not climbing the ladder")
            XCTAssertEqual(p.session.policy.ladderFailures, 0)
            c.linkEnds(handle: 42)
            XCTAssertNotNil(msUntil(c, airs: [TestBeacons.payload()], atMostMs: 2000), dumpLog())
            XCTAssertTrue(loop.run(atMostMs: 2000) { c.onAir.contains(identity.advertisingData) })
            XCTAssertTrue(loop.run(atMostMs: 2000) { p.phase == .advertising }, dumpLog())
            XCTAssertEqual(p.session.policy.totalRearms, 0, "a connection is not a fault")
        }
    }

    func testStopDisconnectsTheCentralAndTakesEverythingOffAir() {
        let c = controller(sets: 4)
        let p = session(c, config())
        p.session.start()
        loop.run(forMs: 3000)
        c.centralConnects(handle: 9)
        loop.run(forMs: 500)
        var done = false
        p.session.retire(commandTimeoutMs: 1000, deadlineMs: 5000) { _ in done = true }
        XCTAssertTrue(loop.run(atMostMs: 6000) { done })
        XCTAssertEqual(c.disconnectRequests, [[1, 2, 3, 4, 5, 6]])
        XCTAssertEqual(c.onAir, [])
    }
}
