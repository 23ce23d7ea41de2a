import BeaconKit
import BeaconLinux
import Glibc

/// `altbeacond scan`: observer mode. One loop over the adapter's HCI command channel, the control
/// socket and signalfd; the table, lines and JSON come from BeaconKit's pure Scan code. With
/// `--read-identity`, devices advertising the GATT identity are read too (`IdentityReads`).
final class ScanSession: ScannerDelegate {
    static let tickMs: Int64 = 500   // at most two redraws a second
    /// At the end, how long disabling scanning may take before the scan ends anyway.
    static let stopBoundMs: Int64 = 500
    static let clearScreen = "\u{1B}[H\u{1B}[2J"

    let adapter: String
    let scanner: Scanner
    let control: HCIControlSocket
    let signals: SignalDescriptor
    let json: Bool
    let readIdentity: Bool
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
    /// `--timeout` was reached during a read: the scan ends once it is reported.
    var endAfterRead = false
    /// The live table shows the latest read results under it.
    var readResults: [IdentityReadReport] = []
    var exitCode = ExitCode.ok
    var dirty = true
    /// The scan is ending: scanning is being disabled, nothing more is listed.
    var finishing = false

    init(adapter: String, scanner: Scanner, control: HCIControlSocket, signals: SignalDescriptor,
         loop: EventLoop, log: Logger, json: Bool, readIdentity: Bool) {
        self.adapter = adapter
        self.scanner = scanner
        self.control = control
        self.signals = signals
        self.loop = loop
        self.log = log
        self.json = json
        self.readIdentity = readIdentity
        live = !json && isatty(1) == 1
        tickTimer = loop.makeTimer()
        timeoutTimer = loop.makeTimer()
        stopTimer = loop.makeTimer()
    }

    func run(timeoutSeconds: UInt32?) -> Int32 {
        loop.watch(signals.fd) { [unowned self] in
            for s in signals.read() where s == SIGINT || s == SIGTERM { finish() }
        }
        scanner.delegate = self
        // Active only to read identities: the identity's name is in its scan response, and a
        // scan that connects is not silent anyway; a plain scan sends nothing on air.
        scanner.active = readIdentity
        scanner.start { [unowned self] f in
            if let f {
                exitCode = reportStartFailure(f, adapter: adapter)
                return loop.stop()
            }
            scanning(timeoutSeconds: timeoutSeconds)
        }
        loop.run()
        scanner.close()
        return exitCode
    }

    private func scanning(timeoutSeconds: UInt32?) {
        log.info("scanning on \(adapter) (\(scanner.family?.rawValue ?? "?") commands, \(mode), duplicates reported)")
        if readIdentity { startReads() }
        // A downed adapter stops reporting without an error on the socket: the kernel says so here.
        loop.watch(control.fd) { [unowned self] in
            for (kind, i) in (try? control.readDeviceEvents()) ?? [] where i == scanner.index && (kind == .down || kind == .unregistered) {
                guard !finishing else { return }
                log.error("\(adapter) went \(kind == .down ? "down" : "away"); scan ended")
                exitCode = ExitCode.unavailable
                finish()
            }
        }
        if let t = timeoutSeconds {
            timeoutTimer.schedule(afterMs: Int64(t) * 1000) { [unowned self] in timeUp() }
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

    /// Leaves the controller as we found it as far as scanning goes (off), then ends the loop;
    /// a controller that does not confirm within `stopBoundMs` does not hold the exit up.
    private func finish() {
        guard !finishing else { return }
        finishing = true
        tickTimer.cancel()
        timeoutTimer.cancel()
        reads?.stop()
        scanner.stop { [unowned self] f in
            if let f { log.warning("could not disable scanning on \(adapter): \(f)") }
            loop.stop()
        }
        stopTimer.schedule(afterMs: Self.stopBoundMs) { [unowned self] in loop.stop() }
    }

    func scanner(_ event: ScannerEvent) {
        switch event {
        case .reports(let r):
            received(r)
        case .lost(let e):
            guard !finishing else { return }
            log.error("\(adapter) stopped answering (\(e)); scan ended")
            exitCode = ExitCode.unavailable
            finish()
        }
    }

    private func received(_ reports: [AdvertisingReport]) {
        let now = listeningMs
        for r in reports {
            let listed = Sighting.listed(in: r, atMs: now, names: &names, table: table)
            for s in listed {
                guard !finishing else { return }
                if s.frame is HeardGATTIdentity, GATTIdentity.isAdvertised(in: r.data[...]) { reads?.consider(r) }
                let change = table.record(s)
                if json {
                    emit(s.jsonLine + "\n")
                } else if live {
                    dirty = dirty || change != .unchanged
                } else if change != .unchanged {
                    emit(BeaconTable.line(change == .new ? "new" : "changed", s) + "\n")
                }
            }
            // A read waiting for this device's name (its scan response) may go now.
            if let reads, HeardGATTIdentity.localName(in: r.data[...]) != nil { reads.nameHeard() }
        }
    }

    /// Every tick: drop beacons unheard for 8.5 s and redraw the live table.
    private func tick() {
        let now = listeningMs
        let gone = table.expire(nowMs: now)
        if !json && !live { for s in gone { emit(BeaconTable.line("gone", s) + "\n") } }
        if live {
            // The "heard" column ages, so redraw while anything is listed.
            if dirty || !gone.isEmpty || table.count > 0 {
                emit(Self.clearScreen + table.render(nowMs: now, title: title) + readResults.map { $0.line + "\n" }.joined())
            }
            dirty = false
        }
        if !finishing { tickTimer.schedule(afterMs: Self.tickMs) { [unowned self] in tick() } }
    }

    private var title: String {
        "altbeacond scan on \(adapter) (\(scanner.family?.rawValue ?? "-") \(mode) scan), "
            + "\(table.count) beacon\(table.count == 1 ? "" : "s"); unheard for 8.5 s are dropped; Ctrl-C ends"
    }

    private var mode: String { readIdentity ? "active" : "passive" }

    /// The clock of the table: paused reads do not count as unheard time.
    private var listeningMs: Int64 { reads?.listeningMs() ?? monotonicMilliseconds() }

    /// The reader needs the adapter's own address, known once it is up (scanning).
    private func startReads() {
        let address: [UInt8]
        do throws(Errno) {
            address = try control.deviceAddress(index: scanner.index)
        } catch {
            log.error("cannot read \(adapter)'s address (\(error)); --read-identity needs it")
            exitCode = ExitCode.unavailable
            return finish()
        }
        reads = IdentityReads(scanner: scanner, reader: IdentityReader(loop: loop, adapterAddress: address), loop: loop, log: log,
                              delegate: self)
    }

    private func identityRead(_ r: IdentityReadReport) {
        var r = r
        r.name = names.identityName(r.address)
        if json {
            emit(r.jsonLine + "\n")
        } else if live {
            readResults = Array((readResults + [r]).suffix(Self.readResultsShown))
            dirty = true
        } else {
            emit(r.line + "\n")
        }
        if endAfterRead { finish() }
    }

    static let readResultsShown = 20

    /// Writes to stdout; a closed pipe (`| head`) ends the scan instead of being ignored.
    private func emit(_ s: String) {
        if !writeAll(1, s) { finish() }
    }
}

func scanCommand(adapter: String, timeoutSeconds: UInt32?, json: Bool, readIdentity: Bool) -> Int32 {
    if let code = requireBluetoothCapabilities(for: "scanning") { return code }
    guard let index = parseAdapterIndex(adapter) else {
        writeStandardError("altbeacond: --adapter takes hciN, not '\(adapter)'\n")
        return ExitCode.usage
    }
    let control: HCIControlSocket, signals: SignalDescriptor
    switch openObserverSockets(signals: [SIGTERM, SIGINT]) {
    case .success(let s): (control, signals) = s
    case .failure(let e): return e.code
    }
    let loop = EventLoop()
    let log = Logger()
    let scanner = Scanner(control: control, index: index, loop: loop, log: log)
    // The loop outlives everything that holds its timers.
    return withExtendedLifetime(loop) {
        ScanSession(adapter: adapter, scanner: scanner, control: control, signals: signals, loop: loop, log: log, json: json,
                    readIdentity: readIdentity)
            .run(timeoutSeconds: timeoutSeconds)
    }
}

private func reportStartFailure(_ f: ScanFailure, adapter: String) -> Int32 {
    switch f {
    case .missing:
        writeStandardError("altbeacond: no Bluetooth adapter \(adapter)\n")
        return ExitCode.unavailable
    case .permission:
        writeStandardError("altbeacond: permission denied on \(adapter): scanning needs CAP_NET_RAW and CAP_NET_ADMIN\n")
        return ExitCode.permission
    case .blocked:
        writeStandardError("altbeacond: \(adapter) is blocked by rfkill (try: rfkill unblock bluetooth)\n")
        return ExitCode.unavailable
    default:
        writeStandardError("altbeacond: cannot scan on \(adapter): \(f)\n")
        return ExitCode.unavailable
    }
}

extension ScanSession: IdentityReadsDelegate {
    func identityReads(_ reads: IdentityReads, read report: IdentityReadReport) { identityRead(report) }

    func identityReads(_ reads: IdentityReads, couldNotResume failure: ScanFailure) {
        guard !finishing else { return }
        log.error("could not scan again on \(adapter) after reading an identity (\(failure)); scan ended")
        exitCode = ExitCode.unavailable
        finish()
    }

    func identityReads(_ reads: IdentityReads, heardNameOf address: String) -> Bool { names.identityName(address) != nil }
}
