import BeaconKit
import BeaconLinux

/// `altbeacond check`: every problem it can find (up to `TOML.maxErrors`), each as
/// FILE:LINE:COL, the line and a caret; the first is the one the daemon would log.
func checkCommand(path: String) -> Int32 {
    let (read, code) = readConfigForCheck(path)
    guard let bytes = read else { return code }
    switch ConfigFile.parseAll(bytes, path: path) {
    case .success(var config):
        config.hostName = machineHostName()
        writeStandardOutput(CheckReport.render(config, path: path))
        return ExitCode.ok
    case .failure(let e):
        return reportCheckFailure(e, path: path)
    }
}

/// `altbeacond monitor --check`: monitor.toml validated as `check` does config.toml (what
/// import-boot-config runs on a monitor.toml from the boot partition). The files it names are
/// judged when the monitor starts, as the user it runs as.
func checkMonitorCommand(path: String) -> Int32 {
    let (read, code) = readConfigForCheck(path)
    guard let bytes = read else { return code }
    switch MonitorConfigFile.parseAll(bytes, path: path) {
    case .success(let c):
        writeStandardOutput(MonitorCheckReport.render(c, path: path))
        return ExitCode.ok
    case .failure(let e):
        return reportCheckFailure(e, path: path)
    }
}

/// The file's bytes, or nil (said on stderr) and the exit code.
private func readConfigForCheck(_ path: String) -> ([UInt8]?, Int32) {
    do {
        return (try readFile(path, limit: 1 << 20), ExitCode.ok)
    } catch {
        writeStandardError("\(path): cannot read config: \(error)\n")
        return (nil, error.isPermission ? ExitCode.permission : ExitCode.config)
    }
}

private func reportCheckFailure(_ e: ConfigDiagnostics, path: String) -> Int32 {
    writeStandardError(MonitorCheckReport.failure(e, path: path))
    return ExitCode.config
}
