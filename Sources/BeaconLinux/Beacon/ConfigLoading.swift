import BeaconKit

/// Reads and validates the config; on failure says why (FILE:LINE:COL, caret) and returns the exit code.
public func loadConfig(path: String) -> Result<LoadedConfig, ConfigLoadError> {
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

