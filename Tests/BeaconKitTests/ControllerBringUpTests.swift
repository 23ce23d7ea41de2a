import XCTest
@testable import BeaconKit

/// Learning the controller (`ControllerBringUp`) alone: the commands asked for at each answer and
/// what it ends with, for a Bluetooth 4.x and a 5 controller, a power cycle, and each failure.
final class ControllerBringUpTests: XCTestCase {
    static let bluetooth4 = LocalVersionReply(hciVersion: 6, manufacturer: 0x000f)
    static let bluetooth5 = LocalVersionReply(hciVersion: 9, manufacturer: 0x000f)
    static let extendedFeatures = LEFeaturesReply(bits: 1 << 12)

    /// The opcodes of the commands a `.send` asks for; nil for any other outcome.
    func ops(_ next: ControllerBringUp.Next?) -> [HCIOpcode]? {
        guard case .send(let list)? = next else { return nil }
        return list.compactMap { step -> HCIOpcode? in
            guard case .send(.fixed(let c), _) = step else { return nil }
            return type(of: c).opcode
        }
    }

    func ready(_ next: ControllerBringUp.Next?) -> (ControllerInfo, Bool)? {
        guard case .ready(let i, let cleared)? = next else { return nil }
        return (i, cleared)
    }

    func failure(_ next: ControllerBringUp.Next?) -> ArmFailure? {
        guard case .failed(let f)? = next else { return nil }
        return f
    }

    func testABluetooth4ControllerIsBroughtUpAndReadInTwoCommands() throws {
        var b = ControllerBringUp()
        guard case .power(up: true) = b.start(powerCycle: false) else { return XCTFail("brought up first") }
        XCTAssertEqual(ops(b.powered(nil)), [.readLocalVersion])
        XCTAssertEqual(ops(b.stepsEnded(nil, reply: Self.bluetooth4)), [.leReadLocalFeatures])
        let (info, cleared) = try XCTUnwrap(ready(b.stepsEnded(nil, reply: LEFeaturesReply(bits: 0))))
        XCTAssertEqual(info, ControllerInfo(hciVersion: 6, manufacturer: 0x000f, leFeatures: 0))
        XCTAssertFalse(cleared, "no sets to clear on Bluetooth 4")
        XCTAssertNil(b.stage)
        XCTAssertNil(b.stepsEnded(nil, reply: nil), "ended: nothing more is asked")
    }

    func testABluetooth5ControllersSetsAreCountedAndAPreviousProcesssClearedOncePerSession() throws {
        var b = ControllerBringUp()
        _ = b.start(powerCycle: false)
        _ = b.powered(nil)
        _ = b.stepsEnded(nil, reply: Self.bluetooth5)
        XCTAssertEqual(ops(b.stepsEnded(nil, reply: Self.extendedFeatures)), [.leReadNumberOfSupportedAdvertisingSets])
        let count = try XCTUnwrap(AdvertisingSetCountReply(returnParameters: [0, 6]))
        XCTAssertEqual(ops(b.stepsEnded(nil, reply: count)), [.leSetExtendedAdvertisingEnable, .leClearAdvertisingSets])
        let (info, cleared) = try XCTUnwrap(ready(b.stepsEnded(nil, reply: nil)))
        XCTAssertEqual(info.advertisingSets, 6)
        XCTAssertTrue(cleared)
        XCTAssertTrue(b.clearedPrevious)

        // The next arm of the session clears nothing: the sets are ours.
        _ = b.start(powerCycle: false)
        _ = b.powered(nil)
        _ = b.stepsEnded(nil, reply: Self.bluetooth5)
        _ = b.stepsEnded(nil, reply: Self.extendedFeatures)
        let again = try XCTUnwrap(ready(b.stepsEnded(nil, reply: count)))
        XCTAssertFalse(again.1)
    }

    func testARefusedClearingGoesOnAndIsAskedAgainAtTheNextArm() throws {
        var b = ControllerBringUp()
        for round in 1...2 {
            _ = b.start(powerCycle: false)
            _ = b.powered(nil)
            _ = b.stepsEnded(nil, reply: Self.bluetooth5)
            _ = b.stepsEnded(nil, reply: Self.extendedFeatures)
            XCTAssertEqual(ops(b.stepsEnded(nil, reply: nil))?.last, .leClearAdvertisingSets, "round \(round)")
            let (_, cleared) = try XCTUnwrap(ready(b.stepsEnded(.status(.leClearAdvertisingSets, .commandDisallowed), reply: nil)))
            XCTAssertFalse(cleared)
            XCTAssertFalse(b.clearedPrevious)
        }
    }

    func testTheSetCountIsTheOnlyAnswerThatMayBeMissing() throws {
        var b = ControllerBringUp()
        _ = b.start(powerCycle: false)
        _ = b.powered(nil)
        _ = b.stepsEnded(nil, reply: Self.bluetooth5)
        _ = b.stepsEnded(nil, reply: Self.extendedFeatures)
        XCTAssertNotNil(ops(b.stepsEnded(.status(.leReadNumberOfSupportedAdvertisingSets, .unknownCommand), reply: nil)))
        XCTAssertEqual(try XCTUnwrap(ready(b.stepsEnded(nil, reply: nil))).0.advertisingSets, 0, "unknown: the sets are tried anyway")

        var short = ControllerBringUp()
        _ = short.start(powerCycle: false)
        _ = short.powered(nil)
        XCTAssertEqual(failure(short.stepsEnded(nil, reply: nil)), ArmFailure(.shortReply(.readLocalVersion)))
        XCTAssertNil(short.stage)
        _ = short.start(powerCycle: false)
        _ = short.powered(nil)
        _ = short.stepsEnded(nil, reply: Self.bluetooth4)
        XCTAssertEqual(failure(short.stepsEnded(.timeout(.leReadLocalFeatures), reply: nil)), ArmFailure(.timeout(.leReadLocalFeatures)))
    }

    func testAPowerCycleGoesDownThenUpAndOnlyAFailedBringUpEndsIt() {
        var b = ControllerBringUp()
        guard case .power(up: false) = b.start(powerCycle: true) else { return XCTFail("down first") }
        XCTAssertEqual(b.stage, .poweringDown)
        guard case .power(up: true)? = b.powered(.busy) else { return XCTFail("a failed take-down still brings it up") }
        XCTAssertEqual(ops(b.powered(.alreadyInProgress)), [.readLocalVersion], "an abandoned arm's bring-up answers for this one")

        var down = ControllerBringUp()
        _ = down.start(powerCycle: false)
        XCTAssertEqual(failure(down.powered(.rfkilled)), ArmFailure(.rfkilled, bringingUp: true))
        XCTAssertNil(down.stage)
    }

    func testAnswersWhenNotBringingUpAskNothing() {
        var b = ControllerBringUp()
        XCTAssertNil(b.powered(nil))
        XCTAssertNil(b.stepsEnded(nil, reply: Self.bluetooth4))
        _ = b.start(powerCycle: false)
        b.stop()
        XCTAssertNil(b.powered(nil), "an abandoned bring-up's late answer")
    }
}
