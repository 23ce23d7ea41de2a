import BeaconKit
import XCTest
@testable import BeaconLinux

/// A scan that does what it is told a turn later: start fails with the next of `failures` (nil:
/// scanning), pause, resume and stop always work.
private final class FakeScan: MonitorScan {
    let loop: EventLoop
    weak var events: MonitorScanEvents?
    let failure: ScanFailure?
    var family: ScanFamily?
    var calls: [String] = []

    init(loop: EventLoop, events: MonitorScanEvents, failure: ScanFailure?) {
        self.loop = loop; self.events = events; self.failure = failure
    }

    func start(_ done: @escaping (ScanFailure?) -> Void) {
        calls.append("start")
        loop.post { [self] in
            if failure == nil { family = .legacy }
            done(failure)
        }
    }
    func pause(_ done: @escaping (HCICommandFailure?) -> Void) { calls.append("pause"); family = nil; loop.post { done(nil) } }
    func resume(_ done: @escaping (ScanFailure?) -> Void) {
        calls.append("resume")
        loop.post { [self] in family = .legacy; done(nil) }
    }
    func stop(timeoutMs: Int64, _ done: @escaping (HCICommandFailure?) -> Void) { calls.append("stop"); family = nil; loop.post { done(nil) } }
    func close() { calls.append("close"); family = nil }
}

/// Every status an output was shown, and whether it was started and stopped.
private final class RecordingMonitorOutput: MonitorOutput {
    var started = false
    var shown: [(status: MonitorStatus, changes: [TrackerEvent])] = []
    var stopped = false
    func start(_ source: MonitorStatusSource) { started = true }
    func show(_ status: MonitorStatus, changes: [TrackerEvent]) { shown.append((status, changes)) }
    func stop(_ status: MonitorStatus, _ done: @escaping () -> Void) { stopped = true; done() }
    var changes: [TrackerEvent] { shown.flatMap(\.changes) }
    var texts: [String] { shown.map(\.status.text) }
}

final class MonitorSessionTests: ScriptedTestCase {
    private var scans: [FakeScan] = []
    /// What each new scan's start gives, in order; nil (scanning) once they are used up.
    private var failures: [ScanFailure?] = []
    /// When (virtual ms) each scan was made.
    private var madeAt: [Int64] = []
    private var output: RecordingMonitorOutput!

    override func setUp() {
        super.setUp()
        scans = []; failures = []; madeAt = []
        output = RecordingMonitorOutput()
    }

    private let lobby = Expectation(name: "lobby", frame: AltBeaconFrame(TestBeacons.identity()))

    private func session(rescanS: Int = 0, once: Bool = false) -> MonitorSession {
        var config = MonitorConfig(adapter: "hci1", adapterIndex: 1, silentAfterS: 30, expectations: [lobby])
        config.rescanS = rescanS
        let s = MonitorSession(config: config, once: once, loop: loop, log: log, outputs: once ? [] : [output]) { [weak self, loop = loop!] events in
            // Gone: a scan that fails as a missing adapter's does.
            guard let self else { return FakeScan(loop: loop, events: events, failure: .missing) }
            let scan = FakeScan(loop: loop, events: events, failure: failures.isEmpty ? nil : failures.removeFirst())
            scans.append(scan)
            madeAt.append(loop.now)
            return scan
        }
        keep.append(s)
        return s
    }

    private func hearLobby(_ s: MonitorSession) {
        s.scanHeard([AdvertisingReport(eventType: 3, addressType: 0, address: [1, 2, 3, 4, 5, 6], rssi: -60, data: TestBeacons.payload())])
    }

    func testScanningThenHeardThenSilentReachTheOutputs() {
        let s = session()
        s.start()
        XCTAssertTrue(output.started)
        XCTAssertTrue(loop.run(atMostMs: 10, until: { s.scanning }))
        XCTAssertEqual(logLines.count("scanning on hci1 (legacy commands, passive, duplicates reported)"), 1)
        XCTAssertEqual(output.texts.last, "scanning on hci1; 0 of 1 expected beacons heard (silent: lobby)")
        hearLobby(s)
        XCTAssertEqual(output.changes, [.heard(name: "lobby", first: true)])
        XCTAssertEqual(output.texts.last, "scanning on hci1; 1 of 1 expected beacons heard")
        hearLobby(s)
        XCTAssertEqual(output.changes.count, 1, "a sighting without a change is not shown")
        loop.run(forMs: 30_001)
        guard case .silent(name: "lobby", _)? = output.changes.last else { return XCTFail("not silent: \(output.changes)") }
        XCTAssertEqual(output.changes.count, 2)
    }

    func testScanRetriedWithBackoffAndEachCauseSaidOnce() {
        failures = [.missing, .missing, .missing, .blocked, nil]
        let s = session()
        s.start()
        XCTAssertTrue(loop.run(atMostMs: 20_000, until: { s.scanning }))
        XCTAssertEqual(madeAt, [0, 1000, 3000, 7000, 15_000], "1, 2, 4, 8 s apart")
        XCTAssertEqual(logLines.count("no adapter hci1; waiting for it; scanning again with back-off"), 1)
        XCTAssertEqual(logLines.count("cannot scan on hci1 (blocked by rfkill); scanning again with back-off"), 1)
        XCTAssertEqual(output.texts[0], "no adapter hci1; waiting for it; 0 of 1 expected beacons heard (silent: lobby)")
        XCTAssertEqual(logLines.count("scanning on hci1"), 1)
        // Lost again: the back-off starts over at 1 s.
        let downAt = loop.now
        s.deviceEvent(.down)
        XCTAssertFalse(s.scanning)
        XCTAssertTrue(loop.run(atMostMs: 1_100, until: { s.scanning }))
        XCTAssertEqual(madeAt.last, downAt + 1000)
        XCTAssertEqual(logLines.count("hci1 went down; scanning again with back-off"), 1)
        XCTAssertEqual(logLines.count("scanning on hci1"), 2, "said again after a problem")
    }

    func testAnAdapterBackIsTriedAtOnce() {
        failures = Array(repeating: .missing, count: 5)
        let s = session()
        s.start()
        loop.run(forMs: 15_500)   // attempts at 0, 1, 3, 7, 15 s; the next would be at 31 s
        XCTAssertEqual(scans.count, 5)
        s.deviceEvent(.registered)
        XCTAssertTrue(loop.run(atMostMs: 300, until: { s.scanning }))
        XCTAssertEqual(madeAt.last, 15_700)
    }

    func testADeafScanIsRestartedAndAHearingOneIsNot() {
        let s = session()
        s.start()
        XCTAssertTrue(loop.run(atMostMs: 10, until: { s.scanning }))
        // Heard every 20 s: the checks at 60 and 120 s find adverts.
        for _ in 0..<6 {
            loop.run(forMs: 20_000)
            hearLobby(s)
        }
        XCTAssertEqual(scans.count, 1)
        XCTAssertEqual(logLines.count("nothing heard"), 0)
        // Then nothing: at the next check but one the scan is restarted.
        loop.run(forMs: 120_000)
        XCTAssertEqual(logLines.count("nothing heard on hci1 for 60 s; restarting the scan"), 1)
        XCTAssertEqual(scans.first.map { Array($0.calls.prefix(2)) }, ["start", "stop"])
        XCTAssertEqual(scans.count, 2)
        XCTAssertTrue(s.scanning)
    }

    func testRescanCyclesTheScanOffAndOn() {
        let s = session(rescanS: 15)
        s.start()
        loop.run(forMs: 46_000)
        XCTAssertEqual(scans.count, 1)
        XCTAssertEqual(scans[0].calls, ["start", "pause", "resume", "pause", "resume", "pause", "resume"])
        XCTAssertEqual(logLines.count("scanning on"), 1, "not said at every rescan")
    }

    func testPermissionDeniedStopsTheMonitor() {
        failures = [.permission]
        let s = session()
        s.start()
        XCTAssertTrue(loop.run(atMostMs: 10, until: { loop.isStopped }))
        XCTAssertEqual(s.fatalFailure, .permission)
        XCTAssertTrue(output.stopped)
        XCTAssertEqual(logLines.count("permission denied on hci1"), 1)
    }

    func testOnceGivesUpOnAnyFailureWithoutRetrying() {
        failures = [.missing]
        let s = session(once: true)
        s.start()
        XCTAssertTrue(loop.run(atMostMs: 5000, until: { loop.isStopped }))
        XCTAssertEqual(s.fatalFailure, .missing)
        XCTAssertEqual(scans.count, 1)
    }

    func testStopEndsTheScanTellsTheOutputsAndStopsTheLoop() {
        let s = session()
        s.start()
        XCTAssertTrue(loop.run(atMostMs: 10, until: { s.scanning }))
        s.stop()
        XCTAssertTrue(output.stopped)
        XCTAssertTrue(loop.run(atMostMs: 10, until: { loop.isStopped }), "the scan's stop completes on a later turn")
        XCTAssertEqual(scans[0].calls, ["start", "stop"])
        XCTAssertNil(s.fatalFailure)
    }
}
