import XCTest
@testable import BeaconKit

/// How the frames are sent (`AdvertisedFrames`) and what each operation sends (`SlotSteps`), alone:
/// the commands built with the spec's bytes, the workarounds a refusal allows, and each list.
final class AdvertisedFramesTests: XCTestCase {
    typealias Step = CommandSteps.Step

    func frames(_ config: BeaconConfig, random: BluetoothAddress? = nil) -> AdvertisedFrames {
        var f = AdvertisedFrames()
        _ = f.take(config, randomAddress: random)
        return f
    }

    /// Each step as its command's opcode (built now), or the mark.
    func names(_ steps: [Step], _ f: AdvertisedFrames, _ c: AdvertisingState = AdvertisingState()) -> [String] {
        steps.map { step in
            switch step {
            case .mark(let m): return "mark \(m)"
            case .send(let command, _): return "\(type(of: f.build(command, intervalMs: f.wantedIntervalMs, controller: c, now: 0)).opcode.ocf)"
            }
        }
    }

    func testTakingAConfigSaysWhetherItsFramesAreTheSameAndKeepsTheFamilyWhenOnlyTheIdentityLeft() {
        var f = AdvertisedFrames()
        let three = BenchConfigs.three
        XCTAssertFalse(f.take(three, randomAddress: nil).sameFrames)
        XCTAssertEqual(f.take(three, randomAddress: nil).before, ["altbeacon", "ibeacon", "eddystone-uid"])
        XCTAssertTrue(f.take(three, randomAddress: nil).sameFrames)
        let withIdentity = BenchConfigs.make("[gatt_identity]\n")
        _ = f.take(withIdentity, randomAddress: nil)
        XCTAssertFalse(f.keepsFamily)
        _ = f.take(BenchConfigs.make(), randomAddress: nil)
        XCTAssertTrue(f.keepsFamily, "the identity left out while a central is connected")
        XCTAssertEqual(f.wantedIntervalMs, 100)
    }

    func testParametersDataAndEnableAreTheStudyGuidesBytes() {
        let f = frames(BenchConfigs.make())
        let c = AdvertisingState()
        let parameters = f.build(.parameters(handle: nil, frame: 0, configured: true), intervalMs: 100, controller: c, now: 0)
        XCTAssertEqual(parameters.parameters, AdvertiserProcedureTests.studyGuideParameters)
        let data = f.build(.data(handle: nil, frame: 0), intervalMs: 100, controller: c, now: 0)
        XCTAssertEqual(data.parameters, [UInt8(BenchConfigs.payloads(BenchConfigs.make())[0].count)] + BenchConfigs.payloads(BenchConfigs.make())[0]
                       + [UInt8](repeating: 0, count: 31 - BenchConfigs.payloads(BenchConfigs.make())[0].count))
        XCTAssertEqual(f.build(.enable(handle: nil), intervalMs: 100, controller: c, now: 0).parameters, [0x01])
        XCTAssertEqual(f.build(.disable(handle: 2), intervalMs: 100, controller: c, now: 0).parameters, [0x00, 0x01, 0x02, 0, 0, 0], "that set only")
        XCTAssertEqual(f.build(.enable(handle: 2), intervalMs: 100, controller: c, now: 0).parameters, [0x01, 0x01, 0x02, 0, 0, 0])
    }

    func testATelemetryFrameCarriesTheCountAndUptimeAtTheTimeItIsBuilt() {
        var f = frames(BenchConfigs.make("[eddystone]\ntlm = true\n"))
        XCTAssertTrue(f.wantsBoardReading(for: nil))
        XCTAssertFalse(f.wantsBoardReading(for: BenchConfigs.make()))
        f.board = BoardReading(uptimeDeciseconds: 100, temperature: nil, readAtMs: 0)
        f.counter.enabled(slot: 1, intervalMs: 100, at: 0)
        let early = f.payload(ofFrame: 1, now: 1000), late = f.payload(ofFrame: 1, now: 11_000)
        XCTAssertNotEqual(early, late, "refreshed on air")
        XCTAssertEqual(f.payload(ofFrame: 0, now: 1000), f.payload(ofFrame: 0, now: 11_000), "the AltBeacon's bytes never change")
        XCTAssertEqual(f.standingRefreshedSlots(AirPlan(handles: [2, 1], frameCount: 2)), [1])
        XCTAssertEqual(f.standingRefreshedSlots(AirPlan(handles: nil, frameCount: 2)), [], "in turn: refreshed at its turn")
    }

    func testAShortIntervalRefusedFallsBackTo100MsSaidOnceAndOtherRefusalsAreNotWorkedAround() throws {
        var f = frames(BenchConfigs.make("[bluetooth]\ninterval_ms = 50"))
        let r = CommandSteps.Running(command: .parameters(handle: nil, frame: 0, configured: true), handling: .init(), intervalMs: 50)
        guard case .resend(let again, let warning)? = f.workaround(r, refused: .invalidParameters, adapter: "hci0") else { return XCTFail("resent") }
        XCTAssertEqual(again.intervalMs, 100)
        XCTAssertEqual(warning, "hci0 refused a 50 ms interval (Invalid HCI Command Parameters (0x12)); advertising every 100 ms instead")
        XCTAssertEqual(f.effectiveIntervalMs, 100)
        guard case .resend(_, nil)? = f.workaround(r, refused: .invalidParameters, adapter: "hci0") else { return XCTFail("said once") }
        XCTAssertNil(f.workaround(again, refused: .invalidParameters, adapter: "hci0"), "100 ms refused too: a failure")
        XCTAssertNil(f.workaround(r, refused: .commandDisallowed, adapter: "hci0"))
    }

    func testARefusedRandomAddressSendsFromThePublicOneSaidOnce() throws {
        let random = try XCTUnwrap(BluetoothAddress("DA:BB:CC:DD:EE:FF"))
        var f = frames(BenchConfigs.make(), random: random)
        XCTAssertEqual(f.chooseOwnAddress(), random)
        XCTAssertEqual(f.ownAddress, .random)
        let r = CommandSteps.Running(command: .legacyRandomAddress(random), handling: .init(), intervalMs: 100)
        guard case .skip(let warning?)? = f.workaround(r, refused: .commandDisallowed, adapter: "hci0") else { return XCTFail("skipped, said") }
        XCTAssertTrue(warning.hasPrefix("hci0 refused its static random address DA:BB:CC:DD:EE:FF"), warning)
        XCTAssertEqual(f.ownAddress, .public)
        guard case .skip(nil)? = f.workaround(r, refused: .commandDisallowed, adapter: "hci0") else { return XCTFail("said once") }
    }

    func testATxPowerNeedsSetsAndIsIgnoredOnBluetooth4SaidOnce() {
        var f = frames(BenchConfigs.make("[bluetooth]\ntx_power_dbm = 4"))
        let bt4 = ControllerInfo(hciVersion: 6, manufacturer: 0, leFeatures: 0), bt5 = ControllerInfo(hciVersion: 9, manufacturer: 0, leFeatures: 1 << 12)
        XCTAssertTrue(f.takeTxPower(BenchConfigs.make("[bluetooth]\ntx_power_dbm = 4"), bt5).needsSets)
        XCTAssertEqual(f.txPowerDbm, 4)
        let first = f.takeTxPower(BenchConfigs.make("[bluetooth]\ntx_power_dbm = 4"), bt4)
        XCTAssertFalse(first.needsSets)
        XCTAssertEqual(first.warning?.hasPrefix("tx_power_dbm is ignored: hci0 has no LE extended advertising"), true, first.warning ?? "")
        XCTAssertNil(f.takeTxPower(BenchConfigs.make("[bluetooth]\ntx_power_dbm = 4"), bt4).warning)
        XCTAssertFalse(f.takeTxPower(BenchConfigs.make(), bt5).needsSets)
    }

    // MARK: SlotSteps

    func testALegacyArmDisablesSetsTheRandomAddressThenParametersDataNameAndEnable() throws {
        var c = BenchConfigs.make()
        c.name = "hall"
        let f = frames(c), random = try XCTUnwrap(BluetoothAddress("DA:BB:CC:DD:EE:FF"))
        let s = SlotSteps(frames: f, controller: AdvertisingState())
        XCTAssertEqual(names(s.legacyArm(first: 0, random: random), f),
                       ["10", "5", "6", "mark firstTurn(0)", "8", "9", "mark legacyArmed", "10"])
        XCTAssertEqual(names(s.legacyArm(first: 0, random: nil), f).filter { $0 == "5" }, [], "from the public address: no LE Set Random Address")
    }

    func testAnExtendedArmConfiguresEachSetWithItsFirstFrame() {
        let f = frames(BenchConfigs.three)
        let s = SlotSteps(frames: f, controller: AdvertisingState())
        XCTAssertEqual(names(s.extendedArm(AirPlan(handles: [2, 1], frameCount: 3), random: nil), f),
                       ["mark firstTurn(0)",
                        "mark armedHandle(2)", "57", "54", "55", "57",
                        "mark armedHandle(1)", "57", "54", "55", "57"])
    }

    func testAnEditOfContentsSendsOnlyTheSlotsWhoseBytesChanged() {
        var controller = AdvertisingState()
        let f = frames(BenchConfigs.three)
        let plan = AirPlan(handles: [3, 2, 1], frameCount: 3)
        for (s, h) in [3, 2, 1].enumerated() { controller.sets[UInt8(h)] = AdvertisingState.Slot(enabled: true, data: f.payload(ofFrame: s, now: 0)) }
        XCTAssertTrue(SlotSteps(frames: f, controller: controller).changedSlots(plan, rotation: FrameRotation(), now: 0).isEmpty)
        controller.sets[2]?.data = [0x02, 0x01, 0x06]
        let steps = SlotSteps(frames: f, controller: controller).changedSlots(plan, rotation: FrameRotation(), now: 0)
        guard steps.count == 1, case .send(.data(handle: 2, frame: 1), _) = steps[0] else { return XCTFail("\(steps)") }
    }

    func testATurnToTheIdentityChangesTheParametersWhileOffAndATurnBetweenBeaconsOnlyTheData() {
        let f = frames(BenchConfigs.make("[ibeacon]\n[gatt_identity]\n"))
        let s = SlotSteps(frames: f, controller: AdvertisingState())
        XCTAssertEqual(names(s.turn(nil, from: 0, to: 1), f), ["8"])
        XCTAssertEqual(names(s.turn(nil, from: 1, to: 2), f), ["10", "6", "8", "9", "10"], "to ADV_IND: off, parameters, data, identity's response, on")
        XCTAssertEqual(names(s.turn(nil, from: 2, to: 0), f), ["10", "6", "8", "10"])
    }

    func testAProbeResendsEachSlotsDataAndEnableAndTheNameOnlyWhenAsked() {
        var controller = AdvertisingState()
        controller.legacy = AdvertisingState.Slot(enabled: true, data: [1])
        controller.legacy.scannable = true
        controller.legacy.scanResponse = [0x05, 0x09] + Array("hall".utf8)
        let f = frames(BenchConfigs.make())
        let plan = AirPlan(handles: nil, frameCount: 1)
        XCTAssertEqual(names(SlotSteps(frames: f, controller: controller).probe(plan, withScanResponse: false), f, controller), ["8", "10"])
        XCTAssertEqual(names(SlotSteps(frames: f, controller: controller).probe(plan, withScanResponse: true), f, controller), ["8", "9", "10"])
        XCTAssertTrue(SlotSteps(frames: f, controller: AdvertisingState()).probe(AirPlan(handles: [1], frameCount: 1), withScanResponse: true).isEmpty,
                      "a set the controller does not have is not probed")
    }

    func testARefreshSendsOnlyTheTelemetryFramesOwnSlot() {
        let f = frames(BenchConfigs.make("[ibeacon]\n[eddystone]\ntlm = true\n"))
        let steps = SlotSteps(frames: f, controller: AdvertisingState()).refresh(AirPlan(handles: [3, 2, 1], frameCount: 3))
        guard steps.count == 1, case .send(.data(handle: 1, frame: 2), _) = steps[0] else { return XCTFail("\(steps)") }
    }
}
