/// SPEC §6: the last config the daemon applied, kept in its state directory so that a config
/// file refused at start (a bad edit, a file emptied or garbled by a power cut) still puts the
/// last good beacon on air. Policy only; the file I/O is BeaconLinux's `StateFile`.
public enum LastGoodConfig {
    /// Where it lives without systemd's `StateDirectory=`.
    public static let defaultDirectory = "/var/lib/altbeacond"
    public static let fileName = "last-good.toml"

    /// The state directory: `$STATE_DIRECTORY` when set (systemd may list several, separated by
    /// colons; the first is ours), else `/var/lib/altbeacond`.
    public static func directory(environment value: String?) -> String {
        guard let value else { return defaultDirectory }
        let first = value.utf8.split(separator: UInt8(ascii: ":"), omittingEmptySubsequences: true).first
        guard let first, !first.isEmpty else { return defaultDirectory }
        return String(decoding: first, as: UTF8.self)
    }

    /// The stored copy is rewritten only when the applied file's bytes differ from it: the SD
    /// card sees a write per real change, not per reload.
    public static func needsWrite(applied: [UInt8], stored: [UInt8]?) -> Bool {
        stored != applied
    }

    /// What the daemon starts with.
    public enum Start: Equatable, Sendable {
        /// The config file is good.
        case file(BeaconConfig)
        /// The file was refused; the stored last good config goes on air, with the refusal shown.
        case lastGood(BeaconConfig)
        /// The file was refused and there is no usable stored config: exit as before (78).
        case refuse
    }

    /// Chooses the config at start. `stored` is the stored copy's bytes (nil when absent or
    /// unreadable); a stored copy that no longer parses is treated as absent, and its
    /// diagnostic returned so the daemon can log it.
    public static func start(file: BeaconConfig?, stored: [UInt8]?, storedPath: String) -> (Start, storedProblem: ConfigDiagnostic?) {
        if let file { return (.file(file), nil) }
        guard let stored else { return (.refuse, nil) }
        switch ConfigFile.parse(stored, path: storedPath) {
        case .success(let c): return (.lastGood(c), nil)
        case .failure(let d): return (.refuse, d)
        }
    }
}
