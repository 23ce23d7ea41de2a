import BeaconKit
import BeaconLinux
import Glibc

/// `altbeacond scan`: observer mode. One loop over the adapter's HCI socket and signalfd; the
/// table, lines and JSON come from BeaconKit's pure Scan code.
final class ScanSession {
    static let tickMs: Int64 = 500   // at most two redraws a second
    static let clearScreen = "\u{1B}[H\u{1B}[2J"

    let adapter: String
    let scanner: Scanner
    let control: HCIControlSocket
    let signals: SignalDescriptor
    let json: Bool
    /// A live table only on a terminal; a pipe gets one line per new, changed or gone beacon frame.
    let live: Bool
    let log = Logger()
    let loop = EventLoop()
    var table = BeaconTable()
    var exitCode = ExitCode.ok
    var dirty = true

    init(adapter: String, scanner: Scanner, control: HCIControlSocket, signals: SignalDescriptor, json: Bool) {
        self.adapter = adapter
        self.scanner = scanner
        self.control = control
        self.signals = signals
        self.json = json
        live = !json && isatty(1) == 1
    }

    func run(timeoutSeconds: UInt32?) -> Int32 {
        loop.watch(signals.fd) { [unowned self] in
            for s in signals.read() where s == SIGINT || s == SIGTERM { finish() }
        }
        loop.watch(scanner.fd) { [unowned self] in onReadable() }
        // A downed adapter stops reporting without an error on the socket: the kernel says so here.
        loop.watch(control.fd) { [unowned self] in
            for (kind, i) in (try? control.readDeviceEvents()) ?? [] where i == scanner.index && (kind == .down || kind == .unregistered) {
                log.error("\(adapter) went \(kind == .down ? "down" : "away"); scan ended")
                exitCode = ExitCode.unavailable
                finish()
            }
        }
        if let t = timeoutSeconds {
            loop.schedule("timeout", afterMs: Int64(t) * 1000) { [unowned self] in finish() }
        }
        tick()
        loop.run()
        // Leave the controller as we found it as far as scanning goes: off.
        if let f = scanner.stop() { log.warning("could not disable scanning on \(adapter): \(f)") }
        scanner.close()
        return exitCode
    }

    private func finish() { loop.stop() }

    private func onReadable() {
        let reports: [AdvertisingReport]
        do {
            reports = try scanner.readReports()
        } catch {
            log.error("\(adapter) stopped answering (\(error)); scan ended")
            exitCode = ExitCode.unavailable
            finish()
            return
        }
        let now = monotonicMilliseconds()
        for r in reports {
            for s in Sighting.all(in: r, atMs: now) {
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
        loop.schedule("tick", afterMs: Self.tickMs) { [unowned self] in tick() }
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
    let log = Logger()
    let scanner: Scanner
    do {
        scanner = try Scanner(control: control, index: index, log: log)
    } catch {
        return reportStartFailure(error, adapter: adapter)
    }
    if let f = scanner.start() {
        _ = scanner.stop()
        return reportStartFailure(f, adapter: adapter)
    }
    log.info("scanning on \(adapter) (\(scanner.family?.rawValue ?? "?") commands, passive, duplicates reported)")
    return ScanSession(adapter: adapter, scanner: scanner, control: control, signals: signals, json: json).run(timeoutSeconds: timeoutSeconds)
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
