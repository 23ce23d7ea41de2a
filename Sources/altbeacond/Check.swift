import BeaconKit
import BeaconLinux

struct ConfigLoadError: Error {
    var code: Int32
    var message: String
}

/// A config file as read and accepted: its bytes are what the state directory keeps.
struct LoadedConfig {
    var config: BeaconConfig
    var bytes: [UInt8]
}

/// Reads and validates the config; on failure says why (FILE:LINE:COL, caret) and returns the exit code.
func loadConfig(path: String) -> Result<LoadedConfig, ConfigLoadError> {
    let bytes: [UInt8]
    do {
        bytes = try readFile(path, limit: 1 << 20)
    } catch {
        let code = error.isPermission ? ExitCode.permission : ExitCode.config
        return .failure(ConfigLoadError(code: code, message: "\(path): cannot read config: \(error)"))
    }
    switch ConfigFile.parse(bytes, path: path) {
    case .success(var c):
        // Read at each load (start, every reload): a hostname set after boot is the name next time.
        c.hostName = machineHostName()
        return .success(LoadedConfig(config: c, bytes: bytes))
    case .failure(let d): return .failure(ConfigLoadError(code: ExitCode.config, message: d.description))
    }
}

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
        var out = "\(path): a valid monitor config\n  adapter \(c.adapter), expecting \(c.expectations.map(\.name).joined(separator: ", "))\n"
        if let m = c.mqtt {
            let tls = m.tls.map { " over TLS (CA \($0.caFile), the certificate of \($0.expectedName(host: m.host))\($0.certFile == nil ? "" : ", a client certificate"))" } ?? ""
            out += "  MQTT: \(m.host):\(m.port)\(tls)\n"
            if m.control != .off {
                out += "  control: \(m.control.rawValue): changes from afar on altbeacond/<node>/beacon/set/+\(m.control == .fleet ? " and altbeacond/all/beacon/set/+" : "")\n"
            }
        }
        if let t = c.metrics.textfile { out += "  metrics: \(t)\n" }
        writeStandardOutput(out)
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
    var out = e.all.map(\.description).joined(separator: "\n") + "\n"
    if e.all.count > 1 {
        let more = e.all.count >= TOML.maxErrors ? " (stopped at \(TOML.maxErrors); fix these and check again)" : ""
        out += "\(path): \(e.all.count) errors\(more)\n"
    }
    writeStandardError(out)
    return ExitCode.config
}
