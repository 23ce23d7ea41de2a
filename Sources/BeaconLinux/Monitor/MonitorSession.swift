import BeaconKit
import Glibc

/// The observer daemon of SPEC §10 on one adapter: a passive scan (duplicates reported), started
/// again with back-off when it fails or the adapter goes, and restarted when it goes deaf
/// (`ScanDeafness`); BeaconKit's `BeaconTracker` decides heard and silent and says each change
/// once; every change goes to the outputs as a `MonitorStatus`. The owner routes the adapter's
/// device events here and calls `stop` on SIGTERM; the loop is stopped once all is said.
/// `once` (`monitor --once`): no outputs, scanning until `stop`; the owner prints the table.
///
/// Size: 18 stored fields: the observer's wiring on one adapter; its decisions are already parts
/// (BeaconTracker, RetryBackoff, ScanDeafness), each with the loop timer that runs it, beside the
/// scan they share and the stop that bounds every goodbye.
public final class MonitorSession: MonitorStatusSource, MonitorScanEvents {
    public static let retryMs: ClosedRange<Int64> = 1000...30_000
    /// An adapter back (up, registered) is tried again this soon, whatever the back-off.
    public static let backAfterMs: Int64 = 200
    /// How long the outputs' and the scan's goodbyes may take before the loop stops anyway.
    public static let stopLimitMs: Int64 = 1500

    public private(set) var config: MonitorConfig
    public let once: Bool
    private let loop: EventLoop
    private let log: Logger
    private let outputs: [MonitorOutput]
    private let makeScan: (MonitorScanEvents) -> MonitorScan
    private var scan: MonitorScan?
    public private(set) var tracker: BeaconTracker
    private var retry = RetryBackoff(range: MonitorSession.retryMs)
    private var deafness: ScanDeafness
    public private(set) var scanning = false
    /// "scanning on ..." is said once, and again after a problem (not at every rescan).
    private var saidScanning = false
    private let tickTimer: LoopTimer
    private let retryTimer: LoopTimer
    private let deafTimer: LoopTimer
    private let stopTimer: LoopTimer
    /// Why the monitor gave up: permission denied (or, `once`, any failure to scan).
    public private(set) var fatalFailure: ScanFailure?
    public private(set) var isStopping = false

    /// `makeScan`: a new scan for each attempt, telling the session what it hears.
    public init(config: MonitorConfig, once: Bool, loop: EventLoop, log: Logger, outputs: [MonitorOutput],
                makeScan: @escaping (MonitorScanEvents) -> MonitorScan) {
        self.config = config; self.once = once; self.loop = loop; self.log = log; self.outputs = outputs
        self.makeScan = makeScan
        tracker = BeaconTracker(expectations: config.expectations, silentAfterMs: Int64(config.silentAfterS) * 1000, startMs: loop.now)
        deafness = ScanDeafness(rescanS: config.rescanS)
        tickTimer = loop.makeTimer(); retryTimer = loop.makeTimer(); deafTimer = loop.makeTimer()
        stopTimer = loop.makeTimer()
    }

    public var status: MonitorStatus {
        MonitorStatus(adapter: config.adapter, tracker: tracker, scanning: scanning, scanProblem: retry.problem)
    }

    public func start() {
        for o in outputs { o.start(self) }
        // Nothing to expect (issue 32: the outputs publish this machine's beacon only): no scan.
        if !config.expectations.isEmpty { startScan() }
        tick()
    }

    /// monitor.toml edited and accepted (issue 38), with the same adapter and, as at the start,
    /// beacons to scan for or none: the expected beacons (what is known of those kept stays),
    /// `silent_after_s` and `rescan_s` as they now are. `outputs` runs once the session's status
    /// is the new one and before it is shown (the outputs take the new configuration there).
    public func reconfigure(_ new: MonitorConfig, outputs reconfigureOutputs: () -> Void) {
        guard !isStopping else { return }
        config = new
        tracker = tracker.reconfigured(expectations: new.expectations, silentAfterMs: Int64(new.silentAfterS) * 1000, now: loop.now)
        deafness = ScanDeafness(rescanS: new.rescanS)
        if scanning { deafness.scanStarted(advertsTotal: tracker.advertsTotal) }
        reconfigureOutputs()
        show([])
        tick()
    }

    /// A kernel device event for the monitor's adapter.
    public func deviceEvent(_ kind: HCIDeviceEventKind) {
        switch kind {
        case .down where scanning, .unregistered where scanning:
            scanLost("\(config.adapter) went \(kind == .down ? "down" : "away")")
        case .up where !scanning, .registered where !scanning:
            // Back: no need to wait for the back-off.
            retry.shorten()
            retryTimer.schedule(afterMs: Self.backAfterMs) { [weak self] in self?.startScan() }
        default: break
        }
    }

    // MARK: MonitorScanEvents

    public func scanHeard(_ reports: [AdvertisingReport]) {
        let now = loop.now, wall = wallClockSeconds()
        var events: [TrackerEvent] = []
        for r in reports { events += tracker.record(r, atMs: now, wallSeconds: wall) }
        handle(events)
    }

    public func scanBroke(_ error: Errno) { scanLost("\(config.adapter) stopped answering (\(error))") }

    // MARK: scanning

    private func startScan() {
        guard !isStopping else { return }
        scan?.close()
        let s = makeScan(self)
        scan = s
        s.start { [weak self] f in self?.scanStarted(s, f) }
    }

    private func scanStarted(_ s: MonitorScan, _ failure: ScanFailure?) {
        if let failure { return scanFailed(failure) }
        scanning = true
        if retry.succeeded() != nil || (!once && !saidScanning) {
            saidScanning = true
            log.info("scanning on \(config.adapter) (\(s.family?.rawValue ?? "?") commands, passive, duplicates reported)")
        }
        deafness.scanStarted(advertsTotal: tracker.advertsTotal)
        scheduleDeafnessCheck()
        show([])
    }

    private func scanFailed(_ f: ScanFailure) {
        scanning = false
        if once {
            writeStandardError("altbeacond: cannot scan on \(config.adapter): \(f)\n")
            fatalFailure = f
            return stop()
        }
        if f == .permission {
            log.error("permission denied on \(config.adapter): scanning needs CAP_NET_RAW and CAP_NET_ADMIN")
            fatalFailure = f
            return stop()
        }
        scanLost(f == .missing ? "no adapter \(config.adapter); waiting for it" : "cannot scan on \(config.adapter) (\(f))")
    }

    /// Scanning ended (adapter gone, down, failing): said once per cause, tried again with back-off.
    private func scanLost(_ why: String) {
        guard !isStopping else { return }
        scanning = false
        scan?.close()
        deafTimer.cancel()
        let (say, afterMs) = retry.failed(why)
        if say { log.warning("\(why); scanning again with back-off") }
        show([])
        retryTimer.schedule(afterMs: afterMs) { [weak self] in self?.startScan() }
    }

    private func scheduleDeafnessCheck() {
        deafTimer.schedule(afterMs: deafness.checkAfterMs) { [weak self] in self?.checkDeafness() }
    }

    private func checkDeafness() {
        guard scanning, !isStopping, let scan else { return }
        switch deafness.check(advertsTotal: tracker.advertsTotal) {
        case .cycle:
            // [monitor] rescan_s: the controller reports an advertiser once per scan: off and on.
            scan.pause { [weak self] _ in
                guard let self else { return }
                scan.resume { [weak self] f in
                    guard let self else { return }
                    if let f { return scanLost("cannot scan again on \(config.adapter) (\(f))") }
                    scheduleDeafnessCheck()
                }
            }
        case .deaf:
            log.notice("nothing heard on \(config.adapter) for \(ScanDeafness.deafAfterMs / 1000) s; restarting the scan")
            scan.stop(timeoutMs: Scanner.stopTimeoutMs) { [weak self] _ in self?.startScan() }
        case .hearing:
            scheduleDeafnessCheck()
        }
    }

    // MARK: changes

    private func tick() {
        handle(tracker.tick(now: loop.now))
        guard !isStopping else { return }
        if let next = tracker.nextDeadlineMs {
            tickTimer.schedule(afterMs: max(0, next - loop.now)) { [weak self] in self?.tick() }
        }
    }

    private func handle(_ events: [TrackerEvent]) {
        guard !events.isEmpty else { return }
        tick()
        show(events)
    }

    private func show(_ changes: [TrackerEvent]) {
        let s = status
        for o in outputs { o.show(s, changes: changes) }
    }

    // MARK: the end

    /// Stops scanning and lets each output say its last word, then stops the loop (after
    /// `stopLimitMs` at most).
    public func stop() {
        guard !isStopping else { return }
        isStopping = true
        tickTimer.cancel(); retryTimer.cancel(); deafTimer.cancel()
        var left = outputs.count + 1
        let loop = loop, bound = stopTimer
        let done = {
            left -= 1
            if left == 0 { bound.cancel(); loop.stop() }
        }
        let s = status
        for o in outputs { o.stop(s, done) }
        if scanning, let scan { scan.stop(timeoutMs: Scanner.stopTimeoutMs) { _ in done() } } else { done() }
        bound.schedule(afterMs: Self.stopLimitMs) { loop.stop() }
    }

    /// Lets the adapter go (after the loop stopped).
    public func close() { scan?.close() }
}
