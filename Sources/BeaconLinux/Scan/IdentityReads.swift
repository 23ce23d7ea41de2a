import BeaconKit
import Glibc

/// The scan `IdentityReads` pauses and resumes around each read (`Scanner`; a fake in tests).
public protocol ScanPausing: AnyObject {
    func pause(_ done: @escaping (HCICommandFailure?) -> Void)
    func resume(_ done: @escaping (ScanFailure?) -> Void)
}
extension Scanner: ScanPausing {}

/// One read of a device's identity at a time (`IdentityReader`; a fake in tests).
public protocol IdentityReading: AnyObject {
    func read(peer: [UInt8], random: Bool, _ done: @escaping (Result<[UInt8], IdentityReaderFailure>) -> Void)
    func cancel()
}
extension IdentityReader: IdentityReading {}

/// What `IdentityReads` tells the scan it serves, and asks of it.
public protocol IdentityReadsDelegate: AnyObject {
    /// Each result, for the output.
    func identityReads(_ reads: IdentityReads, read report: IdentityReadReport)
    /// Scanning could not be turned on again after a read: the scan ends.
    func identityReads(_ reads: IdentityReads, couldNotResume failure: ScanFailure)
    /// Whether the device's local name was heard.
    func identityReads(_ reads: IdentityReads, heardNameOf address: String) -> Bool
}

/// `scan --read-identity`: each device heard advertising the GATT identity is read once per scan,
/// one at a time, as the iOS AltBeacon library does (connect, discover, read, disconnect).
///
/// Our scan stays on while the kernel connects. The kernel waits for the device's advert and then
/// sends LE Create Connection, and it takes that advert from any scan, ours included; before
/// connecting it disables the scan itself (it tracks the scan state our commands set), so
/// controllers that cannot scan and connect at once are served. Turning our scan off first
/// instead (tried) works on Linux 6.1 but not on 6.12: an active scan of ours marks discovery as
/// running there, and while it does the kernel never starts a scan of its own for the
/// connection. Our scan is restarted once after the connect call, for advertisers reported only
/// when a scan starts (BlueZ's emulator), and once the read is over, after the kernel has
/// settled (a connection attempt given up ends with the kernel disabling its scan: ours must come
/// after that). The table's "unheard" time stops during a read (`listeningMs`), so a beacon is
/// not dropped while the kernel has the scan off. Time is the loop's (a virtual clock in tests).
///
/// Size: 14 stored fields, two past 12: what each read goes between (scanner, reader, delegate,
/// loop, log), a timer per wait (the device's name, scanning again), the queue and its flags, and
/// the paused time `listeningMs` subtracts; one read's sequence, queued to resumed, in one place.
public final class IdentityReads {
    /// A device to read: its address as HCI reported it, and whether it is a random one.
    struct Pending {
        let address: String
        let octets: [UInt8]
        let random: Bool
        let queuedMs: Int64
    }

    /// How long a read waits for the device's scan response (its name, for the result line):
    /// an active scan hears it right after the advert, but our pause would cut it off.
    public static let nameWaitMs: Int64 = 1000
    /// Scanning is set up again this long after a read ends: the kernel stops its own scan then.
    public static let settleMs: Int64 = 500
    /// Our enable meeting the kernel's own scan commands is refused with Command Disallowed (seen
    /// in the testbed after a connect timeout): we try again shortly, a few times.
    public static let resumeRetryMs: Int64 = 250
    public static let resumeAttempts = 5

    let scanner: ScanPausing
    let reader: IdentityReading
    let loop: EventLoop
    let log: Logger
    private let nameWait: LoopTimer
    private let resumeRetry: LoopTimer
    public weak var delegate: IdentityReadsDelegate?
    /// Addresses read (or being read, or queued) in this scan.
    private var attempted: Set<String> = []
    private var queue: [Pending] = []
    /// The scan is ending: the read in progress finishes, nothing new starts.
    private var draining = false
    private var busy = false
    private var stopped = false
    private var pausedTotalMs: Int64 = 0
    private var pausedSince: Int64?

    public init(scanner: ScanPausing, reader: IdentityReading, loop: EventLoop, log: Logger, delegate: IdentityReadsDelegate) {
        self.scanner = scanner
        self.reader = reader
        self.loop = loop
        self.log = log
        self.delegate = delegate
        nameWait = loop.makeTimer()
        resumeRetry = loop.makeTimer()
    }

    /// Milliseconds of listening: the loop's clock less the time our scan was paused.
    public func listeningMs() -> Int64 {
        let now = loop.now
        return now - pausedTotalMs - (pausedSince.map { now - $0 } ?? 0)
    }

    public var isReading: Bool { busy }

    /// A report from a device advertising the identity: read it unless already done this scan.
    public func consider(_ report: AdvertisingReport) {
        let address = report.addressString
        guard !stopped, !draining, attempted.insert(address).inserted else { return }
        // Address types 1 and 3 are random (3: resolved from an identity); 0 and 2 public.
        queue.append(Pending(address: address, octets: report.address, random: report.addressType & 0x01 == 1,
                             queuedMs: loop.now))
        next()
    }

    /// A local name was heard: the read waiting for it may go.
    public func nameHeard() { next() }

    /// The scan's time is up: no new read starts; the one in progress, if any, ends by itself
    /// (its connect and exchange timeouts bound it) and reports as usual. True if one is.
    public func drain() -> Bool {
        draining = true
        queue.removeAll()
        nameWait.cancel()
        return busy
    }

    /// Drops the read in progress and the queue; scanning is left to the session's `stop`.
    public func stop() {
        stopped = true
        queue.removeAll()
        nameWait.cancel()
        resumeRetry.cancel()
        reader.cancel()
    }

    private func next() {
        guard !busy, !stopped, !draining, let head = queue.first else { return }
        let waited = loop.now - head.queuedMs
        if delegate?.identityReads(self, heardNameOf: head.address) == false, waited < Self.nameWaitMs {
            return nameWait.schedule(afterMs: Self.nameWaitMs - waited) { [weak self] in self?.next() }
        }
        nameWait.cancel()
        let p = queue.removeFirst()
        busy = true
        let start = loop.now
        pausedSince = start
        log.info("reading the GATT identity of \(p.address)")
        reader.read(peer: p.octets, random: p.random) { [weak self] r in self?.read(p, r, sinceMs: start) }
        restartScanning(attempt: 1, then: nil)
    }

    private func read(_ p: Pending, _ r: Result<[UInt8], IdentityReaderFailure>, sinceMs: Int64) {
        guard !stopped else { return }
        let outcome: IdentityReadReport.Outcome
        switch r {
        case .success(let v): outcome = .identifier(v)
        case .failure(let f): outcome = .failed(f.description)
        }
        log.info("GATT identity of \(p.address) \(r.isSuccess ? "read" : "not read") in \(loop.now - sinceMs) ms")
        delegate?.identityReads(self, read: IdentityReadReport(address: p.address, name: nil, outcome: outcome))
        guard !stopped else { return }   // the result ended the scan (--timeout)
        resumeRetry.schedule(afterMs: Self.settleMs) { [weak self] in
            self?.restartScanning(attempt: 1) { [weak self] f in self?.readDone(f) }
        }
    }

    /// Scanning off and on again with our parameters (the kernel may have turned it off or set
    /// its own), retried on Command Disallowed; `then` with the outcome, if given. Starting
    /// again supersedes a restart still running (the scanner drops its completions).
    private func restartScanning(attempt: Int, then: ((ScanFailure?) -> Void)?) {
        resumeRetry.cancel()
        scanner.pause { [weak self] _ in
            guard let self else { return }
            scanner.resume { [weak self] f in
                guard let self, !stopped else { return }
                if case .command(.status(_, .commandDisallowed))? = f, attempt < Self.resumeAttempts {
                    log.debug("scanning refused while the kernel changes its own (\(attempt)); trying again")
                    return resumeRetry.schedule(afterMs: Self.resumeRetryMs) { [weak self] in
                        self?.restartScanning(attempt: attempt + 1, then: then)
                    }
                }
                if let f, then == nil { log.debug("restarting the scan for the kernel's connection: \(f)") }
                then?(f)
            }
        }
    }

    private func readDone(_ f: ScanFailure?) {
        if let since = pausedSince { pausedTotalMs += loop.now - since }
        pausedSince = nil
        busy = false
        if let f { delegate?.identityReads(self, couldNotResume: f); return }
        log.debug("scanning again")
        next()
    }
}

private extension Result {
    var isSuccess: Bool { if case .success = self { true } else { false } }
}
