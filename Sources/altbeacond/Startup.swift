import BeaconKit
import BeaconLinux
import Glibc

/// Checks the capabilities `what` needs before any socket is opened, so the message can name
/// the missing ones. Returns the exit status to end with, or nil to go on.
func requireBluetoothCapabilities(for what: String) -> Int32? {
    let missing = Capabilities.missingForBluetooth()
    guard !missing.isEmpty else { return nil }
    writeStandardError("altbeacond: permission denied: missing \(missing.joined(separator: " and ")); \(what) needs CAP_NET_RAW and CAP_NET_ADMIN (run as root, or with AmbientCapabilities=CAP_NET_RAW CAP_NET_ADMIN as deploy/altbeacond.service does)\n")
    return ExitCode.permission
}

/// Says why the HCI sockets could not be opened; returns the exit status.
func reportSocketFailure(_ error: Errno) -> Int32 {
    if error.isPermission {
        writeStandardError("altbeacond: permission denied opening the HCI sockets: needs CAP_NET_RAW and CAP_NET_ADMIN\n")
        return ExitCode.permission
    }
    if error == Errno(EAFNOSUPPORT) {
        writeStandardError("altbeacond: this kernel has no Bluetooth support (AF_BLUETOOTH): load the bluetooth module or enable CONFIG_BT\n")
        return ExitCode.unavailable
    }
    writeStandardError("altbeacond: cannot open the HCI sockets: \(error)\n")
    return ExitCode.unavailable
}

/// The control socket and the signals a scanning command needs (scan, calibrate, monitor), or
/// the exit status after saying why not.
func openObserverSockets(signals: [Int32]) -> Result<(HCIControlSocket, SignalDescriptor), ExitStatus> {
    do {
        return .success((try HCIControlSocket(), try SignalDescriptor(signals: signals)))
    } catch {
        return .failure(ExitStatus(code: reportSocketFailure(error)))
    }
}

/// An exit status as an error (for `Result`).
struct ExitStatus: Error { var code: Int32 }

/// `altbeacond run`. The config comes from the file, or, when the file is refused, from the
/// last good config in the state directory (SPEC §6); only with neither does it exit (78).
func runDaemon(configPath: String) -> Int32 {
    let log = Logger()
    let stateFile = StateFile(directory: LastGoodConfig.directory(environment: environment("STATE_DIRECTORY")),
                              name: LastGoodConfig.fileName)
    let stored: [UInt8]?
    do {
        stored = try stateFile.read()
    } catch {
        log.warning("cannot read the last good config \(stateFile.path): \(error)")
        stored = nil
    }
    let loaded = loadConfig(path: configPath)
    var config: BeaconConfig
    var refusal: String?
    let (start, storedProblem) = LastGoodConfig.start(file: try? loaded.get().config, stored: stored, storedPath: stateFile.path)
    if let storedProblem {
        log.warning("ignoring the stored last good config, which no longer parses: \(storedProblem.headline)")
    }
    switch (start, loaded) {
    case (.file(let c), _):
        config = c
    case (.lastGood(let c), .failure(let e)):
        log.error("config file refused at start: \(e.message)")
        log.notice("putting the last good config on air instead (\(stateFile.path)); fix \(configPath) and it is applied as any edit")
        config = c
        refusal = firstLine(e.message)
    case (_, .failure(let e)):
        writeStandardError(e.message + "\n")
        if stored == nil { log.notice("no last good config in \(stateFile.directory) to fall back on") }
        return e.code
    case (_, .success(let l)):
        config = l.config   // unreachable: a good file always wins
    }
    config.hostName = machineHostName()   // the last good config's name defaults to it too
    if let code = requireBluetoothCapabilities(for: "the beacon") { return code }
    let control: HCIControlSocket, monitor: HCIMonitorSocket, signals: SignalDescriptor
    do {
        control = try HCIControlSocket()
        monitor = try HCIMonitorSocket()
        signals = try SignalDescriptor(signals: Daemon.signalsHandled)
    } catch {
        return reportSocketFailure(error)
    }
    let daemon = Daemon(configPath: configPath, config: config, control: control, monitor: monitor, signals: signals)
    daemon.sessions.refusedEdit = refusal
    daemon.sessions.lastGood = LastGoodStore(file: stateFile, stored: storedProblem == nil ? stored : nil, loop: daemon.loop, log: log)
    // Stored once the controller confirmed it on air (a file refused at start has nothing to store).
    return daemon.run(bytes: try? loaded.get().bytes)
}
