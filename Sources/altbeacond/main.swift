import BeaconKit
import BeaconLinux
import Glibc

let version = "0.1.0"

func main() -> Int32 {
    adviseRandomImageReads()
    let argv = Array(CommandLine.arguments.dropFirst())
    switch Arguments.parse(argv) {
    case .failure(let e):
        writeStandardError("altbeacond: \(e)\n\(Arguments.usage)\n")
        return ExitCode.usage
    case .success(.help):
        writeStandardOutput("altbeacond \(version): a fixed AltBeacon for Raspberry Pi\n\n\(Arguments.usage)\n")
        return ExitCode.ok
    case .success(.version):
        writeStandardOutput("altbeacond \(version)\n")
        return ExitCode.ok
    case .success(.check(let path)):
        return checkCommand(path: path)
    case .success(.run(let path)):
        // Before anything else: a SIGTERM or SIGHUP that arrives while the daemon sets up waits
        // in the signalfd, instead of killing it half set up (SPEC §5).
        blockSignals(Daemon.signalsHandled)
        return runDaemon(configPath: path)
    case .success(.calibrate(let adapter, let seconds)):
        return calibrateCommand(adapter: adapter, seconds: seconds)
    case .success(.checkMonitor(let path)):
        return checkMonitorCommand(path: path)
    case .success(.monitor(let path, let once, let timeout)):
        return monitorCommand(configPath: path, once: once, timeoutSeconds: timeout)
    case .success(.health(let path, let json)):
        return healthCommand(statusPath: path, json: json)
    case .success(.scan(let adapter, let timeout, let json, let readIdentity)):
        return scanCommand(adapter: adapter, timeoutSeconds: timeout, json: json, readIdentity: readIdentity)
    }
}

exit(main())
