import BeaconKit
import XCTest

/// How frames share the controller (SPEC §3) and how others' commands are told from ours.
final class AirPlanTests: XCTestCase {
    func testLegacyControllerRotatesEveryFrameInOneSlot() {
        let p = AirPlan(handles: nil, frameCount: 5)
        XCTAssertEqual(p.slotCount, 1)
        XCTAssertTrue(p.rotates)
        XCTAssertEqual(p.frames(inSlot: 0), 0..<5)
        XCTAssertNil(p.handle(ofSlot: 0))
    }

    func testOneSetPerFrameWhenThereAreEnough() {
        let h = AirPlan.handles(frames: 3, supportedSets: 16)
        XCTAssertEqual(h, [15, 14, 13])
        let p = AirPlan(handles: h, frameCount: 3)
        XCTAssertFalse(p.rotates)
        XCTAssertEqual((0..<3).map { p.frames(inSlot: $0) }, [0..<1, 1..<2, 2..<3])
        XCTAssertEqual(p.handle(ofSlot: 2), 13)
    }

    func testFewerSetsThanFramesTheLastSetTakesTheRestInTurn() {
        let h = AirPlan.handles(frames: 5, supportedSets: 3)
        XCTAssertEqual(h, [2, 1, 0])
        let p = AirPlan(handles: h, frameCount: 5)
        XCTAssertTrue(p.rotates)
        XCTAssertEqual(p.frames(inSlot: 2), 2..<5)
        XCTAssertEqual(p.slot(ofFrame: 4), 2)
        XCTAssertEqual(p.slot(ofFrame: 1), 1)
    }

    func testHandlesStayWithinTheSpecRange() {
        XCTAssertEqual(AirPlan.handles(frames: 2, supportedSets: 255), [0xef, 0xee])
        XCTAssertEqual(AirPlan.handles(frames: 1, supportedSets: 0), [0])
        XCTAssertEqual(AirPlan.handles(frames: 0, supportedSets: 4), [3])
    }

    func testOnAirClassifiesPerSet() {
        let alt: [UInt8] = [2, 1, 6, 3, 0xff, 1, 2], ib: [UInt8] = [2, 1, 6, 3, 0xff, 4, 5]
        let onAir = OnAirAdvertising(handles: [2, 1], payloads: [alt, ib])
        // our own bytes on either of our sets: not interference
        XCTAssertNil(classifyForeignCommand(.leSetExtendedAdvertisingData, [1, 3, 1, UInt8(alt.count)] + alt, onAir: onAir))
        // other bytes on one of our sets
        XCTAssertEqual(classifyForeignCommand(.leSetExtendedAdvertisingData, [1, 3, 1, 2, 9, 9], onAir: onAir), .advertisingOverwritten)
        // another set is someone else's business
        XCTAssertNil(classifyForeignCommand(.leSetExtendedAdvertisingData, [0, 3, 1, 2, 9, 9], onAir: onAir))
        XCTAssertEqual(classifyForeignCommand(.leSetExtendedAdvertisingEnable, [0, 1, 2, 0, 0, 0], onAir: onAir), .advertisingDisabled)
        XCTAssertNil(classifyForeignCommand(.leSetExtendedAdvertisingEnable, [0, 1, 0, 0, 0, 0], onAir: onAir))
        XCTAssertEqual(classifyForeignCommand(.leRemoveAdvertisingSet, [1], onAir: onAir), .advertisingDisabled)
        XCTAssertEqual(classifyForeignCommand(.leSetExtendedAdvertisingParameters, [2], onAir: onAir), .parametersChanged)
    }

    func testLegacyRotationAnyOfOurFramesIsOurs() {
        let a: [UInt8] = [2, 1, 6], b: [UInt8] = [2, 1, 6, 1, 9]
        let onAir = OnAirAdvertising(handles: nil, payloads: [a, b])
        XCTAssertNil(classifyForeignCommand(.leSetAdvertisingData, LESetAdvertisingData(data: b).parameters, onAir: onAir))
        XCTAssertEqual(classifyForeignCommand(.leSetAdvertisingData, LESetAdvertisingData(data: [2, 1, 4]).parameters, onAir: onAir),
                       .advertisingOverwritten)
        // in legacy mode any extended set counts: the controller may drop ours for it
        XCTAssertEqual(classifyForeignCommand(.leSetExtendedAdvertisingEnable, [0, 1, 7, 0, 0, 0], onAir: onAir), .advertisingDisabled)
    }

    func testConfiguredFramesCompareByTheirBytes() {
        let id = BeaconIdentity(uuid: [UInt8](repeating: 1, count: 16), major: 1, minor: 2)
        XCTAssertEqual(ConfiguredFrame(AltBeaconFrame(id)), ConfiguredFrame(AltBeaconFrame(id)))
        var other = id
        other.minor = 3
        XCTAssertNotEqual(ConfiguredFrame(AltBeaconFrame(id)), ConfiguredFrame(AltBeaconFrame(other)))
        XCTAssertEqual(ConfiguredFrame(EddystoneTLMFrame()), ConfiguredFrame(EddystoneTLMFrame()))
        XCTAssertTrue(EddystoneTLMFrame().carriesTelemetry)
        XCTAssertFalse(AltBeaconFrame(id).carriesTelemetry)
    }
}
