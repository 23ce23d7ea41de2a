import BeaconKit
import BeaconLinux
import Glibc

/// `altbeacond calibrate [--adapter hciN] [--seconds S]`: a passive scan of S seconds with the
/// beacon 1 m away; BeaconKit's `Calibration` turns the RSSI samples into the lines to paste.
/// Refuses when the controller reports no RSSI (127 on every advert) rather than print nonsense.
/// Exit: 0 figures printed, 1 nothing to calibrate (no beacon heard, or no RSSI), 69 no adapter.
func calibrateCommand(adapter: String, seconds: UInt32) -> Int32 {
    if let code = requireBluetoothCapabilities(for: "calibrating") { return code }
    guard let index = parseAdapterIndex(adapter) else { return ExitCode.usage }
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
        CalibrationSession(adapter: adapter, seconds: seconds, scanner: scanner, signals: signals, loop: loop).run()
    }
}

/// One calibration: the samples of every report until the time is up, a signal, or the adapter
/// going away.
final class CalibrationSession: ScannerDelegate {
    let adapter: String
    let seconds: UInt32
    let scanner: Scanner
    let signals: SignalDescriptor
    let loop: EventLoop
    let timer: LoopTimer
    var calibration = Calibration()
    var code = ExitCode.ok
    var ending = false

    init(adapter: String, seconds: UInt32, scanner: Scanner, signals: SignalDescriptor, loop: EventLoop) {
        self.adapter = adapter
        self.seconds = seconds
        self.scanner = scanner
        self.signals = signals
        self.loop = loop
        timer = loop.makeTimer()
    }

    func run() -> Int32 {
        loop.watch(signals.fd) { [unowned self] in
            if !signals.read().isEmpty { code = ExitCode.failure; end() }
        }
        scanner.delegate = self
        scanner.start { [unowned self] f in
            if let f {
                writeStandardError("altbeacond: cannot scan on \(adapter): \(f)\n")
                code = f == .permission ? ExitCode.permission : ExitCode.unavailable
                return loop.stop()
            }
            writeStandardError("altbeacond: calibrating on \(adapter) for \(seconds) s; keep the beacon 1 m away, in the open\n")
            timer.schedule(afterMs: Int64(seconds) * 1000) { [unowned self] in end() }
        }
        loop.run()
        scanner.close()
        guard code == ExitCode.ok else { return code }
        return report()
    }

    func scanner(_ event: ScannerEvent) {
        switch event {
        case .reports(let reports):
            for r in reports { for s in Sighting.all(in: r, atMs: loop.now) { calibration.record(s) } }
        case .lost(let e):
            writeStandardError("altbeacond: \(adapter) stopped answering (\(e))\n")
            code = ExitCode.unavailable
            end()
        }
    }

    private func end() {
        guard !ending else { return }
        ending = true
        scanner.stop { [loop] _ in loop.stop() }
        timer.schedule(afterMs: 500) { [loop] in loop.stop() }
    }

    private func report() -> Int32 {
        if calibration.results.isEmpty {
            if calibration.withoutRSSI > 0 {
                writeStandardError("altbeacond: \(adapter) reports no RSSI (127, \"not available\", on all \(calibration.withoutRSSI) adverts): it cannot calibrate; use another receiver\n")
            } else {
                writeStandardError("altbeacond: no beacon with a power field heard on \(adapter) in \(seconds) s (AltBeacon, iBeacon, Eddystone-UID or -URL)\n")
            }
            return ExitCode.failure
        }
        writeStandardOutput(calibration.report(adapter: adapter, seconds: Int(seconds)))
        return ExitCode.ok
    }
}
