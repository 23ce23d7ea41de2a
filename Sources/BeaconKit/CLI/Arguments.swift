/// The command line of SPEC §1, parsed by hand (swift-argument-parser would bring Foundation in).
public enum Command: Equatable, Sendable {
    case run(configPath: String)
    case check(configPath: String)
    /// `readIdentity`: connect to each device advertising the GATT identity and read it.
    case scan(adapter: String, timeoutSeconds: UInt32?, json: Bool, readIdentity: Bool = false)
    /// `statusPath` nil: the daemon's runtime directory's status.json.
    case health(statusPath: String?, json: Bool)
    /// The beacon 1 m away: its RSSI at 1 m for the `power` lines (SPEC §10).
    case calibrate(adapter: String, seconds: UInt32)
    /// The observer daemon (SPEC §10); `once`: scan `timeoutSeconds` (default 10), print, exit.
    case monitor(configPath: String, once: Bool, timeoutSeconds: UInt32?)
    /// `monitor --check`: the monitor's config validated as `check` does the beacon's.
    case checkMonitor(configPath: String)
    case help
    case version
}

public struct UsageError: Error, Equatable, Sendable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

public enum Arguments {
    public static let usage = """
    Usage:
      altbeacond run   [--config PATH]     advertise the configured AltBeacon (the daemon, in the foreground)
      altbeacond check [--config PATH]     validate the config and print what would go on air
      altbeacond scan  [--adapter hciN] [--timeout S] [--json] [--read-identity]
                                           list beacons heard nearby (AltBeacon, iBeacon, Eddystone,
                                           the GATT identity)
      altbeacond calibrate [--adapter hciN] [--seconds S]
                                           with the beacon 1 m away: its RSSI at 1 m as this receiver
                                           hears it (S seconds, default 20), the power lines to paste
      altbeacond health [--json] [--status PATH]
                                           the running daemon's health, as monitoring plugins report it
      altbeacond monitor [--config PATH] [--once [--timeout S] | --check]
                                           watch that the expected beacons are on air (config
                                           \(defaultMonitorConfigPath)); --once: scan S seconds (default
                                           10), print a table, exit 0 all heard, 2 any silent, 3 no adapter;
                                           --check: validate the config only (exit 0, or 78 and why)
      altbeacond --help | --version

    Options:
      -c, --config PATH    config file (default \(defaultConfigPath))
      -a, --adapter hciN   controller to scan with (default hci0)
      -t, --timeout S      stop scanning after S seconds
          --json           one JSON object per sighting per line
          --read-identity  connect to each device advertising the GATT identity (once per scan)
                           and read its identifier, as the iOS AltBeacon library does
          --status PATH    the daemon's status file (default $RUNTIME_DIRECTORY/status.json,
                           else /run/altbeacond/status.json)

    Exit status: 0 ok, 64 usage error, 77 permission denied, 78 bad config; health: 0 on air,
    1 degraded (on air with a refused edit, re-arming), 2 off air, 3 unknown (not running).
    """

    public static let defaultConfigPath = "/etc/altbeacond/config.toml"
    public static let defaultMonitorConfigPath = "/etc/altbeacond/monitor.toml"

    /// `argv` without the program name.
    public static func parse(_ argv: [String]) -> Result<Command, UsageError> {
        guard let first = argv.first else { return .failure(UsageError("no command given")) }
        var rest = Array(argv.dropFirst())
        switch first {
        case "-h", "--help", "help": return .success(.help)
        case "-V", "--version", "version": return .success(.version)
        case "run", "check":
            var config = defaultConfigPath
            while let arg = rest.first {
                rest.removeFirst()
                switch option(arg, &rest, names: ["-c", "--config"]) {
                case .value(let v): config = v
                case .missing: return .failure(UsageError("option '\(arg)' needs a value"))
                case .notThis:
                    if arg == "-h" || arg == "--help" { return .success(.help) }
                    return .failure(UsageError("unknown option '\(arg)' for '\(first)'"))
                }
            }
            return .success(first == "run" ? .run(configPath: config) : .check(configPath: config))
        case "scan":
            var adapter = "hci0", timeout: UInt32? = nil, json = false, readIdentity = false
            while let arg = rest.first {
                rest.removeFirst()
                if arg == "--json" { json = true; continue }
                if arg == "--read-identity" { readIdentity = true; continue }
                if arg == "-h" || arg == "--help" { return .success(.help) }
                let a = option(arg, &rest, names: ["-a", "--adapter"])
                let t = a == .notThis ? option(arg, &rest, names: ["-t", "--timeout"]) : .notThis
                switch (a, t) {
                case (.value(let v), _):
                    guard parseAdapterIndex(v) != nil else { return .failure(UsageError("--adapter takes hciN, not '\(v)'")) }
                    adapter = v
                case (_, .value(let v)):
                    guard let s = UInt32(v), s > 0 else { return .failure(UsageError("--timeout takes a whole number of seconds, not '\(v)'")) }
                    timeout = s
                case (.missing, _), (_, .missing):
                    return .failure(UsageError("option '\(arg)' needs a value"))
                default:
                    return .failure(UsageError("unknown option '\(arg)' for 'scan'"))
                }
            }
            return .success(.scan(adapter: adapter, timeoutSeconds: timeout, json: json, readIdentity: readIdentity))
        case "calibrate":
            var adapter = "hci0", seconds: UInt32 = 20
            while let arg = rest.first {
                rest.removeFirst()
                if arg == "-h" || arg == "--help" { return .success(.help) }
                let a = option(arg, &rest, names: ["-a", "--adapter"])
                let t = a == .notThis ? option(arg, &rest, names: ["-s", "--seconds"]) : .notThis
                switch (a, t) {
                case (.value(let v), _):
                    guard parseAdapterIndex(v) != nil else { return .failure(UsageError("--adapter takes hciN, not '\(v)'")) }
                    adapter = v
                case (_, .value(let v)):
                    guard let s = UInt32(v), s > 0, s <= 3600 else { return .failure(UsageError("--seconds takes 1 to 3600, not '\(v)'")) }
                    seconds = s
                case (.missing, _), (_, .missing): return .failure(UsageError("option '\(arg)' needs a value"))
                default: return .failure(UsageError("unknown option '\(arg)' for 'calibrate'"))
                }
            }
            return .success(.calibrate(adapter: adapter, seconds: seconds))
        case "monitor":
            var config = defaultMonitorConfigPath, once = false, check = false, timeout: UInt32?
            while let arg = rest.first {
                rest.removeFirst()
                if arg == "--once" { once = true; continue }
                if arg == "--check" { check = true; continue }
                if arg == "-h" || arg == "--help" { return .success(.help) }
                let c = option(arg, &rest, names: ["-c", "--config"])
                let t = c == .notThis ? option(arg, &rest, names: ["-t", "--timeout"]) : .notThis
                switch (c, t) {
                case (.value(let v), _): config = v
                case (_, .value(let v)):
                    guard let s = UInt32(v), s > 0 else { return .failure(UsageError("--timeout takes a whole number of seconds, not '\(v)'")) }
                    timeout = s
                case (.missing, _), (_, .missing): return .failure(UsageError("option '\(arg)' needs a value"))
                default: return .failure(UsageError("unknown option '\(arg)' for 'monitor'"))
                }
            }
            if timeout != nil && !once { return .failure(UsageError("--timeout goes with --once")) }
            if check && once { return .failure(UsageError("--check and --once do not go together")) }
            if check { return .success(.checkMonitor(configPath: config)) }
            return .success(.monitor(configPath: config, once: once, timeoutSeconds: timeout))
        case "health":
            var path: String?, json = false
            while let arg = rest.first {
                rest.removeFirst()
                if arg == "--json" { json = true; continue }
                if arg == "-h" || arg == "--help" { return .success(.help) }
                switch option(arg, &rest, names: ["-s", "--status"]) {
                case .value(let v):
                    guard !v.isEmpty else { return .failure(UsageError("--status takes a path")) }
                    path = v
                case .missing: return .failure(UsageError("option '\(arg)' needs a value"))
                case .notThis: return .failure(UsageError("unknown option '\(arg)' for 'health'"))
                }
            }
            return .success(.health(statusPath: path, json: json))
        default:
            if first.hasPrefix("-") { return .failure(UsageError("unknown option '\(first)'")) }
            return .failure(UsageError("unknown command '\(first)'"))
        }
    }

    private enum OptionValue: Equatable { case notThis, missing, value(String) }

    /// The value of `arg` if it is one of `names` (`--x V` or `--x=V`).
    private static func option(_ arg: String, _ rest: inout [String], names: [String]) -> OptionValue {
        for name in names {
            if arg == name {
                guard let v = rest.first else { return .missing }
                rest.removeFirst()
                return .value(v)
            }
            if name.hasPrefix("--"), arg.hasPrefix(name + "=") { return .value(String(arg.dropFirst(name.count + 1))) }
        }
        return .notThis
    }
}

