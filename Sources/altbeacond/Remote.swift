import BeaconKit
import BeaconLinux
import Glibc

/// Issue 32: changes from afar. The monitor leaves each as a request file; a setting is judged
/// exactly as an edit of the config file, and only an accepted one replaces config.toml (whole,
/// fsync'd, renamed: a power cut leaves the old file or the new one). A refused one changes
/// nothing and is reported with `check`'s message in the status file, which the monitor publishes.
extension Daemon {
    func watchRequests() {
        let path = runtimeDirectory() + "/requests"
        do {
            let r = try RequestDirectory(path: path)
            requests = r
            loop.watch(r.fd, lost: { [unowned self] e in
                log.error("the requests directory's inotify descriptor broke (\(e)); changes from afar stop until a restart")
                loop.unwatch(r.fd)
            }) { [unowned self] in
                r.drain()
                takeRequests()
            }
            takeRequests()   // left while the daemon was not running
        } catch {
            log.warning("cannot watch \(path) for changes from afar (\(error)); editing \(configPath) still works")
        }
    }

    private func takeRequests() {
        guard let requests, !stopping else { return }
        for (name, read) in requests.take() {
            switch read {
            case .failure(let e): refuse(summary: name, origin: "", "cannot read the request: \(e)")
            case .success(let bytes):
                switch RemoteRequest.decode(bytes) {
                case .failure(let e): refuse(summary: name, origin: "", e.description)
                case .success(let r): perform(r)
                }
            }
        }
    }

    private func perform(_ r: RemoteRequest) {
        let from = r.origin.isEmpty ? "" : " (from \(r.origin))"
        switch r.action {
        case .identify:
            log.notice("change from afar\(from): identify: the status LED strobes for \(RemoteRequest.identifySeconds) s")
            report(r, applied: true, "")
            sessions.identifying = true
            identifyTimer.schedule(afterMs: RemoteRequest.identifySeconds * 1000) { [unowned self] in sessions.identifying = false }
        case .restart:
            // Not under systemd nobody would start a new process: refused, the beacon stays on.
            guard notifier.isEnabled else {
                return refuse(summary: r.summary, origin: r.origin, "not running under systemd: nobody would start the daemon again")
            }
            log.notice("change from afar\(from): restart: taking the beacon off air; systemd starts the service again")
            report(r, applied: true, "")
            stop(exitCode: ExitCode.restartAsked, status: "restarting, as asked from afar")
        case .set(let setting, let value):
            switch setting.literal(value) {
            case .failure(let e): refuse(summary: r.summary, origin: r.origin, e.description)
            case .success(let literal): set(setting, literal, r)
            }
        }
    }

    /// The edited file is loaded as the daemon loads config.toml; only then does it replace it.
    private func set(_ setting: RemoteSetting, _ literal: String, _ r: RemoteRequest) {
        let bytes: [UInt8]
        do {
            bytes = try readFile(configPath, limit: 1 << 20)
        } catch {
            return refuse(summary: r.summary, origin: r.origin, "\(configPath): cannot read config: \(error)")
        }
        let (table, key, _) = setting.configKey
        let edited: [UInt8]
        switch ConfigTextEdit.setting(table: table, key: key, literal: literal, in: bytes) {
        case .failure(let e): return refuse(summary: r.summary, origin: r.origin, "\(configPath): \(e)")
        case .success(let b): edited = b
        }
        if case .failure(let d) = ConfigFile.parse(edited, path: configPath) {
            return refuse(summary: r.summary, origin: r.origin, d.description)
        }
        var st = stat()
        let mode = stat(configPath, &st) == 0 ? st.st_mode & 0o7777 : 0o644
        let file = StateFile(path: configPath)
        do {
            try file.write(edited, mode: mode)
        } catch {
            return refuse(summary: r.summary, origin: r.origin, "cannot write \(configPath): \(error)\(error.isPermission ? " (the service needs ReadWritePaths= on its directory and write access to it)" : "")")
        }
        let from = r.origin.isEmpty ? "" : " (from \(r.origin))"
        log.notice("change from afar\(from): \(r.summary): written to \(configPath)")
        report(r, applied: true, "")
        reload()   // at once: the inotify event that follows finds nothing new
    }

    private func refuse(summary: String, origin: String, _ message: String) {
        let from = origin.isEmpty ? "" : " (from \(origin))"
        log.error("change from afar refused\(from), the beacon stays as it is: \(summary): \(message)")
        sessions.change = RemoteChangeReport(request: summary, origin: origin, applied: false, message: firstLine(message),
                                             time: wallClockSeconds())
    }

    private func report(_ r: RemoteRequest, applied: Bool, _ message: String) {
        sessions.change = RemoteChangeReport(request: r.summary, origin: r.origin, applied: applied, message: message,
                                             time: wallClockSeconds())
    }
}
