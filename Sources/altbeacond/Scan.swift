import BeaconKit
import BeaconLinux
import Glibc

/// `altbeacond scan`: observer mode. One loop over the adapter's HCI command channel, the control
/// socket and signalfd; the table, lines and JSON come from BeaconKit's pure Scan code.
final class ScanSession {
    static let tickMs: Int64 = 500   // at most two redraws a second
    /// At the end, how long disabling scanning may take before the scan ends anyway.
    static let stopBoundMs: Int64 = 500
    static let clearScreen = "\u{1B}[H\u{1B}[2J"

    let adapter: String
    let scanner: Scanner
    let control: HCIControlSocket
    let signals: SignalDescriptor
    let json: Bool
    /// A live table only on a terminal; a pipe gets one line per new, changed or gone beacon frame.
    let live: Bool
    let log: Logger
    let loop: EventLoop
    let tickTimer: LoopTimer
    let timeoutTimer: LoopTimer
    let stopTimer: LoopTimer
    var table = BeaconTable()
    var exitCode = ExitCode.ok
    var dirty = true
    /// The scan is ending: scanning is being disabled, nothing more is listed.
    var finishing = false

    init(adapter: String, scanner: Scanner, control: HCIControlSocket, signals: SignalDescriptor,
         loop: EventLoop, log: Logger, json: Bool) {
        self.adapter = adapter
        self.scanner = scanner
        self.control = control
        self.signals = signals
        self.loop = loop
        self.log = log
        self.json = json
        live = !json && isatty(1) == 1
        tickTimer = loop.makeTimer()
        timeoutTimer = loop.makeTimer()
        stopTimer = loop.makeTimer()
    }

    func run(timeoutSeconds: UInt32?) -> Int32 {
        loop.watch(signals.fd) { [unowned self] in
            for s in signals.read() where s == SIGINT || s == SIGTERM { finish() }
        }
        scanner.onReports = { [unowned self] in received($0) }
        scanner.onLost = { [unowned self] e in
            guard !finishing else { return }
            log.error("\(adapter) stopped answering (\(e)); scan ended")
            exitCode = ExitCode.unavailable
            finish()
        }
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
        log.info("scanning on \(adapter) (\(scanner.family?.rawValue ?? "?") commands, passive, duplicates reported)")
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
            timeoutTimer.schedule(afterMs: Int64(t) * 1000) { [unowned self] in finish() }
        }
        tick()
    }

    /// Leaves the controller as we found it as far as scanning goes (off), then ends the loop;
    /// a controller that does not confirm within `stopBoundMs` does not hold the exit up.
    private func finish() {
        guard !finishing else { return }
        finishing = true
        tickTimer.cancel()
        timeoutTimer.cancel()
        scanner.stop { [unowned self] f in
            if let f { log.warning("could not disable scanning on \(adapter): \(f)") }
            loop.stop()
        }
        stopTimer.schedule(afterMs: Self.stopBoundMs) { [unowned self] in loop.stop() }
    }

    private func received(_ reports: [AdvertisingReport]) {
        let now = monotonicMilliseconds()
        for r in reports {
            for s in Sighting.all(in: r, atMs: now) {
                guard !finishing else { return }
                let change = table.record(s)
                if json {
                    emit(s.jsonLine + "\n")
                } else if live {
                    dirty = dirty || change != .unchanged
                } else if change != .unchanged {
                    emit(BeaconTable.line(change == .new ? "new" : "changed", s) + "\n")
                }
            }
        }
    }

    /// Every tick: drop beacons unheard for 8.5 s and redraw the live table.
    private func tick() {
        let now = monotonicMilliseconds()
        let gone = table.expire(nowMs: now)
        if !json && !live { for s in gone { emit(BeaconTable.line("gone", s) + "\n") } }
        if live {
            // The "heard" column ages, so redraw while anything is listed.
            if dirty || !gone.isEmpty || table.count > 0 {
                emit(Self.clearScreen + table.render(nowMs: now, title: title))
            }
            dirty = false
        }
        if !finishing { tickTimer.schedule(afterMs: Self.tickMs) { [unowned self] in tick() } }
    }

    private var title: String {
        "altbeacond scan on \(adapter) (\(scanner.family?.rawValue ?? "-") passive scan), "
            + "\(table.count) beacon\(table.count == 1 ? "" : "s"); unheard for 8.5 s are dropped; Ctrl-C ends"
    }

    /// Writes to stdout; a closed pipe (`| head`) ends the scan instead of being ignored.
    private func emit(_ s: String) {
        if !writeAll(1, s) { finish() }
    }
}

func scanCommand(adapter: String, timeoutSeconds: UInt32?, json: Bool) -> Int32 {
    if let code = requireBluetoothCapabilities(for: "scanning") { return code }
    guard let index = parseAdapterIndex(adapter) else {
        writeStandardError("altbeacond: --adapter takes hciN, not '\(adapter)'\n")
        return ExitCode.usage
    }
    let control: HCIControlSocket, signals: SignalDescriptor
    do {
        control = try HCIControlSocket()
        signals = try SignalDescriptor(signals: [SIGTERM, SIGINT])
    } catch {
        return reportSocketFailure(error)
    }
    let loop = EventLoop()
    let log = Logger()
    let scanner = Scanner(control: control, index: index, loop: loop, log: log)
    // The loop outlives everything that holds its timers.
    return withExtendedLifetime(loop) {
        ScanSession(adapter: adapter, scanner: scanner, control: control, signals: signals, loop: loop, log: log, json: json)
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
