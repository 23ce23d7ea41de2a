import BeaconKit

/// What a monitor's scan tells the session (reports arrive only while scanning): a scanner's
/// events, in the session's words.
public protocol MonitorScanEvents: ScannerDelegate {
    func scanHeard(_ reports: [AdvertisingReport])
    /// The adapter's socket broke while scanning (it went away under us).
    func scanBroke(_ error: Errno)
}

extension MonitorScanEvents {
    public func scanner(_ event: ScannerEvent) {
        switch event {
        case .reports(let r): scanHeard(r)
        case .lost(let e): scanBroke(e)
        }
    }
}

/// The scan a `MonitorSession` drives: a `Scanner` on a kernel adapter, a fake in tests. Every
/// `done` runs once, on a later loop turn; `stop` and `close` supersede a start in progress.
public protocol MonitorScan: AnyObject {
    /// The commands scanning was enabled with; nil while not scanning.
    var family: ScanFamily? { get }
    func start(_ done: @escaping (ScanFailure?) -> Void)
    func pause(_ done: @escaping (HCICommandFailure?) -> Void)
    func resume(_ done: @escaping (ScanFailure?) -> Void)
    func stop(timeoutMs: Int64, _ done: @escaping (HCICommandFailure?) -> Void)
    func close()
}

extension Scanner: MonitorScan {
    /// The monitor's scan on adapter `index`: passive, duplicates reported, reports read in
    /// batches `coalesceMs` apart, told to `events`.
    public static func monitorScan(control: HCIControlSocket, index: UInt16, loop: EventLoop, log: Logger, coalesceMs: Int64,
                                   events: MonitorScanEvents) -> Scanner {
        let s = Scanner(control: control, index: index, loop: loop, log: log, coalesceMs: coalesceMs)
        s.active = false
        s.delegate = events
        return s
    }
}
