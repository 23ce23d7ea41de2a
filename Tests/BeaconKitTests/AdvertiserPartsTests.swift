import XCTest
@testable import BeaconKit

/// The advertiser's small parts alone: the step engine's refusal rules (`CommandSteps`), the
/// rotation (`FrameRotation`), the centrals' links (`CentralLinks`), what of ours the controller
/// holds (`OwnedAdvertising`) and the controller model's connectable advertising.
final class AdvertiserPartsTests: XCTestCase {
    typealias Step = CommandSteps.Step

    func running(_ h: CommandSteps.Handling) -> CommandSteps.Running {
        CommandSteps.Running(command: .enable(handle: nil), handling: h, intervalMs: 100)
    }

    func refusal(_ st: HCIStatus) -> Result<any HCIReply, HCICommandFailure> { .failure(.status(.leSetAdvertiseEnable, st)) }

    // MARK: CommandSteps

    func testStepsAdvancePastMarksToTheNextCommandAndEnd() {
        var s = CommandSteps()
        s.replace(with: [.mark(.firstTurn(2)), .mark(.legacyArmed), .send(.enable(handle: 1), .init()), .mark(.armedHandle(1))])
        let first = s.advance()
        XCTAssertEqual(first.marks, [.firstTurn(2), .legacyArmed])
        guard case .enable(handle: 1)? = first.next?.0 else { return XCTFail("the enable next") }
        let last = s.advance()
        XCTAssertEqual(last.marks, [.armedHandle(1)], "marks after the last command are still noted")
        XCTAssertNil(last.next)
        XCTAssertTrue(s.list.isEmpty)
    }

    func testATolerantStatusIsDoneAndSaidAnyOtherIsAFailure() throws {
        var s = CommandSteps()
        s.running = running(.init(tolerating: [.commandDisallowed]))
        let tolerated = try XCTUnwrap(s.settle(refusal(.commandDisallowed), linkOpen: false))
        guard case .success(nil) = tolerated.result else { return XCTFail("tolerated: done, no reply") }
        XCTAssertEqual(tolerated.tolerated, "LE Set Advertise Enable (0x200a): Command Disallowed (0x0c), not a failure here")
        XCTAssertNil(s.running, "taken off")
        XCTAssertNil(s.settle(refusal(.commandDisallowed), linkOpen: false), "nothing in flight: a late answer")

        s.running = running(.init(tolerating: [.commandDisallowed]))
        let refused = try XCTUnwrap(s.settle(refusal(.controllerBusy), linkOpen: false))
        guard case .failure(.status(_, .controllerBusy)) = refused.result else { return XCTFail("\(refused.result)") }
        XCTAssertNil(refused.tolerated)
    }

    func testAnArmsEnableIsAlreadyEnabledUnlessACentralIsConnected() throws {
        var s = CommandSteps()
        s.running = running(.init(linkAware: true))
        guard case .success? = s.settle(refusal(.commandDisallowed), linkOpen: false)?.result else { return XCTFail("already enabled") }
        s.running = running(.init(linkAware: true))
        guard case .failure? = s.settle(refusal(.commandDisallowed), linkOpen: true)?.result else {
            return XCTFail("beside a link the controller refuses to advertise connectable: a failure")
        }
    }

    func testARefusedStepIsAskedAgainOnceOnlyWhenItsHandlingSaysTwice() throws {
        XCTAssertNil(CommandSteps.again(running(.init())))
        let again = try XCTUnwrap(CommandSteps.again(running(.init(twice: true))))
        XCTAssertTrue(again.retried)
        XCTAssertNil(CommandSteps.again(again), "once")
    }

    // MARK: FrameRotation

    func testTheRotationGoesRoundItsSlotsFramesAndStartsALegacyArmAtANewFrame() {
        var r = FrameRotation()
        let slot = 1..<4   // the rotating slot carries frames 1, 2 and 3
        XCTAssertEqual(r.frame(in: slot), 1)
        let turns = (0..<4).map { _ in r.advance(in: slot) }
        XCTAssertEqual(turns.map(\.from), [1, 2, 3, 1])
        XCTAssertEqual(turns.map(\.to), [2, 3, 1, 2])
        XCTAssertEqual(r.frame(in: 5..<6), 5, "a slot of one frame always carries it")

        r.arming(from: ["altbeacon", "ibeacon"], to: ["altbeacon", "ibeacon", "eddystone-uid"])
        XCTAssertEqual(r.legacyStart(frameCount: 3), 2, "a frame switched on is heard at once")
        r.arming(from: ["altbeacon", "ibeacon"], to: ["altbeacon"])
        XCTAssertEqual(r.legacyStart(frameCount: 1), 0)
        r.legacyFirstFrame = 4
        XCTAssertEqual(r.legacyStart(frameCount: 2), 0, "past the frames: the first")
    }

    func testEverySixthProbeResendsTheScanResponses() {
        var r = FrameRotation()
        let probes = (1...12).map { _ in r.probeResendsScanResponses() }
        XCTAssertEqual(probes.indices.filter { probes[$0] }.map { $0 + 1 }, [6, 12])
    }

    // MARK: CentralLinks

    func testOnlyALinkToOurConnectableAdvertisingIsOursAndReleasedFirst() throws {
        var l = CentralLinks()
        let peer: [UInt8] = [1, 2, 3, 4, 5, 6]
        XCTAssertFalse(l.connected(handle: 0x40, peer: peer, random: true, ours: false), "another program's GATT server's")
        XCTAssertNil(l.release(handle: 0x40))
        XCTAssertTrue(l.connected(handle: 0x41, peer: peer, random: true, ours: true))
        let release = try XCTUnwrap(l.release(handle: 0x41))
        guard case .event(.releasingCentral(peer)) = release[0], case .disconnect(peer, true) = release[1], release.count == 2 else {
            return XCTFail("\(release)")
        }
        XCTAssertFalse(l.disconnected(handle: 0x40))
        XCTAssertTrue(l.disconnected(handle: 0x41))
        XCTAssertTrue(l.isEmpty)
    }

    func testTheControllerEndsItsConnectableAdvertisingAtAConnection() {
        var c = AdvertisingState()
        c.legacy = AdvertisingState.Slot(enabled: true, data: [1])
        c.sets[1] = AdvertisingState.Slot(enabled: true, data: [2])
        c.sets[2] = AdvertisingState.Slot(enabled: true, data: [3])
        XCTAssertFalse(c.connectableEnabled)
        c.sets[2]?.connectable = true
        XCTAssertTrue(c.connectableEnabled)
        c.connectableEnded()
        XCTAssertEqual(c.onAir, [[1], [2]], "only the connectable set stopped")
        XCTAssertFalse(c.connectableEnabled)
    }

    // MARK: OwnedAdvertising

    func opcodes(_ steps: [Step]) -> [HCIOpcode] {
        steps.compactMap { step -> HCIOpcode? in
            guard case .send(let c, _) = step else { return nil }
            switch c {
            case .fixed(let command): return type(of: command).opcode
            case .disable(let h?), .enable(let h?): _ = h; return .leSetExtendedAdvertisingEnable
            case .disable(nil), .enable(nil): return .leSetAdvertiseEnable
            default: return nil
            }
        }
    }

    func testLeavingTakesOffEverySetTheNewPlanDoesNotUseAndLegacyWhenSetsTakeOver() {
        var o = OwnedAdvertising()
        for m in [CommandSteps.Mark.armedHandle(3), .armedHandle(2), .armedHandle(1), .legacyArmed] { o.note(m) }
        XCTAssertEqual(o.handles, [1, 2, 3])
        XCTAssertEqual(opcodes(o.leaveSteps(toSets: [3])),
                       [.leSetExtendedAdvertisingEnable, .leRemoveAdvertisingSet, .leSetExtendedAdvertisingEnable, .leRemoveAdvertisingSet,
                        .leSetAdvertiseEnable])
        XCTAssertEqual(opcodes(o.leaveSteps(toSets: nil)).filter { $0 == .leRemoveAdvertisingSet }.count, 3, "to legacy: every set")
        XCTAssertFalse(opcodes(o.leaveSteps(toSets: nil)).contains(.leSetAdvertiseEnable), "legacy stays: it is re-armed")
        o.note(.removedHandle(2))
        o.note(.legacyDisarmed)
        XCTAssertEqual(o.handles, [1, 3])
        XCTAssertTrue(o.leaveSteps(toSets: [3, 1]).isEmpty, "nothing to leave")
    }

    func testTakingDownCoversEverySetEverConfiguredAndTheLastPlans() {
        var o = OwnedAdvertising()
        XCTAssertEqual(opcodes(o.takeDownSteps()), [.leSetAdvertiseEnable], "nothing known: legacy disabled anyway")
        o.note(.armedHandle(1))
        o.onAir(AirPlan(handles: [2], frameCount: 1))
        XCTAssertEqual(opcodes(o.takeDownSteps()),
                       [.leSetExtendedAdvertisingEnable, .leRemoveAdvertisingSet, .leSetExtendedAdvertisingEnable, .leRemoveAdvertisingSet])
        XCTAssertEqual(o.mode, "extended, set 2")
        o.plan = nil
        XCTAssertEqual(o.mode, "extended, set 2", "the last arm's while re-arming")
        o.controllerForgot()
        XCTAssertTrue(o.handles.isEmpty)
        o.onAir(AirPlan(handles: nil, frameCount: 3))
        XCTAssertEqual(o.mode, "legacy, 3 frames in turn")
    }
}
