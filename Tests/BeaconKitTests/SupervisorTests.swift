import XCTest
@testable import BeaconKit

/// A supervisor driven by events the way the daemon feeds it, on a clock the test moves.
class SupervisorTestCase: XCTestCase {
    var s = Supervisor(probeIntervalMs: 5000)
    var now: Int64 = 0

    @discardableResult
    func on(_ e: SupervisorEvent, after ms: Int64 = 0) -> [SupervisorAction] {
        now += ms
        return s.handle(e, now: now)
    }

    func armed() {
        XCTAssertEqual(on(.start), [.arm(.full)])
        XCTAssertEqual(on(.armed(nil)), [.scheduleProbe(afterMs: 5000)])
        XCTAssertEqual(s.phase, .advertising)
    }
}

/// The recovery policy: ordering, back-off, faults mid-re-arm.
final class SupervisorTests: SupervisorTestCase {

    func testStartArmsEverythingThenProbes() {
        armed()
        XCTAssertEqual(on(.probeTimer, after: 5000), [.probe])
        XCTAssertEqual(on(.probed(nil)), [.scheduleProbe(afterMs: 5000)])
        XCTAssertEqual(s.totalRearms, 0)
    }

    func testInterferenceRearmsParametersAfterSettlingAndCountsTheCause() {
        armed()
        let a = on(.interference(.reset))
        XCTAssertEqual(a.last, .scheduleRearm(afterMs: Supervisor.settleMs))
        // A second command of the same burst does not schedule again.
        XCTAssertEqual(on(.interference(.advertisingDisabled)), [])
        XCTAssertEqual(on(.rearmTimer, after: 30), [.arm(.parameters)])
        let back = on(.armed(nil))
        XCTAssertTrue(back.contains(.notice("back on air after reset (re-arms: reset 1)")))
        XCTAssertEqual(s.rearms[.reset], 1)
        XCTAssertEqual(s.phase, .advertising)
    }

    func testFailuresBackOffExponentiallyWithACap() {
        XCTAssertEqual(Supervisor.backoff(failures: 1), 50)
        XCTAssertEqual(Supervisor.backoff(failures: 2), 100)
        XCTAssertEqual(Supervisor.backoff(failures: 5), 800)
        XCTAssertEqual(Supervisor.backoff(failures: 6), 1000)
        XCTAssertEqual(Supervisor.backoff(failures: 1000), 1000)
        on(.start)
        var delays: [Int64] = []
        var scopes: [ArmScope] = []
        for _ in 0..<8 {
            let a = on(.armed(.timeout))
            guard case .scheduleRearm(let ms)? = a.last else { return XCTFail("\(a)") }
            delays.append(ms)
            guard case .arm(let scope)? = on(.rearmTimer, after: ms).first else { return XCTFail() }
            scopes.append(scope)
        }
        XCTAssertEqual(delays, [50, 100, 200, 400, 800, 1000, 1000, 1000])
        // The fifth failed re-arm escalates to taking the adapter down and up (once).
        XCTAssertEqual(scopes, [.full, .full, .full, .full, .powerCycle, .full, .full, .full])
        XCTAssertEqual(s.phase, .fault(.hung))
        XCTAssertEqual(s.escalation, .powerCycled)
        // The first failure warns; the retries do not repeat it.
        let back = on(.armed(nil))
        XCTAssertTrue(back.contains(.notice("back on air after hung (re-arms: hung 1)")))
        XCTAssertEqual(s.escalation, .retrying)
        XCTAssertEqual(s.ladderFailures, 0)
    }

    func testFaultStaysShownWhileRetrying() {
        armed()
        // One missed answer is not yet "hung": the probe is asked again at once.
        XCTAssertEqual(on(.probed(.timeout)), [.probe])
        XCTAssertEqual(s.phase, .advertising)
        on(.probed(.timeout))
        XCTAssertEqual(s.phase, .fault(.hung))
        on(.rearmTimer, after: 50)
        XCTAssertEqual(s.phase, .fault(.hung), "a retry must not look like starting")
    }

    func testRemovalWaitsForTheKernelThenRearmsOnRegistration() {
        armed()
        let gone = on(.adapterUnregistered)
        XCTAssertTrue(gone.contains(.closeAdapter))
        XCTAssertTrue(gone.contains(.scheduleRearm(afterMs: Supervisor.backoffCapMs)))
        XCTAssertEqual(s.phase, .fault(.missing))
        XCTAssertEqual(on(.armed(.missing), after: 1000).last, .scheduleRearm(afterMs: 50))
        // The controller comes back: re-arm at once, not at the next back-off step.
        XCTAssertEqual(on(.adapterRegistered, after: 10), [.scheduleRearm(afterMs: Supervisor.settleMs)])
        XCTAssertEqual(on(.rearmTimer, after: 30), [.arm(.full)])
        on(.armed(nil))
        XCTAssertEqual(s.rearms[.removed], 1)
    }

    func testRfkillUnblockRearmsImmediately() {
        armed()
        on(.adapterDown)
        on(.rearmTimer, after: 30)
        on(.armed(.blocked))
        XCTAssertEqual(s.phase, .fault(.blocked))
        XCTAssertEqual(on(.rfkillChanged, after: 500), [.scheduleRearm(afterMs: 0)])
        on(.rearmTimer)
        on(.armed(nil))
        XCTAssertEqual(s.rearms, [.rfkill: 1])
    }

    func testRfkillEventsWhileHealthyAreIgnored() {
        armed()
        XCTAssertEqual(on(.rfkillChanged), [])
    }

    func testFaultArrivingWhileRearmingIsFoldedIn() {
        armed()
        on(.interference(.advertisingOverwritten))
        on(.rearmTimer, after: 30)
        // The adapter goes down while the re-arm is in flight: the arm fails, the retry covers both.
        XCTAssertEqual(on(.adapterDown), [.cancelProbe, .scheduleRearm(afterMs: Supervisor.settleMs)])
        let failed = on(.armed(.down))
        XCTAssertEqual(failed.last, .scheduleRearm(afterMs: 50))
        XCTAssertEqual(on(.rearmTimer, after: 50), [.arm(.full)])
        on(.armed(nil))
        XCTAssertEqual(s.rearms, [.down: 1])
    }

    func testInterferenceStormIsThrottled() {
        armed()
        for _ in 0..<Supervisor.stormThreshold {
            on(.interference(.advertisingDisabled), after: 100)
            on(.rearmTimer, after: 30)
            on(.armed(nil))
        }
        XCTAssertEqual(on(.interference(.advertisingDisabled), after: 10).last,
                       .scheduleRearm(afterMs: Supervisor.backoffCapMs))
        XCTAssertEqual(s.rearms[.disabled], Supervisor.stormThreshold)
    }

    func testConfigChangeArmsOnlyWhatChanged() {
        armed()
        XCTAssertEqual(on(.configChanged(.data)), [.arm(.data)])
        on(.armed(nil))
        XCTAssertEqual(on(.configChanged(.parameters)), [.arm(.parameters)])
        on(.armed(nil))
        XCTAssertEqual(s.totalRearms, 0, "edits are not faults")
    }

    func testConfigChangeDuringAFaultWaitsForTheRetry() {
        armed()
        on(.adapterUnregistered)
        XCTAssertEqual(on(.configChanged(.data)), [])
        XCTAssertEqual(on(.rearmTimer, after: 1000), [.arm(.full)])
    }

    func testStopDisablesAndThenIgnoresEverything() {
        armed()
        XCTAssertEqual(on(.stop), [.cancelRearm, .cancelProbe, .disableAdvertising])
        XCTAssertEqual(on(.adapterDown), [])
        XCTAssertEqual(on(.rearmTimer), [])
        XCTAssertEqual(s.phase, .stopped)
    }

    func testRearmSummaryOrder() {
        armed()
        on(.hardwareError)
        on(.rearmTimer, after: 30)
        on(.armed(nil))
        on(.interference(.reset), after: 3000)
        on(.rearmTimer, after: 30)
        on(.armed(nil))
        XCTAssertEqual(s.rearmSummary, "reset 1, hardware-error 1")
    }
}

final class InterferenceTests: XCTestCase {
    let ours = [UInt8](repeating: 0xaa, count: 31)

    func testClassification() {
        XCTAssertEqual(classifyForeignCommand(.reset, [], ourData: ours, ourHandle: nil), .reset)
        XCTAssertEqual(classifyForeignCommand(.leSetAdvertiseEnable, [0], ourData: ours, ourHandle: nil), .advertisingDisabled)
        XCTAssertNil(classifyForeignCommand(.leSetAdvertiseEnable, [1], ourData: ours, ourHandle: nil))
        XCTAssertNil(classifyForeignCommand(.leSetAdvertisingData, LESetAdvertisingData(data: ours).parameters, ourData: ours, ourHandle: nil))
        XCTAssertEqual(classifyForeignCommand(.leSetAdvertisingData, LESetAdvertisingData(data: [1, 2]).parameters, ourData: ours, ourHandle: nil),
                       .advertisingOverwritten)
        XCTAssertEqual(classifyForeignCommand(.leSetAdvertisingData, [0x1f], ourData: ours, ourHandle: nil), .advertisingOverwritten)
        XCTAssertEqual(classifyForeignCommand(.leSetAdvertisingParameters, [], ourData: ours, ourHandle: nil), .parametersChanged)
        XCTAssertNil(classifyForeignCommand(.leSetScanEnable, [1, 0], ourData: ours, ourHandle: nil))
    }

    func testExtendedCommandsConcernOnlyOurSet() {
        XCTAssertEqual(classifyForeignCommand(.leSetExtendedAdvertisingEnable, [0, 0], ourData: ours, ourHandle: 2), .advertisingDisabled)
        XCTAssertNil(classifyForeignCommand(.leSetExtendedAdvertisingEnable, [0, 1, 1, 0, 0, 0], ourData: ours, ourHandle: 2))
        XCTAssertEqual(classifyForeignCommand(.leSetExtendedAdvertisingEnable, [0, 2, 1, 0, 0, 0, 2, 0, 0, 0], ourData: ours, ourHandle: 2),
                       .advertisingDisabled)
        XCTAssertNil(classifyForeignCommand(.leSetExtendedAdvertisingData, [1, 3, 1, 1, 0], ourData: ours, ourHandle: 2))
        XCTAssertEqual(classifyForeignCommand(.leSetExtendedAdvertisingData, [2, 3, 1, 1, 0], ourData: ours, ourHandle: 2), .advertisingOverwritten)
        XCTAssertEqual(classifyForeignCommand(.leRemoveAdvertisingSet, [2], ourData: ours, ourHandle: 2), .advertisingDisabled)
        XCTAssertEqual(classifyForeignCommand(.leClearAdvertisingSets, [], ourData: ours, ourHandle: 2), .advertisingDisabled)
        // Truncated parameters never trap.
        XCTAssertNil(classifyForeignCommand(.leSetExtendedAdvertisingEnable, [0], ourData: ours, ourHandle: 2))
    }

    func testSentCommandLogRecognisesOurOwnCommands() {
        var log = SentCommandLog()
        log.recordSent(.leSetAdvertiseEnable, [0], at: 0)
        log.recordSent(.leSetAdvertiseEnable, [1], at: 1)
        XCTAssertTrue(log.consume(.leSetAdvertiseEnable, [1], at: 2))
        XCTAssertFalse(log.consume(.leSetAdvertiseEnable, [1], at: 3), "each is consumed once")
        XCTAssertFalse(log.consume(.leSetAdvertiseEnable, [0], at: 6000), "forgotten after the horizon")
        for i in 0..<200 { log.recordSent(.reset, [], at: Int64(i)) }
        XCTAssertEqual(log.count, SentCommandLog.capacity)
    }
}

final class DebouncerTests: XCTestCase {
    func testBurstFiresAfterQuietButNeverLaterThanTheCap() {
        var d = Debouncer(quietMs: 150, maxDelayMs: 600)
        XCTAssertEqual(d.event(at: 1000), 1150)
        XCTAssertEqual(d.event(at: 1100), 1250)
        XCTAssertEqual(d.event(at: 1500), 1600)
        XCTAssertEqual(d.event(at: 1550), 1600, "a writer that never stops cannot postpone past the cap")
        XCTAssertTrue(d.isPending)
        d.fired()
        XCTAssertFalse(d.isPending)
        XCTAssertEqual(d.event(at: 5000), 5150)
    }
}
