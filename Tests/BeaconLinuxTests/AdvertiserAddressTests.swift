import BeaconKit
import XCTest
@testable import BeaconLinux

/// Frames sent from the board's static random address when the adapter keeps a chip default
/// public address (SPEC §11): the scripted controller refuses a random address while legacy
/// advertising is on, and an enable whose parameters say "random" before any random address is
/// set, as the Core spec says; so the order of the commands is checked, not only their presence.
final class AdvertiserAddressTests: ScriptedTestCase {
    let random = BoardAddress.staticRandom(serial: 0xa1b2_c3d4)

    func testLegacyFramesGoOutFromTheStaticRandomAddress() throws {
        let c = controller(legacy: true)
        c.advertisingAddress = random
        let a = advertiser(c)
        let frames = TestBeacons.three()
        XCTAssertEqual(try XCTUnwrap(arm(a, TestBeacons.config(frames))).get(), AirSummary(rotates: true), dumpLog())
        XCTAssertEqual(c.onAir, [TestBeacons.payloads(frames)[0]])
        XCTAssertEqual(c.legacyRandomAddress, random.bytes)
        XCTAssertTrue(c.legacyOwnRandom)
        // A second arm (an edit) while advertising: disabled before the address is set again.
        XCTAssertNoThrow(try XCTUnwrap(arm(a, TestBeacons.config(TestBeacons.three(major: 9)))).get(), dumpLog())
        XCTAssertEqual(c.count(.leSetRandomAddress), 2)
        XCTAssertTrue(c.legacyOwnRandom)
        XCTAssertEqual(c.onAir, [TestBeacons.payloads(TestBeacons.three(major: 9))[0]])
    }

    func testRotationKeepsTheRandomAddressThroughTheGATTIdentitysTurn() throws {
        let c = controller(legacy: true)
        c.advertisingAddress = random
        let a = advertiser(c)
        var config = TestBeacons.config()
        config.gattIdentity = GATTIdentity(identifier: "2F234454-CF6D-4A0F-ADF2-F4911BA9FFA6")
        XCTAssertNoThrow(try XCTUnwrap(arm(a, config)).get(), dumpLog())
        for _ in 0..<3 {
            var done = false
            a.rotate { XCTAssertNil($0); done = true }
            loop.run(atMostMs: 1000) { done }
            XCTAssertTrue(done)
            XCTAssertTrue(c.legacyOwnRandom, "parameters set again for a connectable turn keep the random address")
            XCTAssertTrue(c.legacyEnabled)
        }
        XCTAssertGreaterThan(c.count(.leSetAdvertisingParameters), 1, "the rotation crossed a connectable turn")
    }

    func testEachExtendedSetGetsTheRandomAddressBeforeItIsEnabled() throws {
        let c = controller(sets: 4)
        c.advertisingAddress = random
        let a = advertiser(c)
        let frames = TestBeacons.three()
        XCTAssertEqual(try XCTUnwrap(arm(a, TestBeacons.config(frames))).get(), AirSummary(), dumpLog())
        XCTAssertEqual(c.onAir, TestBeacons.payloads(frames))
        XCTAssertEqual(c.sets.count, 3)
        for (h, s) in c.sets {
            XCTAssertTrue(s.ownRandom, "set \(h)")
            XCTAssertEqual(s.randomAddress, random.bytes, "set \(h)")
        }
        XCTAssertEqual(c.count(.leSetRandomAddress), 0, "sets carry their own address")
    }

    func testARandomAddressRefusedWhileAnotherProgramScansLeavesTheFramesOnAirFromThePublicOne() throws {
        let c = controller(legacy: true)
        c.advertisingAddress = random
        c.scanning = true
        let a = advertiser(c)
        XCTAssertNoThrow(try XCTUnwrap(arm(a, TestBeacons.config())).get(), dumpLog())
        XCTAssertEqual(c.onAir, [TestBeacons.payload()])
        XCTAssertFalse(c.legacyOwnRandom, "sent from the public address this time")
        XCTAssertNoThrow(try XCTUnwrap(arm(a, TestBeacons.config(major: 5))).get(), dumpLog())
        XCTAssertEqual(logLines.count("refused its static random address FC:C6:7E:34:4D:0D"), 1, "said once")
        // The scan ends: the next arm sends from the random address again.
        c.scanning = false
        XCTAssertNoThrow(try XCTUnwrap(arm(a, TestBeacons.config(major: 6))).get(), dumpLog())
        XCTAssertTrue(c.legacyOwnRandom)
        XCTAssertEqual(c.legacyRandomAddress, random.bytes)
        XCTAssertEqual(c.onAir, [TestBeacons.payload(major: 6)])
    }

    func testWithoutARandomAddressNothingChanges() throws {
        let c = controller(legacy: true)
        let a = advertiser(c)
        XCTAssertNoThrow(try XCTUnwrap(arm(a, TestBeacons.config())).get())
        XCTAssertEqual(c.count(.leSetRandomAddress), 0)
        XCTAssertFalse(c.legacyOwnRandom)
        let e = controller(index: 1, sets: 4)
        let b = advertiser(e)
        XCTAssertNoThrow(try XCTUnwrap(arm(b, TestBeacons.config(TestBeacons.three(), adapter: 1))).get())
        XCTAssertEqual(e.count(.leSetAdvertisingSetRandomAddress), 0)
        XCTAssertEqual(e.sets.values.map(\.ownRandom), [false, false, false])
    }
}
