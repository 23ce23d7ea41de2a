// Issue 50: what `altbeacond run` starts with, decided here and tested (once in the executable):
// the config file, or, when it is refused, the last good copy from the state directory (SPEC §6);
// only with neither does the daemon exit.

/// A config file as read and accepted: its bytes are what the state directory keeps.
public struct LoadedConfig: Sendable {
    public var config: BeaconConfig
    public var bytes: [UInt8]
    public init(config: BeaconConfig, bytes: [UInt8]) { self.config = config; self.bytes = bytes }
}

/// A config file that could not be used: the exit status and the words (FILE:LINE:COL, caret).
public struct ConfigLoadError: Error, Sendable {
    public var code: Int32
    public var message: String
    public init(code: Int32, message: String) { self.code = code; self.message = message }
}

public struct DaemonStart {
    public enum Level: Equatable, Sendable { case notice, warning, error }

    /// The config to put on air, or nil with `exitCode` and `standardError`.
    public var config: BeaconConfig?
    /// The refused file's first line, shown as the refused edit while the last good copy is on air.
    public var refusal: String?
    /// The stored copy's bytes when it parses (the store starts from them), nil otherwise.
    public var storedUsable: [UInt8]?
    public var log: [(Level, String)] = []
    public var exitCode: Int32?
    public var standardError: String?

    /// `loaded`: the config file; `stored`: the stored copy's bytes (nil: absent), or why it
    /// could not be read.
    public static func choose(loaded: Result<LoadedConfig, ConfigLoadError>, stored: Result<[UInt8]?, Errno>, storedPath: String,
                              storedDirectory: String, configPath: String) -> DaemonStart {
        var s = DaemonStart()
        var bytes: [UInt8]?
        switch stored {
        case .success(let b): bytes = b
        case .failure(let e): s.log.append((.warning, "cannot read the last good config \(storedPath): \(e)"))
        }
        let (start, storedProblem) = LastGoodConfig.start(file: try? loaded.get().config, stored: bytes, storedPath: storedPath)
        if let storedProblem {
            s.log.append((.warning, "ignoring the stored last good config, which no longer parses: \(storedProblem.headline)"))
        }
        s.storedUsable = storedProblem == nil ? bytes : nil
        switch (start, loaded) {
        case (.file(let c), _):
            s.config = c
        case (.lastGood(let c), .failure(let e)):
            s.log.append((.error, "config file refused at start: \(e.message)"))
            s.log.append((.notice, "putting the last good config on air instead (\(storedPath)); fix \(configPath) and it is applied as any edit"))
            s.config = c
            s.refusal = firstLine(e.message)
        case (_, .failure(let e)):
            s.standardError = e.message + "\n"
            if bytes == nil { s.log.append((.notice, "no last good config in \(storedDirectory) to fall back on")) }
            s.exitCode = e.code
        case (_, .success(let l)):
            s.config = l.config   // unreachable: a good file always wins
        }
        return s
    }
}

/// A refused edit is said once (SPEC §6): the same refusal again, its first line byte for byte
/// (String's == normalizes, which is slow on hostile text), is not logged again.
public enum RefusedEditRule {
    public static func shouldSay(_ first: String, shownNow: String?) -> Bool {
        !(shownNow?.utf8.elementsEqual(first.utf8) ?? false)
    }
}
