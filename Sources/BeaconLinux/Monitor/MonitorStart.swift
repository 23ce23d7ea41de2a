import BeaconKit

/// `altbeacond monitor`'s decisions around its session (issue 50: once in the executable).
public enum MonitorStart {
    /// Reports are read in batches this far apart: one wakeup per batch, not per advert (the
    /// CPU at hundreds of adverts a second), and 50 ms late is nothing against `silent_after_s`.
    public static let batchMs: Int64 = 50

    /// Why the monitor must not start with `config` (the exit status and the words), or nil.
    /// A password file others can read is refused at start, plainly (as ssh refuses such a key);
    /// the TLS files likewise, and any that cannot be used at all (a CA file that does not parse
    /// is a mistake in the setup, not a broker that is down). `--once` scans the [expect] tables:
    /// none is a mistake. (`--once` never connects, so its files are not judged.)
    public static func refusal(_ config: MonitorConfig, once: Bool, configPath: String) -> (code: Int32, message: String)? {
        if !once, let file = config.mqtt?.passwordFile, case .failure(let e) = readPasswordFile(file), e.refused {
            return (ExitCode.config, "altbeacond: \(e.text)")
        }
        if !once, let tls = config.mqtt?.tls, case .failure(let e) = TLSClientConfig.load(tls) {
            return (ExitCode.config, "altbeacond: \(e.text)")
        }
        if once && config.expectations.isEmpty {
            return (ExitCode.config, "altbeacond: \(configPath) expects no beacon: --once needs [expect.NAME] tables to scan for")
        }
        return nil
    }

    /// The exit status once `session` ended: 77 without permission, 3 without an adapter (or
    /// another failure of the scan), else 0, or, for `--once`, 2 when an expected beacon stayed
    /// silent (SPEC §10: for cron and Nagios).
    public static func exitCode(_ session: MonitorSession, once: Bool) -> Int32 {
        switch session.fatalFailure {
        case .permission?: return ExitCode.permission
        case _?: return 3
        case nil: return once && !session.tracker.allHeard ? 2 : ExitCode.ok
        }
    }
}

extension FirmwareUpdatePaths {
    /// /run/altbeacon-update and /usr/lib/altbeacon-image, or, for the live Home Assistant
    /// check and the testbed, ALTBEACOND_UPDATE_DIR and ALTBEACOND_IMAGE_MARKER.
    public static func fromEnvironment() -> FirmwareUpdatePaths {
        var p = FirmwareUpdatePaths.standard
        if let d = environment("ALTBEACOND_UPDATE_DIR"), !d.isEmpty { p.directory = d }
        if let m = environment("ALTBEACOND_IMAGE_MARKER"), !m.isEmpty { p.imageMarker = m }
        return p
    }
}
