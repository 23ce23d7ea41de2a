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

func checkCommand(path: String) -> Int32 {
    switch loadConfig(path: path) {
    case .success(let loaded):
        writeStandardOutput(CheckReport.render(loaded.config, path: path))
        return ExitCode.ok
    case .failure(let e):
        writeStandardError(e.message + "\n")
        return e.code
    }
}
