import XCTest
@testable import BeaconKit

/// The advertiser's fallbacks (SPEC §3) without a loop: the procedure against the controller model.
final class AdvertiserProcedureTests: XCTestCase {
    /// The study guide's `hcitool cmd 0x08 0x0006 A0 00 A0 00 03 00 00 00 00 00 00 00 00 07 00`.
    static let studyGuideParameters: [UInt8] = [0xa0, 0x00, 0xa0, 0x00, 0x03, 0x00, 0x00, 0, 0, 0, 0, 0, 0, 0x07, 0x00]

    func testLegacyControllerIsArmedWithTheStudyGuidesCommands() throws {
        var b = AdvertiserBench(extended: false)
        let config = BenchConfigs.make()
        XCTAssertEqual(try XCTUnwrap(b.arm(config, generation: 7)).get(), AirSummary())
        XCTAssertEqual(b.ops, [.readLocalVersion, .leReadLocalFeatures, .leSetAdvertiseEnable, .leSetAdvertisingParameters,
                               .leSetAdvertisingData, .leSetAdvertiseEnable])
        XCTAssertEqual(b.sent[3].params, Self.studyGuideParameters)
        XCTAssertEqual(b.sent[2].params, [0x00])
        XCTAssertEqual(b.sent[5].params, [0x01])
        XCTAssertEqual(b.controller.onAir, BenchConfigs.payloads(config))
        XCTAssertEqual(b.p.controller, b.controller, "the procedure's model is what the controller has")
        XCTAssertEqual(b.p.mode, "legacy")
        XCTAssertEqual(b.powerCalls, [true])
    }

    func testThreeFramesOnABluetooth5ControllerGoOnThreeSetsAfterClearingOldOnes() throws {
        var b = AdvertiserBench(extended: true)
        b.controller.sets[0] = AdvertisingState.Slot(enabled: true, data: [1, 2, 3])   // a previous process's
        XCTAssertEqual(try XCTUnwrap(b.arm(BenchConfigs.three)).get(), AirSummary())
        XCTAssertEqual(b.p.mode, "extended, sets 3 2 1")
        XCTAssertEqual(b.controller.onAir, BenchConfigs.payloads(BenchConfigs.three))
        XCTAssertEqual(b.count(.leClearAdvertisingSets), 1)
        XCTAssertEqual(b.count(.leSetAdvertiseEnable), 0, "no legacy command beside sets")
        // A second arm of the same session clears nothing: the sets are ours.
        XCTAssertNoThrow(try XCTUnwrap(b.arm(BenchConfigs.three, scope: .powerCycle)).get())
        XCTAssertEqual(b.count(.leClearAdvertisingSets), 1)
    }

    func testLegacyRefusedOnABluetooth5ControllerFallsBackToExtendedWithOneSet() throws {
        var b = AdvertiserBench(extended: true)
        // The host used extended commands: legacy ones are refused until a reset (SPEC §3).
        b.refuse = { op, _ in [.leSetAdvertisingParameters, .leSetAdvertisingData, .leSetAdvertiseEnable].contains(op) ? .commandDisallowed : nil }
        XCTAssertNoThrow(try XCTUnwrap(b.arm(BenchConfigs.make())).get())
        XCTAssertEqual(b.p.mode, "extended, set 3")
        XCTAssertEqual(Array(b.controller.sets.keys), [3])
        XCTAssertEqual(b.controller.onAir, BenchConfigs.payloads(BenchConfigs.make()))
        XCTAssertEqual(b.logged("legacy advertising commands refused on hci0"), 1)
    }

    func testExtendedRefusedFallsBackToLegacyWithTheFramesInTurn() throws {
        var b = AdvertiserBench(extended: true)
        b.refuse = { op, _ in op == .leSetExtendedAdvertisingParameters ? .commandDisallowed : nil }
        XCTAssertEqual(try XCTUnwrap(b.arm(BenchConfigs.three)).get(), AirSummary(rotates: true))
        XCTAssertEqual(b.p.mode, "legacy, 3 frames in turn")
        XCTAssertEqual(b.controller.onAir, [BenchConfigs.payloads(BenchConfigs.three)[0]])
        XCTAssertEqual(b.logged("refuses extended advertising now; advertising with legacy commands, the frames in turn"), 1)
        // Each turn puts the next frame in the one slot.
        b.run(b.p.rotate(now: 1000))
        XCTAssertEqual(b.controller.onAir, [BenchConfigs.payloads(BenchConfigs.three)[1]])
        XCTAssertEqual(b.events.last, .rotated(nil))
    }

    func testBothFamiliesRefusedFailsTheArmWithTheRefusal() {
        var b = AdvertiserBench(extended: true)
        b.refuse = { op, _ in [.leSetExtendedAdvertisingParameters, .leSetAdvertisingParameters].contains(op) ? .commandDisallowed : nil }
        guard case .failure(.rejected(let why))? = b.arm(BenchConfigs.three) else { return XCTFail("\(b.events)") }
        XCTAssertTrue(why.contains("LE Set Advertising Parameters"), why)
        XCTAssertNil(b.p.plan)
    }

    func testAShortIntervalRefusedByABluetooth4ControllerFallsBackTo100MsSaidOnce() throws {
        var b = AdvertiserBench(extended: false)
        b.refuse = { op, p in op == .leSetAdvertisingParameters && p[0] < 160 && p[1] == 0 ? .invalidParameters : nil }
        let config = BenchConfigs.make("[bluetooth]\ninterval_ms = 50")
        XCTAssertNoThrow(try XCTUnwrap(b.arm(config)).get())
        let parameters = b.sent.filter { $0.op == .leSetAdvertisingParameters }.map(\.params)
        XCTAssertEqual(parameters.map { $0[0] }, [80, 160], "50 ms (80 units) asked, then 100 ms")
        XCTAssertEqual(b.p.effectiveIntervalMs, 100)
        XCTAssertEqual(b.controller.legacy.intervalUnits, 160)
        XCTAssertEqual(b.logged("refused a 50 ms interval"), 1)
        XCTAssertNoThrow(try XCTUnwrap(b.arm(config, scope: .parameters, generation: 2)).get())
        XCTAssertEqual(b.logged("refused a 50 ms interval"), 1, "said once")
    }

    func testAnIntervalRefusedAbove100MsIsNotRetried() {
        var b = AdvertiserBench(extended: false)
        b.refuse = { op, _ in op == .leSetAdvertisingParameters ? .invalidParameters : nil }
        guard case .failure? = b.arm(BenchConfigs.make("[bluetooth]\ninterval_ms = 200")) else { return XCTFail() }
        XCTAssertEqual(b.count(.leSetAdvertisingParameters), 1)
    }

    func testLegacyFramesGoOutFromTheStaticRandomAddress() throws {
        var b = AdvertiserBench(extended: false)
        let random = try XCTUnwrap(BluetoothAddress("DA:BB:CC:DD:EE:FF"))
        b.randomAddress = random
        XCTAssertNoThrow(try XCTUnwrap(b.arm(BenchConfigs.make())).get())
        XCTAssertEqual(b.ops.prefix(5), [.readLocalVersion, .leReadLocalFeatures, .leSetAdvertiseEnable, .leSetRandomAddress, .leSetAdvertisingParameters])
        XCTAssertEqual(b.controller.randomAddress, random.bytes)
        XCTAssertEqual(b.sent[4].params[5], 0x01, "own address type random")
        XCTAssertTrue(b.controller.legacy.enabled)
    }

    func testARefusedRandomAddressFallsBackToThePublicOneSaidOnce() throws {
        var b = AdvertiserBench(extended: false)
        b.randomAddress = BluetoothAddress("DA:BB:CC:DD:EE:FF")
        // Another program scans with the adapter (Core §7.8.4).
        b.refuse = { op, _ in op == .leSetRandomAddress ? .commandDisallowed : nil }
        XCTAssertNoThrow(try XCTUnwrap(b.arm(BenchConfigs.make())).get())
        XCTAssertEqual(b.sent.first { $0.op == .leSetAdvertisingParameters }?.params[5], 0x00, "own address type public")
        XCTAssertTrue(b.controller.legacy.enabled, "on air from the public address rather than not at all")
        XCTAssertEqual(b.logged("refused its static random address"), 1)
        XCTAssertNoThrow(try XCTUnwrap(b.arm(BenchConfigs.make(), scope: .parameters, generation: 2)).get())
        XCTAssertEqual(b.count(.leSetRandomAddress), 2, "each arm asks again")
        XCTAssertEqual(b.logged("refused its static random address"), 1, "said once")
    }

    func testSetsGetTheirRandomAddressAfterTheirParameters() throws {
        var b = AdvertiserBench(extended: true)
        b.randomAddress = BluetoothAddress("DA:BB:CC:DD:EE:FF")
        XCTAssertNoThrow(try XCTUnwrap(b.arm(BenchConfigs.three)).get())
        for h: UInt8 in [3, 2, 1] {
            let i = try XCTUnwrap(b.sent.firstIndex { $0.op == .leSetExtendedAdvertisingParameters && $0.params[0] == h })
            XCTAssertEqual(b.sent[i + 1].op, .leSetAdvertisingSetRandomAddress)
            XCTAssertEqual(b.controller.sets[h]?.randomAddress, [0xff, 0xee, 0xdd, 0xcc, 0xbb, 0xda])
        }
    }

    func testTheProbeResendsEachSlotAndToleratesARedundantEnable() throws {
        var b = AdvertiserBench(extended: true)
        XCTAssertNoThrow(try XCTUnwrap(b.arm(BenchConfigs.three)).get())
        b.refuse = { op, _ in op == .leSetExtendedAdvertisingEnable ? .commandDisallowed : nil }
        let before = b.sent.count
        b.run(b.p.probe(now: 5000))
        XCTAssertEqual(b.events.last, .probed(nil))
        XCTAssertEqual(b.sent[before...].map(\.op), Array(repeating: [.leSetExtendedAdvertisingData, .leSetExtendedAdvertisingEnable], count: 3).flatMap { $0 })
        // A set someone removed: the probe says so.
        b.refuse = { _, _ in nil }
        b.controller.sets[2] = nil
        b.run(b.p.probe(now: 10_000))
        guard case .probed(.some)? = b.events.last else { return XCTFail("\(b.events.last.map { "\($0)" } ?? "")") }
    }

    func testARotationAskedDuringAProbeRunsAfterIt() throws {
        var b = AdvertiserBench(extended: false)
        XCTAssertNoThrow(try XCTUnwrap(b.arm(BenchConfigs.three)).get())
        b.silent = true
        b.run(b.p.probe(now: 1000))
        let before = b.sent.count
        b.run(b.p.rotate(now: 1000))
        XCTAssertEqual(b.sent.count, before, "nothing sent beside the probe's command")
        b.silent = false
        b.run(b.p.replied(.success(HCIStatusReply()), now: 1000))
        XCTAssertEqual(b.events.suffix(2), [.probed(nil), .rotated(nil)])
        XCTAssertEqual(b.controller.onAir, [BenchConfigs.payloads(BenchConfigs.three)[1]])
    }

    func testAnArmSupersedesWhatWasInFlight() throws {
        var b = AdvertiserBench(extended: true)
        XCTAssertNoThrow(try XCTUnwrap(b.arm(BenchConfigs.three)).get())
        b.silent = true
        b.run(b.p.probe(now: 1000))
        let actions = b.p.arm(BenchConfigs.three, scope: .parameters, generation: 2, randomAddress: nil, now: 1000)
        guard case .abandonCommands? = actions.first else { return XCTFail("the probe's command is abandoned first") }
        b.silent = false
        b.run(actions)
        XCTAssertEqual(b.events.last, .armed(generation: 2, .success(AirSummary())))
        XCTAssertFalse(b.events.contains(.probed(nil)), "the superseded probe never reports")
    }

    func testTakeDownRemovesEverySetAndCountsWhatFailed() throws {
        var b = AdvertiserBench(extended: true)
        XCTAssertNoThrow(try XCTUnwrap(b.arm(BenchConfigs.three)).get())
        b.refuse = { op, p in op == .leRemoveAdvertisingSet && p[0] == 2 ? .controllerBusy : nil }
        b.run(b.p.takeDown(perCommandMs: 500, deadlineMs: 3000, disconnecting: [], now: 2000))
        XCTAssertEqual(b.events.last, .tookDown(confirmed: false))
        XCTAssertEqual(b.count(.leRemoveAdvertisingSet), 3, "one failure does not stop the others")
        XCTAssertEqual(Array(b.controller.sets.keys), [2])
        XCTAssertEqual(b.controller.onAir, [])
        XCTAssertFalse(b.p.channelOpen)
    }

    func testTakeDownOfASilentControllerEndsAtItsDeadline() throws {
        var b = AdvertiserBench(extended: false)
        XCTAssertNoThrow(try XCTUnwrap(b.arm(BenchConfigs.make())).get())
        b.silent = true
        b.run(b.p.takeDown(perCommandMs: 500, deadlineMs: 1000, disconnecting: [], now: 2000))
        XCTAssertTrue(b.events.allSatisfy { if case .tookDown = $0 { false } else { true } })
        b.run(b.p.deadlinePassed(now: 3000))
        XCTAssertEqual(b.events.last, .tookDown(confirmed: false))
        XCTAssertEqual(b.logged("did not confirm advertising off within 1000 ms"), 1)
        XCTAssertEqual(b.p.deadlinePassed(now: 4000).count, 0, "once")
    }

    func testACentralOnTheIdentityIsReleasedBeforeItsLinkIsCut() throws {
        var b = AdvertiserBench(extended: true)
        XCTAssertNoThrow(try XCTUnwrap(b.arm(BenchConfigs.make("[gatt_identity]\nidentifier = \"lobby\""))).get())
        XCTAssertEqual(b.controller.sets.values.filter(\.connectable).count, 1, "the identity's set")
        let peer: [UInt8] = [1, 2, 3, 4, 5, 6]
        b.run(b.p.controllerEvent(.leConnectionComplete(status: .success, handle: 9, peripheral: true, peer: peer, peerRandom: true)))
        XCTAssertEqual(b.events.last, .centralConnected(9))
        let actions = b.p.disconnect(handle: 9)
        guard actions.count == 2, case .event(.releasingCentral(peer)) = actions[0], case .disconnect(peer, true) = actions[1] else {
            return XCTFail("\(actions)")
        }
        XCTAssertEqual(b.p.disconnect(handle: 8).count, 1, "a link not known is reported gone")
        b.run(b.p.controllerEvent(.disconnectionComplete(status: .success, handle: 9, reason: 0x16)))
        XCTAssertEqual(b.events.last, .centralDisconnected(9))
    }

    /// Another program's GATT server on the beacon's adapter: its centrals are not ours to track,
    /// nor to disconnect after 30 s.
    func testALinkToAnotherProgramsAdvertisingIsNotOurs() throws {
        var b = AdvertiserBench(extended: true)
        XCTAssertNoThrow(try XCTUnwrap(b.arm(BenchConfigs.three)).get())
        let before = b.events.count
        b.run(b.p.controllerEvent(.leConnectionComplete(status: .success, handle: 4, peripheral: true, peer: [9, 9, 9, 9, 9, 9], peerRandom: false)))
        b.run(b.p.controllerEvent(.disconnectionComplete(status: .success, handle: 4, reason: 0x13)))
        XCTAssertEqual(b.events.count, before, "neither reported")
        XCTAssertTrue(b.p.links.isEmpty)
        XCTAssertEqual(b.controller.onAir.count, 3, "our frames stay on air")
    }
}
