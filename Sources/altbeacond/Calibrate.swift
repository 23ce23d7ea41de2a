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
    let session = CalibrationSession(seconds: seconds, scanner: scanner, loop: loop)
    loop.watch(signals.fd) {
        if !signals.read().isEmpty { session.interrupt() }
    }
    session.start {
        writeStandardError("altbeacond: calibrating on \(adapter) for \(seconds) s; keep the beacon 1 m away, in the open\n")
    }
    loop.run()
    scanner.close()
    // The loop outlives everything that holds its timers.
    withExtendedLifetime(loop) {}
    switch session.outcome {
    case .done: return report(session.calibration, adapter: adapter, seconds: seconds)
    case .interrupted: return ExitCode.failure
    case .couldNotStart(let f):
        writeStandardError("altbeacond: cannot scan on \(adapter): \(f)\n")
        return f == .permission ? ExitCode.permission : ExitCode.unavailable
    case .adapterLost(let e):
        writeStandardError("altbeacond: \(adapter) stopped answering (\(e))\n")
        return ExitCode.unavailable
    }
}

/// The lines to paste, or why there are none.
private func report(_ calibration: Calibration, adapter: String, seconds: UInt32) -> Int32 {
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
