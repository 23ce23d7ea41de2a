import BeaconKit
import BeaconLinux
import Glibc

/// Checks the capabilities `what` needs before any socket is opened, so the message can name
/// the missing ones. Returns the exit status to end with, or nil to go on.
func requireBluetoothCapabilities(for what: String) -> Int32? {
    let missing = Capabilities.missingForBluetooth()
    guard !missing.isEmpty else { return nil }
    writeStandardError(ExitCode.missingCapabilities(missing, for: what) + "\n")
    return ExitCode.permission
}

/// Says why the HCI sockets could not be opened; returns the exit status.
func reportSocketFailure(_ error: Errno) -> Int32 {
    let (code, message) = ExitCode.socketFailure(error)
    writeStandardError(message + "\n")
    return code
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
    let stored: Result<[UInt8]?, Errno>
    do throws(Errno) { stored = .success(try stateFile.read()) } catch { stored = .failure(error) }
    let loaded = loadConfig(path: configPath)
    let start = DaemonStart.choose(loaded: loaded, stored: stored, storedPath: stateFile.path, storedDirectory: stateFile.directory,
                                   configPath: configPath)
    for (level, line) in start.log {
        switch level {
        case .notice: log.notice(line)
        case .warning: log.warning(line)
        case .error: log.error(line)
        }
    }
    guard var config = start.config else {
        writeStandardError(start.standardError ?? "")
        return start.exitCode ?? ExitCode.config
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
    let daemon = Daemon(configPath: configPath, version: version, config: config, control: control, monitor: monitor, signals: signals)
    daemon.sessions.refusedEdit = start.refusal
    daemon.sessions.lastGood = LastGoodStore(file: stateFile, stored: start.storedUsable, loop: daemon.loop, log: log)
    // Stored once the controller confirmed it on air (a file refused at start has nothing to store).
    return daemon.run(bytes: try? loaded.get().bytes)
}
