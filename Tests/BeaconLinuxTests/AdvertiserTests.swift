import BeaconKit
import XCTest
@testable import BeaconLinux

/// The advertiser against a scripted controller (SPEC §3): what a receiver hears after each sequence.
final class AdvertiserTests: ScriptedTestCase {
    func testLegacyArmPutsOneFrameOnAirWithTheStudyGuideParameters() throws {
        let c = controller(legacy: true)
        let a = advertiser(c)
        XCTAssertEqual(try XCTUnwrap(arm(a, TestBeacons.config())).get(), AirSummary())
        XCTAssertEqual(c.onAir, [TestBeacons.payload()])
        XCTAssertEqual(c.legacyIntervalUnits, 160)
        XCTAssertEqual(a.effectiveIntervalMs, 100)
        XCTAssertEqual(a.mode, "legacy")
        XCTAssertEqual(c.count(.leSetExtendedAdvertisingParameters), 0)
        XCTAssertEqual(c.count(.leClearAdvertisingSets), 0, "no extended command to a 4.0 controller")
    }

    func testExtendedArmPutsThreeSetsOnAirWithTheRightPayloads() throws {
        let c = controller(sets: 4)
        let a = advertiser(c)
        let frames = TestBeacons.three()
        XCTAssertEqual(try XCTUnwrap(arm(a, TestBeacons.config(frames))).get(), AirSummary())
        XCTAssertEqual(c.onAir, TestBeacons.payloads(frames))
        XCTAssertEqual(Set(c.sets.keys), [3, 2, 1], "handles counted down from the highest")
        XCTAssertFalse(c.legacyEnabled)
        XCTAssertEqual(c.count(.leClearAdvertisingSets), 1, "sets of a previous process cleared at the first arm")
        XCTAssertEqual(a.mode, "extended, sets 3 2 1")
    }

    func testLegacyOnlyControllerRotatesThreeFrames() throws {
        let c = controller(legacy: true)
        let a = advertiser(c)
        let frames = TestBeacons.three()
        let payloads = TestBeacons.payloads(frames)
        XCTAssertEqual(try XCTUnwrap(arm(a, TestBeacons.config(frames))).get(), AirSummary(rotates: true))
        XCTAssertEqual(c.onAir, [payloads[0]])
        var heard: [[UInt8]] = []
        for _ in 0..<4 {
            var done = false
            a.rotate { XCTAssertNil($0); done = true }
            loop.run(atMostMs: 1000) { done }
            heard += c.onAir
        }
        XCTAssertEqual(heard, [payloads[1], payloads[2], payloads[0], payloads[1]])
        XCTAssertEqual(a.mode, "legacy, 3 frames in turn")
    }

    func testCommandDisallowedOnLegacyFallsBackToExtended() throws {
        let c = controller(sets: 4)
        c.enforcesCommandKinds = true   // Bluetooth 5: legacy refused once extended commands were used
        let a = advertiser(c)
        XCTAssertNoThrow(try XCTUnwrap(arm(a, TestBeacons.config())).get())
        XCTAssertEqual(c.onAir, [TestBeacons.payload()])
        XCTAssertEqual(Array(c.sets.keys), [3])
        XCTAssertFalse(c.legacyEnabled)
        XCTAssertGreaterThan(c.count(.leSetAdvertisingParameters), 0, "legacy was tried first for one frame")
        XCTAssertEqual(logLines.count("legacy advertising commands refused"), 1)
    }

    func testRefusedShortIntervalFallsBackTo100Ms() throws {
        let c = controller(legacy: true)
        let a = advertiser(c)
        XCTAssertNoThrow(try XCTUnwrap(arm(a, TestBeacons.config(intervalMs: 50))).get())
        XCTAssertEqual(c.onAir, [TestBeacons.payload()])
        XCTAssertEqual(c.legacyIntervalUnits, 160)
        XCTAssertEqual(a.effectiveIntervalMs, 100)
        XCTAssertEqual(logLines.count("refused a 50 ms interval"), 1)
        // Armed again: the fallback is said once.
        XCTAssertNoThrow(try XCTUnwrap(arm(a, TestBeacons.config(intervalMs: 50), scope: .parameters)).get())
        XCTAssertEqual(logLines.count("refused a 50 ms interval"), 1)
    }

    func testRefusedShortIntervalFallsBackTo100MsOnExtendedSets() throws {
        let c = controller(sets: 4)
        c.refusesShortIntervals = true
        let a = advertiser(c)
        XCTAssertNoThrow(try XCTUnwrap(arm(a, TestBeacons.config(TestBeacons.three(), intervalMs: 30))).get())
        XCTAssertEqual(c.onAir.count, 3)
        XCTAssertEqual(c.sets.values.map(\.intervalUnits), [160, 160, 160])
        XCTAssertEqual(a.effectiveIntervalMs, 100)
    }

    func testTakeDownLeavesNothingOnAir() throws {
        for legacy in [true, false] {
            let c = controller(legacy: legacy)
            let a = advertiser(c)
            XCTAssertNoThrow(try XCTUnwrap(arm(a, TestBeacons.config(TestBeacons.three()))).get())
            XCTAssertFalse(c.onAir.isEmpty)
            var confirmed: [Bool] = []
            a.takeDown(commandTimeoutMs: 1000, deadlineMs: 3000) { confirmed.append($0) }
            XCTAssertTrue(confirmed.isEmpty, "done never inside the call")
            loop.run(forMs: 5000)
            XCTAssertEqual(confirmed, [true], "legacy \(legacy)")
            XCTAssertEqual(c.onAir, [], "legacy \(legacy)")
            XCTAssertTrue(c.sets.isEmpty, "every set removed (legacy \(legacy))")
            XCTAssertEqual(c.openTransports, 0)
            freshLoop()
        }
    }

    func testTakeDownCompletesWithinItsDeadlineWhenTheControllerIsSilent() throws {
        let c = controller(sets: 4)
        let a = advertiser(c)
        XCTAssertNoThrow(try XCTUnwrap(arm(a, TestBeacons.config(TestBeacons.three()))).get())
        c.silent = true
        let start = loop.now
        var done: [(Bool, Int64)] = []
        a.takeDown(commandTimeoutMs: 400, deadlineMs: 1000) { done.append(($0, self.loop.now - start)) }
        loop.run(forMs: 10_000)
        XCTAssertEqual(done.count, 1)
        XCTAssertEqual(done.first?.0, false)
        XCTAssertLessThanOrEqual(done.first?.1 ?? .max, 1000)
        XCTAssertEqual(c.openTransports, 0, "the channel is closed")
    }

    func testTakeDownDuringAnArmInFlightLeavesNothingOnAir() throws {
        let c = controller(sets: 4)
        c.answerDelayMs = 5
        let a = advertiser(c)
        var armed = 0
        a.arm(TestBeacons.config(TestBeacons.three()), scope: .full) { _ in armed += 1 }
        // Until the second set is being configured.
        loop.run(atMostMs: 5000) { c.onAir.count == 1 }
        XCTAssertEqual(c.onAir.count, 1)
        var confirmed: [Bool] = []
        a.takeDown(commandTimeoutMs: 500, deadlineMs: 3000) { confirmed.append($0) }
        loop.run(forMs: 5000)
        XCTAssertEqual(confirmed, [true])
        XCTAssertEqual(armed, 0, "the abandoned arm never completes")
        XCTAssertEqual(c.onAir, [])
    }

    func testHardwareErrorEventIsReported() throws {
        let c = controller(legacy: true)
        let a = advertiser(c)
        XCTAssertNoThrow(try XCTUnwrap(arm(a, TestBeacons.config())).get())
        c.hardwareError(code: 0x42)
        loop.run(forMs: 10)
        XCTAssertEqual((a.events as? AdvertiserRecorder)?.events.last, .hardwareError(0x42))
    }

    func testProbeFailsWhenSomeoneRemovedOurSet() throws {
        let c = controller(sets: 4)
        let a = advertiser(c)
        XCTAssertNoThrow(try XCTUnwrap(arm(a, TestBeacons.config(TestBeacons.three()))).get())
        c.foreign(LESetExtendedAdvertisingEnable(false, handle: 2))
        c.foreign(LERemoveAdvertisingSet(handle: 2))
        var result: ArmFailure??
        a.probe { result = .some($0) }
        loop.run(atMostMs: 10_000) { result != nil }
        XCTAssertNotNil(result ?? nil, "a set gone is noticed by the probe")
    }

    func testFewerFramesOnTheSameControllerRemovesTheSetsNoLongerUsed() throws {
        let c = controller(sets: 4)
        let a = advertiser(c)
        XCTAssertNoThrow(try XCTUnwrap(arm(a, TestBeacons.config(TestBeacons.three()))).get())
        let two = [TestBeacons.altBeacon(), TestBeacons.eddystoneUID()]
        XCTAssertNoThrow(try XCTUnwrap(arm(a, TestBeacons.config(two), scope: .parameters)).get())
        XCTAssertEqual(c.onAir, TestBeacons.payloads(two))
        XCTAssertEqual(Set(c.sets.keys), [3, 2])
    }

    func testFewerSetsThanFramesTheLastSetTakesTheRestInTurn() throws {
        let c = controller(sets: 2)
        let a = advertiser(c)
        let payloads = TestBeacons.payloads(TestBeacons.three())
        XCTAssertEqual(try XCTUnwrap(arm(a, TestBeacons.config(TestBeacons.three()))).get(), AirSummary(rotates: true))
        XCTAssertEqual(c.onAir, [payloads[0], payloads[1]])
        var done = false
        a.rotate { XCTAssertNil($0); done = true }
        loop.run(atMostMs: 1000) { done }
        XCTAssertEqual(c.onAir, [payloads[0], payloads[2]])
    }

    func testFromSetsBackToOneLegacyFrameRemovesEverySet() throws {
        let c = controller(sets: 4)
        let a = advertiser(c)
        XCTAssertNoThrow(try XCTUnwrap(arm(a, TestBeacons.config(TestBeacons.three()))).get())
        XCTAssertNoThrow(try XCTUnwrap(arm(a, TestBeacons.config(), scope: .parameters)).get())
        XCTAssertEqual(c.onAir, [TestBeacons.payload()])
        XCTAssertTrue(c.sets.isEmpty)
        XCTAssertTrue(c.legacyEnabled)
    }

    func testControllerRefusingRedundantEnablesIsArmedAndProbedWithoutFailure() throws {
        for legacy in [true, false] {
            let c = controller(legacy: legacy)
            c.refusesRedundantEnable = true
            let a = advertiser(c)
            XCTAssertNoThrow(try XCTUnwrap(arm(a, TestBeacons.config(TestBeacons.three()))).get())
            var probed: ArmFailure??
            a.probe { probed = .some($0) }
            loop.run(atMostMs: 1000) { probed != nil }
            XCTAssertEqual(probed, .some(nil), "legacy \(legacy)")
            XCTAssertNoThrow(try XCTUnwrap(arm(a, TestBeacons.config(TestBeacons.three()), scope: .parameters)).get())
            XCTAssertFalse(c.onAir.isEmpty)
            freshLoop()
        }
    }

    /// Dropping a frame: the set no longer used must go off air even if its disable failed once
    /// (a transient Controller Busy), and on stop at the latest.
    func testSetWhoseDisableFailedOnceIsNotLeftOnAirWhenFramesAreDropped() throws {
        let c = controller(sets: 4)
        let a = advertiser(c)
        XCTAssertNoThrow(try XCTUnwrap(arm(a, TestBeacons.config(TestBeacons.three()))).get())
        c.answer(.leSetExtendedAdvertisingEnable, .status(.controllerBusy))
        let two = [TestBeacons.altBeacon(), TestBeacons.iBeacon()]
        XCTAssertNoThrow(try XCTUnwrap(arm(a, TestBeacons.config(two), scope: .parameters)).get())
        XCTAssertEqual(c.onAir, TestBeacons.payloads(two), "the dropped Eddystone-UID frame stays on air (set 1)")
        var confirmed: [Bool] = []
        a.takeDown(commandTimeoutMs: 1000, deadlineMs: 3000) { confirmed.append($0) }
        loop.run(forMs: 5000)
        XCTAssertEqual(c.onAir, [], "no stale frame stays on air after stop")
    }

    /// Switching from legacy commands to sets (tx_power_dbm set): legacy advertising whose
    /// disable failed once must not be forgotten, or it stays on air after stop.
    func testLegacyAdvertisingWhoseDisableFailedOnceIsTakenDownOnStop() throws {
        let c = controller(sets: 4)
        let a = advertiser(c)
        XCTAssertNoThrow(try XCTUnwrap(arm(a, TestBeacons.config())).get())
        XCTAssertTrue(c.legacyEnabled, "one frame on a controller that takes legacy commands")
        c.answer(.leSetAdvertiseEnable, .status(.controllerBusy))
        var withPower = TestBeacons.config()
        withPower.bluetooth.txPowerDbm = 4
        XCTAssertNoThrow(try XCTUnwrap(arm(a, withPower, scope: .parameters)).get())
        var confirmed: [Bool] = []
        a.takeDown(commandTimeoutMs: 1000, deadlineMs: 3000) { confirmed.append($0) }
        loop.run(forMs: 5000)
        XCTAssertEqual(c.onAir, [], "legacy advertising left on air after stop")
    }
}
