import BeaconKit
import BeaconLinux
import Glibc

/// `altbeacond health [--json] [--status PATH]`: the daemon's status file judged as monitoring
/// plugins do (HealthCheck): one line (or one JSON object) and the exit status 0-3.
func healthCommand(statusPath: String?, json: Bool) -> Int32 {
    let path = statusPath ?? defaultStatusPath()
    var bytes: [UInt8]?
    var readError: String?
    do throws(Errno) {
        bytes = try readFile(path, limit: 1 << 20)
    } catch {
        readError = "\(error)"
    }
    let result = HealthCheck.evaluate(path: path, file: bytes, readError: readError, now: wallClockSeconds()) { pid in
        // EPERM: it exists, but is another user's (the daemon runs as its own user).
        kill(pid, 0) == 0 || errno == EPERM
    }
    writeStandardOutput(json ? result.json : result.line)
    return result.verdict.rawValue
}

/// Where the daemon writes it: its runtime directory's status.json (under systemd the health
/// command has no $RUNTIME_DIRECTORY of its own: /run/altbeacond, the unit's RuntimeDirectory=).
func defaultStatusPath() -> String {
    if let d = environment("RUNTIME_DIRECTORY")?.split(separator: ":").first, !d.isEmpty { return "\(d)/status.json" }
    return "/run/altbeacond/status.json"
}
