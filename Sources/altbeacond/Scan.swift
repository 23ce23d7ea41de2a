import BeaconKit
import BeaconLinux
import Glibc

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
    let session = ScanSession(adapter: adapter, scanner: scanner, adapterEvents: control, output: StandardOutput(), loop: loop,
                              log: log, json: json, readIdentity: readIdentity) { IdentityReader(loop: loop, adapterAddress: $0) }
    loop.watch(signals.fd) {
        for s in signals.read() where s == SIGINT || s == SIGTERM { session.finish() }
    }
    session.start(timeoutSeconds: timeoutSeconds)
    loop.run()
    scanner.close()
    // The loop outlives everything that holds its timers.
    withExtendedLifetime(loop) {}
    switch session.outcome {
    case .ended: return ExitCode.ok
    case .couldNotStart(let f): return reportStartFailure(f, adapter: adapter)
    case .adapterLost: return ExitCode.unavailable
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
