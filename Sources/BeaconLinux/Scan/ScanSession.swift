import BeaconKit
import Glibc

/// What `scan` scans with: the `Scanner` on the adapter's HCI channel, or a fake in tests.
public protocol ScanRadio: ScanPausing {
    var index: UInt16 { get }
    var family: ScanFamily? { get }
    /// Active (scan requests sent) rather than passive; set before `start`.
    var active: Bool { get set }
    var delegate: ScannerDelegate? { get set }
    func start(_ done: @escaping (ScanFailure?) -> Void)
    /// Disables scanning, within the scanner's own bound.
    func stopScanning(_ done: @escaping (HCICommandFailure?) -> Void)
}

extension Scanner: ScanRadio {
    public func stopScanning(_ done: @escaping StepDone) { stop(done) }
}

/// The kernel's word on adapters: a descriptor to watch, its device events, an adapter's address.
public protocol AdapterEventSource: AnyObject {
    var fd: FileDescriptor { get }
    func readDeviceEvents() throws(Errno) -> [(HCIDeviceEventKind, UInt16)]
    func deviceAddress(index: UInt16) throws(Errno) -> [UInt8]
}

extension HCIControlSocket: AdapterEventSource {}

/// Where `scan` writes: standard output, or a recorder in tests.
public protocol ScanOutput: AnyObject {
    /// A terminal gets the live table; anything else one line per new, changed or gone frame.
    var isTerminal: Bool { get }
    /// False when the reader went away (`| head` closed the pipe): the scan ends.
    func write(_ text: String) -> Bool
}

public final class StandardOutput: ScanOutput {
    public init() {}
    public var isTerminal: Bool { isatty(1) == 1 }
    public func write(_ text: String) -> Bool { writeAll(1, text) }
}

/// How a scan ended, for the exit status.
public enum ScanOutcome: Equatable, Sendable {
    /// Ctrl-C, SIGTERM, `--timeout`, or the reader went away.
    case ended
    /// Scanning never started (no adapter, no permission, rfkill, ...).
    case couldNotStart(ScanFailure)
    /// The adapter went down or away, stopped answering, or could not scan again after a read.
    case adapterLost
}

/// `altbeacond scan`: observer mode on one loop over the adapter's HCI command channel and the
/// kernel's adapter events; the table, lines and JSON come from BeaconKit's pure Scan code. With
/// `readIdentity`, devices advertising the GATT identity are read too (`IdentityReads`). Its clock
/// is the loop's: the tests run it on a virtual one.
///
/// Size: 21 stored fields: `scan`'s options and what it runs on (scanner, adapter events, output,
/// reader, loop, log), three timers, and the listing, whose decisions are BeaconKit's (BeaconTable,
/// Sighting, LocalNames); one command's run, which `finish` ends all at once.
public final class ScanSession: ScannerDelegate {
    static let tickMs: Int64 = 500   // at most two redraws a second
    /// At the end, how long disabling scanning may take before the scan ends anyway.
    static let stopBoundMs: Int64 = 500
    static let clearScreen = "\u{1B}[H\u{1B}[2J"
    static let readResultsShown = 20

    let adapter: String
    let scanner: ScanRadio
    let adapterEvents: AdapterEventSource
    let output: ScanOutput
    let json: Bool
    let readIdentity: Bool
    let makeReader: (_ adapterAddress: [UInt8]) -> IdentityReading
    /// A live table only on a terminal; a pipe gets one line per new, changed or gone beacon frame.
    let live: Bool
    let log: Logger
    let loop: EventLoop
    let tickTimer: LoopTimer
    let timeoutTimer: LoopTimer
    let stopTimer: LoopTimer
    var table = BeaconTable()
    /// Local names by address: the GATT identity's is in its scan response.
    var names = LocalNames()
    var reads: IdentityReads?
    /// The time ran out during a read: the scan ends once it is reported.
    var endAfterRead = false
    /// The live table shows the latest read results under it.
    var readResults: [IdentityReadReport] = []
    public internal(set) var outcome = ScanOutcome.ended
    var dirty = true
    /// The scan is ending: scanning is being disabled, nothing more is listed.
    public internal(set) var finishing = false

    /// `makeReader`: the GATT identity reader, given the adapter's own address (`IdentityReader`).
    public init(adapter: String, scanner: ScanRadio, adapterEvents: AdapterEventSource, output: ScanOutput,
                loop: EventLoop, log: Logger, json: Bool, readIdentity: Bool,
                makeReader: @escaping (_ adapterAddress: [UInt8]) -> IdentityReading) {
        self.adapter = adapter
        self.scanner = scanner
        self.adapterEvents = adapterEvents
        self.output = output
        self.loop = loop
        self.log = log
        self.json = json
        self.readIdentity = readIdentity
        self.makeReader = makeReader
        live = !json && output.isTerminal
        tickTimer = loop.makeTimer()
        timeoutTimer = loop.makeTimer()
        stopTimer = loop.makeTimer()
    }

    /// Starts scanning; the loop stops once the scan has ended (`outcome`).
    public func start(timeoutSeconds: UInt32?) {
        scanner.delegate = self
        // Active only to read identities: the identity's name is in its scan response, and a
        // scan that connects is not silent anyway; a plain scan sends nothing on air.
        scanner.active = readIdentity
        scanner.start { [weak self] f in
            guard let self else { return }
            if let f {
                outcome = .couldNotStart(f)
                return loop.stop()
            }
            scanning(timeoutSeconds: timeoutSeconds)
        }
    }

    private func scanning(timeoutSeconds: UInt32?) {
        log.info("scanning on \(adapter) (\(scanner.family?.rawValue ?? "?") commands, \(mode), duplicates reported)")
        if readIdentity { startReads() }
        // A downed adapter stops reporting without an error on the socket: the kernel says so here.
        loop.watch(adapterEvents.fd) { [weak self] in
            guard let self else { return }
            for (kind, i) in (try? adapterEvents.readDeviceEvents()) ?? [] where i == scanner.index && (kind == .down || kind == .unregistered) {
                guard !finishing else { return }
                log.error("\(adapter) went \(kind == .down ? "down" : "away"); scan ended")
                outcome = .adapterLost
                finish()
            }
        }
        if let t = timeoutSeconds {
            timeoutTimer.schedule(afterMs: Int64(t) * 1000) { [weak self] in self?.timeUp() }
        }
        tick()
    }

    /// `--timeout` reached: a read in progress is finished and reported first (a device found
    /// late in the scan is read, not dropped without a word); Ctrl-C does not wait.
    private func timeUp() {
        guard let reads, reads.drain() else { return finish() }
        endAfterRead = true
        log.info("time is up; finishing the read in progress")
    }

    /// Ends the scan (Ctrl-C, SIGTERM, the time, a lost adapter): leaves the controller as we
    /// found it as far as scanning goes (off), then stops the loop; a controller that does not
    /// confirm within `stopBoundMs` does not hold the exit up.
    public func finish() {
        guard !finishing else { return }
        finishing = true
        tickTimer.cancel()
        timeoutTimer.cancel()
        reads?.stop()
        scanner.stopScanning { [weak self] f in
            guard let self else { return }
            if let f { log.warning("could not disable scanning on \(adapter): \(f)") }
            loop.stop()
        }
        stopTimer.schedule(afterMs: Self.stopBoundMs) { [weak self] in self?.loop.stop() }
    }

    public func scanner(_ event: ScannerEvent) {
        switch event {
        case .reports(let r):
            received(r)
        case .lost(let e):
            guard !finishing else { return }
            log.error("\(adapter) stopped answering (\(e)); scan ended")
            outcome = .adapterLost
            finish()
        }
    }
}
