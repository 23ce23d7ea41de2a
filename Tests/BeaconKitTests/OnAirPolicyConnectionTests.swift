import XCTest
@testable import BeaconKit

/// The GATT identity's connections in the on-air policy: one central at a time, the identity
/// left out of the arm while it is connected, back at the disconnection, the 30 s limit, and
/// none of it counted as a fault.
final class OnAirPolicyConnectionTests: PolicyTestCase {
    override func setUp() {
        s = OnAirPolicy(config: PolicyTestCase.make("[gatt_identity]"), generation: 1)
    }

    func testTheIdentityIsArmedWithTheFramesLast() {
        let a = on(.start)
        guard let (c, _) = armedConfig(in: a) else { return XCTFail("no arm") }
        XCTAssertEqual(c.airFrames().map(\.name), ["altbeacon", "gatt-identity"])
        XCTAssertTrue(c.airFrames().last?.frame.isConnectable == true)
        XCTAssertEqual(c.airFrames().last?.frame.scanResponseData, [0x0a, 0x09] + Array("AltBeacon".utf8))
    }

    func testAConnectionRearmsWithoutTheIdentityQuietlyAndTheDisconnectionBringsItBack() {
        onAir()
        let a = on(.centralConnected(handle: 42), after: 1000)
        XCTAssertEqual(arm(in: a), .parameters)
        XCTAssertEqual(scheduled(.connectionLimit, in: a), CentralConnections.limitMs)
        guard let (c, _) = armedConfig(in: a) else { return XCTFail("no arm") }
        XCTAssertNil(c.gattIdentity, "the identity is not advertised while a central is connected")
        XCTAssertEqual(c.airFrames().map(\.name), ["altbeacon"])
        let back = armed()
        XCTAssertFalse(back.contains { if case .confirmed(_, true) = $0 { return true } else { return false } },
                       "no 'on air' line per connection")
        XCTAssertEqual(s.totalRearms, 0)
        XCTAssertEqual(s.phase, .advertising)
        // A second connection event for the same link changes nothing.
        XCTAssertEqual(on(.centralConnected(handle: 42)), [])
        let d = on(.centralDisconnected(handle: 42), after: 800)
        XCTAssertEqual(arm(in: d), .parameters)
        XCTAssertTrue(d.contains(.cancel(.connectionLimit)))
        XCTAssertEqual(armedConfig(in: d)?.0.gattIdentity, s.config.gattIdentity)
        armed()
        XCTAssertEqual(s.totalRearms, 0)
        XCTAssertEqual(s.ladderFailures, 0)
        XCTAssertEqual(on(.centralDisconnected(handle: 42)), [], "an unknown link's end is ignored")
    }

    func testACentralThatHoldsOnIsDisconnectedAfterThirtySecondsAndAskedAgainIfItStays() {
        onAir()
        on(.centralConnected(handle: 7))
        armed()
        XCTAssertEqual(on(.timer(.connectionLimit), after: 10_000), [.schedule(.connectionLimit, afterMs: 20_000)],
                       "an early timer disconnects nobody")
        let a = on(.timer(.connectionLimit), after: 20_000)
        XCTAssertTrue(a.contains(.disconnect(handle: 7)))
        XCTAssertEqual(scheduled(.connectionLimit, in: a), CentralConnections.disconnectRetryMs)
        XCTAssertTrue(on(.timer(.connectionLimit), after: CentralConnections.disconnectRetryMs).contains(.disconnect(handle: 7)))
        XCTAssertEqual(arm(in: on(.centralDisconnected(handle: 7))), .parameters)
    }

    func testAnArmRefusedWhileConnectedWaitsForTheDisconnectionWithoutTheLadder() {
        onAir()
        on(.centralConnected(handle: 3))
        let refused = armed(.rejected("LE Set Advertise Enable: Command Disallowed (0x0c)"))
        XCTAssertEqual(s.phase, .fault(.connected))
        XCTAssertNil(scheduled(.rearm, in: refused), "no retry until the central leaves")
        XCTAssertEqual(s.ladderFailures, 0)
        XCTAssertEqual(s.consecutiveFailures, 0)
        let back = on(.centralDisconnected(handle: 3), after: 2000)
        XCTAssertEqual(arm(in: back), .parameters)
        armed()
        XCTAssertEqual(s.phase, .advertising)
    }

    func testAConnectionDuringAnArmIsTakenByTheNextArm() {
        on(.start)
        XCTAssertNil(arm(in: on(.centralConnected(handle: 9))), "the arm in flight goes on")
        let next = armed()
        guard let (c, _) = armedConfig(in: next) else { return XCTFail("the connection did not re-arm") }
        XCTAssertNil(c.gattIdentity)
    }

    func testTheAdapterGoingDownForgetsTheLinks() {
        onAir()
        on(.centralConnected(handle: 5))
        armed()
        let a = on(.adapterDown)
        XCTAssertTrue(a.contains(.cancel(.connectionLimit)))
        XCTAssertTrue(s.connections.isEmpty)
        XCTAssertEqual(s.airConfig.gattIdentity, s.config.gattIdentity)
    }

    func testWithoutTheIdentityAConnectionIsOnlyTimed() {
        s = OnAirPolicy(config: PolicyTestCase.make(), generation: 1)
        onAir()
        let a = on(.centralConnected(handle: 1))
        XCTAssertNil(arm(in: a))
        XCTAssertEqual(scheduled(.connectionLimit, in: a), CentralConnections.limitMs)
    }
}
