import Glibc
import XCTest
@testable import BeaconKit

/// The observer's command sequences without a loop or a controller: each test answers as a
/// controller would and checks every action the procedure asks for, in order.
final class ScanProcedureTests: XCTestCase {
    typealias Action = ScanProcedure.Action
    let disallowed = HCIStatus.commandDisallowed

    // The commands' bytes as they go to the socket (H4 type, opcode LE, length, parameters).
    let legacyOff: [UInt8] = [0x01, 0x0c, 0x20, 0x02, 0x00, 0x00]
    let legacyPassive: [UInt8] = [0x01, 0x0b, 0x20, 0x07, 0x00, 0x10, 0x00, 0x10, 0x00, 0x00, 0x00]
    let legacyOn: [UInt8] = [0x01, 0x0c, 0x20, 0x02, 0x01, 0x00]
    let extendedOff: [UInt8] = [0x01, 0x42, 0x20, 0x06, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00]
    let extendedActive: [UInt8] = [0x01, 0x41, 0x20, 0x08, 0x00, 0x00, 0x01, 0x01, 0x10, 0x00, 0x10, 0x00]
    let extendedOn: [UInt8] = [0x01, 0x42, 0x20, 0x06, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00]

    /// LE Read Local Supported Features' return parameters: status, then the feature bits
    /// (bit 12: LE Extended Advertising).
    func features(extended: Bool) -> any HCIReply { LEFeaturesReply(returnParameters: [0, 0, extended ? 0x10 : 0, 0, 0, 0, 0, 0, 0])! }

    /// The bytes of each command the actions send.
    func sent(_ actions: [Action]) -> [[UInt8]] {
        actions.compactMap { if case .send(let c, _, _) = $0 { c.packet } else { nil } }
    }

    func ok(_ p: inout ScanProcedure) -> [Action] { p.replied(.success(HCIStatusReply()), generation: p.generation) }
    func refused(_ p: inout ScanProcedure, _ op: HCIOpcode, _ st: HCIStatus) -> [Action] {
        p.replied(.failure(.status(op, st)), generation: p.generation)
    }

    /// A procedure that has opened, powered up and read the features; the last actions (the
    /// first disable) returned.
    func started(_ p: inout ScanProcedure, active: Bool = false, extended: Bool = false) -> [Action] {
        let g = p.generation + 1
        XCTAssertEqual(p.start(active: active), [.openChannel(generation: g)])
        XCTAssertEqual(p.opened(nil, generation: g), [.powerUp(generation: g)])
        XCTAssertEqual(p.powered(nil, generation: g),
                       [.send(LEReadLocalSupportedFeatures(), timeoutMs: ScanProcedure.commandTimeoutMs, generation: g)])
        return p.replied(.success(features(extended: extended)), generation: g)
    }

    func testLegacySequenceThenStop() {
        var p = ScanProcedure()
        XCTAssertEqual(sent(started(&p)), [legacyOff])
        XCTAssertEqual(sent(ok(&p)), [legacyPassive])
        XCTAssertEqual(sent(ok(&p)), [legacyOn])
        XCTAssertEqual(ok(&p), [.started(nil)])
        XCTAssertEqual(p.family, .legacy)
        XCTAssertEqual(p.stop(), [.abandonCommands, .send(LESetScanEnable(false), timeoutMs: ScanProcedure.stopTimeoutMs, generation: 2)])
        XCTAssertNil(p.family)
        // Already disabled is no failure.
        XCTAssertEqual(refused(&p, .leSetScanEnable, disallowed),
                       [.debug("\(HCIOpcode.leSetScanEnable): \(disallowed), not a failure here"), .stopped(nil)])
        XCTAssertEqual(p.stop(), [.abandonCommands, .stopped(nil)], "nothing to disable")
        XCTAssertEqual(p.close(), [.closeChannel])
    }

    func testCommandDisallowedFallsBackToExtendedAfterTheBusyRetries() {
        var p = ScanProcedure()
        _ = started(&p, active: true)
        var parameters = 0
        var actions = ok(&p)
        // A legacy-only controller: Command Disallowed is another scan in between, asked again 20 times.
        while sent(actions) == [[0x01, 0x0b, 0x20, 0x07, 0x01, 0x10, 0x00, 0x10, 0x00, 0x00, 0x00]] {
            parameters += 1
            let retry = refused(&p, .leSetScanParameters, disallowed)
            guard retry.last == .scheduleRetry(afterMs: ScanProcedure.busyRetryMs) else { actions = retry; break }
            XCTAssertEqual(sent(p.retryDue()), [legacyOff])
            actions = ok(&p)
        }
        XCTAssertEqual(parameters, ScanProcedure.busyRetries + 1)
        XCTAssertEqual(Array(actions.suffix(2)), [
            .info("legacy scan commands refused (\(HCIOpcode.leSetScanParameters): \(disallowed)); using extended scan commands"),
            .send(LESetExtendedScanEnable(false), timeoutMs: ScanProcedure.commandTimeoutMs, generation: 1),
        ])
        XCTAssertEqual(sent(ok(&p)), [extendedActive])
        XCTAssertEqual(sent(ok(&p)), [extendedOn])
        XCTAssertEqual(ok(&p), [.started(nil)])
        XCTAssertEqual(p.family, .extended)
        XCTAssertEqual(sent(p.stop()), [extendedOff])
    }

    /// A Bluetooth 5 controller refusing legacy commands is the mixing rule: one more try, then
    /// extended commands.
    func testAnExtendedControllerRetriesOnce() {
        var p = ScanProcedure()
        _ = started(&p, extended: true)
        _ = ok(&p)
        XCTAssertEqual(refused(&p, .leSetScanParameters, disallowed).last, .scheduleRetry(afterMs: ScanProcedure.busyRetryMs))
        _ = p.retryDue()
        XCTAssertEqual(sent(ok(&p)), [legacyPassive])
        XCTAssertEqual(sent(refused(&p, .leSetScanParameters, disallowed)), [extendedOff])
    }

    func testUnknownCommandFallsBackOnlyWithExtendedFeatures() {
        var p = ScanProcedure()
        _ = started(&p, extended: true)
        _ = ok(&p)
        let unknown = HCIStatus.unknownCommand
        XCTAssertEqual(refused(&p, .leSetScanParameters, unknown), [
            .debug("\(HCICommandFailure.status(.leSetScanParameters, unknown))"),
            .info("legacy scan commands refused (\(HCIOpcode.leSetScanParameters): \(unknown)); using extended scan commands"),
            .send(LESetExtendedScanEnable(false), timeoutMs: ScanProcedure.commandTimeoutMs, generation: 1),
        ])

        var q = ScanProcedure()
        _ = started(&q)
        _ = ok(&q)
        let f = HCICommandFailure.status(.leSetScanParameters, unknown)
        XCTAssertEqual(refused(&q, .leSetScanParameters, unknown), [.debug("\(f)"), .closeChannel, .started(f)])
        XCTAssertEqual(q.generation, 2, "a failed start supersedes itself")
    }

    /// Any other legacy failure goes extended on a controller that has extended commands.
    func testOtherLegacyFailuresGoExtendedOnlyWithExtendedFeatures() {
        var p = ScanProcedure()
        _ = started(&p, extended: true)
        _ = ok(&p)
        _ = ok(&p)
        let f = HCICommandFailure.timeout(.leSetScanEnable)
        XCTAssertEqual(p.replied(.failure(f), generation: 1),
                       [.debug("\(f)"), .info("legacy scanning failed (\(f)); trying extended scan commands"),
                        .send(LESetExtendedScanEnable(false), timeoutMs: ScanProcedure.commandTimeoutMs, generation: 1)])
    }

    func testAStopDuringARetrySendsNothingMore() {
        var p = ScanProcedure()
        _ = started(&p)
        _ = ok(&p)
        _ = refused(&p, .leSetScanParameters, disallowed)
        XCTAssertEqual(p.stop(), [.cancelRetry, .abandonCommands, .stopped(nil)])
        XCTAssertEqual(p.retryDue(), [], "a late timer")
        XCTAssertEqual(p.replied(.success(HCIStatusReply()), generation: 1), [])
    }

    func testStopDisablesTheFamilyBeingEnabledAndDropsTheEnablesReply() {
        var p = ScanProcedure()
        _ = started(&p)
        _ = ok(&p)
        XCTAssertEqual(sent(ok(&p)), [legacyOn], "the enable is in flight")
        XCTAssertEqual(p.stop(), [.abandonCommands, .send(LESetScanEnable(false), timeoutMs: ScanProcedure.stopTimeoutMs, generation: 2)])
        XCTAssertEqual(p.replied(.success(HCIStatusReply()), generation: 1), [], "the superseded enable's reply")
        XCTAssertNil(p.family)
        XCTAssertEqual(p.replied(.failure(.timeout(.leSetScanEnable)), generation: 2),
                       [.debug("\(HCICommandFailure.timeout(.leSetScanEnable))"), .stopped(.timeout(.leSetScanEnable))])
    }

    func testASupersededSequencesAnswersAreIgnored() {
        var p = ScanProcedure()
        _ = p.start(active: false)
        _ = p.start(active: false)
        XCTAssertEqual(p.generation, 2)
        XCTAssertEqual(p.opened(nil, generation: 1), [])
        XCTAssertEqual(p.opened(nil, generation: 2), [.powerUp(generation: 2)])
        // The first start's power-up ends after the second's began.
        XCTAssertEqual(p.powered(nil, generation: 1), [])
        XCTAssertEqual(sent(p.powered(nil, generation: 2)), [[0x01, 0x03, 0x20, 0x00]])
        _ = p.close()
        XCTAssertEqual(p.replied(.success(features(extended: false)), generation: 2), [])
    }

    func testOpenAndPowerUpFailuresEndTheStart() {
        var p = ScanProcedure()
        _ = p.start(active: false)
        XCTAssertEqual(p.opened(.noDevice, generation: 1), [.started(.io(Errno(ENODEV)))])
        _ = p.start(active: false)
        XCTAssertEqual(p.opened(nil, generation: p.generation), [.powerUp(generation: p.generation)])
        XCTAssertEqual(p.powered(.rfkilled, generation: p.generation), [.closeChannel, .started(.io(Errno(132)))], "ERFKILL")
        _ = p.start(active: false)
        _ = p.opened(nil, generation: p.generation)
        XCTAssertEqual(sent(p.powered(.alreadyInProgress, generation: p.generation)), [[0x01, 0x03, 0x20, 0x00]], "up already")
        XCTAssertEqual(p.replied(.failure(.timeout(.leReadLocalFeatures)), generation: p.generation),
                       [.closeChannel, .started(.timeout(.leReadLocalFeatures))])
        // a features reply too short to read: a failure, as the advertiser takes it (not "legacy only")
        _ = p.start(active: false)
        _ = p.opened(nil, generation: p.generation)
        _ = p.powered(nil, generation: p.generation)
        XCTAssertEqual(p.replied(decodedReply(of: LEReadLocalSupportedFeatures(), .success([0x01, 0x02])), generation: p.generation),
                       [.closeChannel, .started(.shortReply(.leReadLocalFeatures))])
    }

    func testPauseThenResumeInTheSameFamily() {
        var p = ScanProcedure()
        XCTAssertEqual(p.resume(), [.resumed(.io(Errno(EBADF)))], "nothing paused")
        _ = started(&p, active: true, extended: true)
        _ = refused(&p, .leSetScanEnable, .unknownCommand)
        _ = ok(&p); _ = ok(&p)
        XCTAssertEqual(ok(&p), [.started(nil)])
        XCTAssertEqual(sent(p.pause()), [extendedOff])
        XCTAssertEqual(ok(&p), [.stopped(nil)])
        XCTAssertEqual(sent(p.resume()), [extendedOff])
        XCTAssertEqual(sent(ok(&p)), [extendedActive], "still active")
        XCTAssertEqual(sent(ok(&p)), [extendedOn])
        XCTAssertEqual(ok(&p), [.resumed(nil)])
        XCTAssertEqual(p.family, .extended)
        _ = p.pause()
        _ = ok(&p)
        _ = p.resume(); _ = ok(&p); _ = ok(&p)
        XCTAssertEqual(refused(&p, .leSetExtendedScanEnable, .hardwareFailure).last, .resumed(.status(.leSetExtendedScanEnable, .hardwareFailure)))
        XCTAssertEqual(sent(p.resume()), [extendedOff], "still paused: a failed resume keeps the family")
    }
}
