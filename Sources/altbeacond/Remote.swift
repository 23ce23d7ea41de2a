import BeaconKit
import BeaconLinux
import Glibc

/// Changes from afar (issues 32, 38): the monitor leaves each as a request file. What becomes of
/// them is `RemoteChangeProcedure`'s to decide (coalescing, the write bound, stale requests, one
/// restart); this is its runner: it takes the files, reads config.toml for a plan, writes the
/// planned file on a helper thread (fsync'd and renamed: a power cut leaves the old file or the
/// new one), then reloads as for an edit by hand.
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

    /// Every pending request, a bounded batch per loop turn: what is left is taken on the next
    /// turn without waiting for another inotify event.
    private func takeRequests() {
        guard let requests, !stopping else { return }
        let (batch, more) = requests.take()
        guard !batch.isEmpty else { return }
        let taken = batch.map { item in
            TakenRequest(name: item.name, request: item.bytes.mapError { RemoteRequestError.malformed("cannot read the request: \($0)") }
                .flatMap { RemoteRequest.decode($0) })
        }
        show(remoteChanges.received(taken, nowMs: monotonicMilliseconds()))
        // Everything waiting is taken before anything is planned: one write for all of it.
        if more { return loop.post { [unowned self] in takeRequests() } }
        advanceChanges()
    }

    /// Whatever the procedure asks for next, until it waits for a write, the bucket or a request.
    func advanceChanges() {
        guard !stopping else { return }
        let now = monotonicMilliseconds()
        switch remoteChanges.nextStep(nowMs: now) {
        case .idle: break
        case .wait(let until):
            changeTimer.schedule(afterMs: max(1, until - now)) { [unowned self] in advanceChanges() }
        case .plan(let settings):
            changeTimer.cancel()
            let bytes: [UInt8]
            do {
                bytes = try readFile(configPath, limit: 1 << 20)
            } catch {
                let plan = RemoteChangePlan.refusing(settings, "\(configPath): cannot read config: \(error)")
                show(remoteChanges.planned(plan, nowMs: now).effects)
                return advanceChanges()
            }
            let (write, effects) = remoteChanges.planned(RemoteChangePlan.make(settings, config: bytes, path: configPath), nowMs: now)
            show(effects)
            guard let write else { return advanceChanges() }
            writeConfig(write)
        case .restart(let r):
            remoteChanges.restartTaken()
            // Not under systemd nobody would start a new process: refused, the beacon stays on.
            guard notifier.isEnabled else {
                return show([.report(request: r.summary, origin: r.origin, applied: false,
                                     message: "not running under systemd: nobody would start the daemon again")])
            }
            show([.report(request: r.summary, origin: r.origin, applied: true, message: "")])
            log.notice("change from afar\(from(r.origin)): restart: taking the beacon off air; systemd starts the service again")
            stop(exitCode: ExitCode.restartAsked, status: "restarting, as asked from afar")
        }
    }

    /// Off the loop: two fsyncs on a card mounted `sync` must not delay SIGTERM or the LEDs.
    private func writeConfig(_ bytes: [UInt8]) {
        var st = stat()
        let mode = stat(configPath, &st) == 0 ? st.st_mode & 0o7777 : 0o644
        let file = StateFile(path: configPath)
        let path = configPath
        changeWriter.start({
            do throws(Errno) {
                try file.write(bytes, mode: mode)
                return 0
            } catch {
                errno = error.rawValue
                return -1
            }
        }) { [unowned self] e in
            let why = e.map { "cannot write \(path): \($0)\($0.isPermission ? " (the service needs ReadWritePaths= on its directory and write access to it)" : "")" }
            show(remoteChanges.written(error: why))
            if e == nil { reload() }   // at once: the inotify event that follows finds nothing new
            advanceChanges()
        }
    }

    private func show(_ effects: [RemoteChangeEffect]) {
        for effect in effects {
            switch effect {
            case .note(let text): log.info("change from afar: \(text)")
            case .identify(let origin):
                log.notice("change from afar\(from(origin)): identify: the status LED strobes for \(RemoteRequest.identifySeconds) s")
                sessions.identifying = true
                identifyTimer.schedule(afterMs: RemoteRequest.identifySeconds * 1000) { [unowned self] in sessions.identifying = false }
                sessions.change = RemoteChangeReport(request: "identify", origin: origin, applied: true, message: "", time: wallClockSeconds())
            case .report(let request, let origin, let applied, let message):
                if applied {
                    log.notice("change from afar\(from(origin)): \(request)\(message.isEmpty ? ": written to \(configPath)" : ": \(message)")")
                } else {
                    log.error("change from afar refused\(from(origin)), the beacon stays as it is: \(request): \(message)")
                }
                sessions.change = RemoteChangeReport(request: request, origin: origin, applied: applied, message: firstLine(message),
                                                     time: wallClockSeconds())
            }
        }
    }

    private func from(_ origin: String) -> String { origin.isEmpty ? "" : " (from \(origin))" }
}
