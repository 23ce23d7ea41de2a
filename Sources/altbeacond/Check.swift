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
    case .success(let c): return .success(LoadedConfig(config: c, bytes: bytes))
    case .failure(let d): return .failure(ConfigLoadError(code: ExitCode.config, message: d.description))
    }
}

/// `altbeacond check`: every problem it can find (up to `TOML.maxErrors`), each as
/// FILE:LINE:COL, the line and a caret; the first is the one the daemon would log.
func checkCommand(path: String) -> Int32 {
    let bytes: [UInt8]
    do {
        bytes = try readFile(path, limit: 1 << 20)
    } catch {
        writeStandardError("\(path): cannot read config: \(error)\n")
        return error.isPermission ? ExitCode.permission : ExitCode.config
    }
    switch ConfigFile.parseAll(bytes, path: path) {
    case .success(let config):
        writeStandardOutput(CheckReport.render(config, path: path))
        return ExitCode.ok
    case .failure(let e):
        var out = e.all.map(\.description).joined(separator: "\n") + "\n"
        if e.all.count > 1 {
            let more = e.all.count >= TOML.maxErrors ? " (stopped at \(TOML.maxErrors); fix these and check again)" : ""
            out += "\(path): \(e.all.count) errors\(more)\n"
        }
        writeStandardError(out)
        return ExitCode.config
    }
}
