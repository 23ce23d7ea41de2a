import XCTest
@testable import BeaconKit

/// The on-air policy: arming, faults, edits with generations, the arm deadline, frames' timers.
final class OnAirPolicyTests: PolicyTestCase {

    func testStartArmsEverythingThenProbesAndConfirmsTheGeneration() {
        let a = on(.start)
        XCTAssertEqual(arm(in: a), .full)
        XCTAssertEqual(scheduled(.armDeadline, in: a), RearmPlan.deadlineMs)
        let back = armed()
        XCTAssertEqual(confirmed(in: back), 1)
        XCTAssertTrue(back.contains(.cancel(.armDeadline)))
        XCTAssertEqual(on(.timer(.probe), after: 5000), [.probe])
        XCTAssertEqual(on(.probed(nil)), [.schedule(.probe, afterMs: 5000)])
        XCTAssertEqual(s.totalRearms, 0)
    }

    func testInterferenceRearmsParametersAfterSettlingAndCountsTheCause() {
        onAir()
        let a = on(.monitored(.reset, [], ours: OnAirAdvertising(handles: nil, payloads: [])))
        XCTAssertEqual(scheduled(.rearm, in: a), RearmPlan.settleMs)
        // Our own command seen on the monitor is not interference.
        s.noteSent(.leSetAdvertiseEnable, [0], at: now)
        XCTAssertEqual(on(.monitored(.leSetAdvertiseEnable, [0], ours: OnAirAdvertising(handles: nil, payloads: []))), [])
        XCTAssertEqual(arm(in: rearmTimer(after: 30)), .parameters)
        let back = armed()
        XCTAssertTrue(notices(in: back).contains("back on air after reset (re-arms: reset 1)"))
        XCTAssertEqual(s.rearms[.reset], 1)
        XCTAssertEqual(s.phase, .advertising)
    }

    func testFailuresBackOffExponentiallyWithACap() {
        XCTAssertEqual(RearmPlan.backoff(failures: 1), 50)
        XCTAssertEqual(RearmPlan.backoff(failures: 2), 100)
        XCTAssertEqual(RearmPlan.backoff(failures: 6), 1000)
        XCTAssertEqual(RearmPlan.backoff(failures: 1000), 1000)
        XCTAssertEqual(RearmPlan.backoff(failures: 1000, capMs: RearmPlan.busyBackoffCapMs), 5000)
        on(.start)
        var delays: [Int64] = []
        for _ in 0..<8 {
            guard let ms = scheduled(.rearm, in: armed(.rejected("LE Set Advertising Parameters failed"))) else { return XCTFail() }
            delays.append(ms)
            XCTAssertNotNil(arm(in: rearmTimer(after: ms)))
        }
        XCTAssertEqual(delays, [50, 100, 200, 400, 800, 1000, 1000, 1000])
        XCTAssertEqual(s.phase, .fault(.failing))
        // A time-out already waited its command's deadline: the retry goes at once.
        XCTAssertEqual(scheduled(.rearm, in: armed(.timeout)), RearmPlan.settleMs)
        XCTAssertEqual(s.phase, .fault(.hung))
    }

    func testFaultStaysShownWhileRetrying() {
        onAir()
        XCTAssertEqual(on(.probed(.timeout)), [.probe], "one missed answer is asked again")
        XCTAssertEqual(s.phase, .advertising)
        on(.probed(.timeout))
        XCTAssertEqual(s.phase, .fault(.hung))
        _ = rearmTimer(after: 50)
        XCTAssertEqual(s.phase, .fault(.hung), "a retry must not look like starting")
    }

    func testRemovalAbandonsTheArmInFlightAndRearmsOnRegistration() {
        onAir()
        on(.adapterDown)
        XCTAssertNotNil(arm(in: rearmTimer(after: 30)))
        let gone = on(.adapterUnregistered)
        XCTAssertTrue(gone.contains(.abandonArm), "the arm in flight cannot complete on a closed adapter")
        XCTAssertTrue(gone.contains(.closeAdapter))
        XCTAssertNil(s.armInFlight)
        XCTAssertEqual(s.phase, .fault(.missing))
        XCTAssertEqual(scheduled(.rearm, in: on(.adapterRegistered, after: 10)), RearmPlan.settleMs)
        XCTAssertEqual(arm(in: rearmTimer(after: 30)), .full)
        armed()
        XCTAssertEqual(s.phase, .advertising)
        XCTAssertEqual(s.rearms[.removed], 1)
    }

    func testRfkillUnblockRearmsImmediatelyAndHealthyRfkillEventsAreIgnored() {
        onAir()
        XCTAssertEqual(on(.rfkillChanged), [])
        on(.adapterDown)
        _ = rearmTimer(after: 30)
        armed(.blocked)
        XCTAssertEqual(s.phase, .fault(.blocked))
        XCTAssertEqual(on(.rfkillChanged, after: 500), [.schedule(.rearm, afterMs: 0)])
        _ = rearmTimer()
        armed()
        XCTAssertEqual(s.rearms, [.rfkill: 1])
    }

    func testInterferenceStormIsThrottled() {
        onAir()
        let ours = OnAirAdvertising(handles: nil, payloads: [])
        for _ in 0..<RearmHistory.stormThreshold {
            on(.monitored(.leSetAdvertiseEnable, [0], ours: ours), after: 100)
            _ = rearmTimer(after: 30)
            armed()
        }
        XCTAssertEqual(scheduled(.rearm, in: on(.monitored(.leSetAdvertiseEnable, [0], ours: ours), after: 10)), RearmPlan.backoffCapMs)
        XCTAssertEqual(s.rearms[.disabled], RearmHistory.stormThreshold)
    }

    func testEditsArmOnlyWhatChanged() {
        onAir()
        let data = on(.configChanged(Self.make(major: 7), generation: 2))
        XCTAssertEqual(arm(in: data), .data)
        XCTAssertEqual(confirmed(in: armed()), 2)
        XCTAssertEqual(arm(in: on(.configChanged(Self.make("[bluetooth]\ninterval_ms = 200", major: 7), generation: 3))), .parameters)
        XCTAssertEqual(confirmed(in: armed()), 3)
        // An edit that changes nothing on air (the probe period) is on air at once.
        let probe = on(.configChanged(Self.make("[bluetooth]\ninterval_ms = 200\n[watchdog]\ncheck_interval_s = 9", major: 7), generation: 4))
        XCTAssertNil(arm(in: probe))
        XCTAssertEqual(confirmed(in: probe), 4)
        XCTAssertEqual(s.probeIntervalMs, 9000)
        XCTAssertEqual(s.totalRearms, 0, "edits are not faults")
    }

    /// Issue: an edit that lands while an arm is in flight must not be lost.
    func testAnEditDuringAnArmIsArmedWhenThatArmCompletes() {
        on(.start)
        let started = s.armInFlight
        XCTAssertEqual(on(.configChanged(Self.make(major: 9), generation: 2)), [], "nothing new while the arm is in flight")
        let back = on(.armed(generation: started!, .success(AirSummary())))
        XCTAssertNil(confirmed(in: back), "the old generation went on air: not confirmed")
        guard let (c, g) = armedConfig(in: back) else { return XCTFail("the newest config must be armed: \(back)") }
        XCTAssertEqual(g, 2)
        XCTAssertEqual(c.beacon.major, 9)
        XCTAssertEqual(confirmed(in: armed()), 2)
        XCTAssertEqual(s.phase, .advertising)
    }

    func testAnEditDuringAFaultIsArmedByTheNextRetry() {
        onAir()
        on(.adapterUnregistered)
        XCTAssertEqual(on(.configChanged(Self.make(major: 5), generation: 2)), [])
        let retry = rearmTimer(after: 1000)
        XCTAssertEqual(armedConfig(in: retry)?.0.beacon.major, 5)
        XCTAssertEqual(armedConfig(in: retry)?.1, 2)
        XCTAssertEqual(confirmed(in: armed()), 2)
    }

    /// Issue: a completion that never comes cannot park the beacon.
    func testAnArmPastItsDeadlineIsAbandonedAndRetried() {
        on(.start)
        let gen = s.armInFlight!
        let late = on(.timer(.armDeadline), after: RearmPlan.deadlineMs)
        XCTAssertTrue(late.contains(.abandonArm))
        XCTAssertEqual(s.phase, .fault(.hung))
        XCTAssertNotNil(scheduled(.rearm, in: late))
        // The abandoned arm's outcome, should it come after all, changes nothing.
        XCTAssertEqual(on(.armed(generation: gen, .success(AirSummary()))), [])
        XCTAssertEqual(s.phase, .fault(.hung))
        XCTAssertNotNil(arm(in: rearmTimer(after: 50)))
        armed()
        XCTAssertEqual(s.phase, .advertising)
    }

    func testRotationAndTelemetryTimersRunOnlyWhileOnAir() {
        on(.start)
        let a = armed(summary: AirSummary(rotates: true, refreshesPayloads: true))
        XCTAssertEqual(scheduled(.rotate, in: a), 1000)
        XCTAssertEqual(scheduled(.payloadRefresh, in: a), OnAirUpkeep.payloadRefreshMs)
        XCTAssertEqual(on(.timer(.rotate), after: 1000), [.rotate])
        XCTAssertEqual(on(.rotated(nil)), [.schedule(.rotate, afterMs: 1000)])
        XCTAssertEqual(on(.timer(.payloadRefresh), after: 9000), [.refreshPayloads])
        // A failed rotation is a fault like a failed probe: one miss is asked again.
        XCTAssertEqual(on(.rotated(.timeout)), [.probe])
        let hung = on(.probed(.timeout))
        XCTAssertTrue(hung.contains(.cancel(.rotate)))
        XCTAssertEqual(on(.timer(.rotate), after: 1000), [], "no rotation while off air")
    }

    func testStopAbandonsCancelsEveryTimerAndThenIgnoresEverything() {
        on(.start)
        let a = on(.stop)
        XCTAssertTrue(a.contains(.abandonArm))
        XCTAssertTrue(a.contains(.disableAdvertising))
        for t in PolicyTimer.allCases { XCTAssertTrue(a.contains(.cancel(t))) }
        XCTAssertEqual(on(.adapterDown), [])
        XCTAssertEqual(rearmTimer(), [])
        XCTAssertEqual(s.phase, .stopping)
    }

    func testScopeOfAnEdit() {
        let a = Self.make()
        XCTAssertNil(ArmScope.needed(from: a, to: a))
        XCTAssertEqual(ArmScope.needed(from: a, to: Self.make(major: 3)), .data)
        XCTAssertEqual(ArmScope.needed(from: a, to: Self.make("[ibeacon]")), .parameters, "a frame added lays the slots out anew")
        XCTAssertEqual(ArmScope.needed(from: a, to: Self.make("[bluetooth]\ntx_power_dbm = 4")), .parameters)
        XCTAssertNil(ArmScope.needed(from: a, to: Self.make("[watchdog]\ncheck_interval_s = 30")))
    }
}
