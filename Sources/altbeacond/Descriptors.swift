import BeaconKit
import BeaconLinux
import Glibc

/// The daemon's core descriptors (SPEC §5, robust loop edges): each is watched with a handler for
/// when the kernel says it broke; a broken one is logged once and opened again after a pause,
/// never polled in a busy loop.
extension Daemon {
    static let reopenAfterMs: Int64 = 1000

    func watchSignals() {
        loop.watch(signals.fd, lost: { [unowned self] e in
            log.error("the signal descriptor broke (\(e)); opening a new one")
            reopen("signals") { [unowned self] () throws(Errno) in
                signals = try SignalDescriptor(signals: Self.signalsHandled)
                watchSignals()
            }
        }) { [unowned self] in onSignals() }
    }

    static let signalsHandled = [SIGTERM, SIGINT, SIGHUP, SIGUSR1]

    func watchControl() {
        loop.watch(control.fd, lost: { [unowned self] e in controlLost(e) }) { [unowned self] in onDeviceEvents() }
    }

    func controlLost(_ e: Errno) {
        log.error("the HCI control socket broke (\(e)); opening a new one")
        loop.unwatch(control.fd)
        reopen("control") { [unowned self] () throws(Errno) in
            control = try HCIControlSocket()
            watchControl()
            // Device events may have been missed meanwhile: check the adapter from scratch.
            sessions.deviceEvent(.registered, index: sessions.session.index)
        }
    }

    func watchMonitor() {
        loop.watch(monitor.fd, lost: { [unowned self] e in monitorLost(e) }) { [unowned self] in onMonitor() }
    }

    func monitorLost(_ e: Errno) {
        log.error("the HCI monitor socket broke (\(e)); opening a new one")
        loop.unwatch(monitor.fd)
        reopen("monitor") { [unowned self] () throws(Errno) in
            monitor = try HCIMonitorSocket()
            retargetMonitor()
            watchMonitor()
        }
    }

    func watchConfig() {
        do {
            let w = try ConfigWatcher(path: configPath)
            edits.use(w)
            edits.delegate = self
            loop.watch(w.fd, lost: { [unowned self] e in
                log.error("the inotify descriptor broke (\(e)); watching \(configPath) anew")
                reopen("inotify") { [unowned self] () throws(Errno) in
                    watchConfig()
                    configFileChanged()
                }
            }) { [unowned self] in if w.drain() { configFileChanged() } }
        } catch {
            log.warning("cannot watch \(configPath) for edits (\(error)); SIGHUP still reloads it")
        }
    }

    func watchRfkill() {
        guard let r = try? RfkillWatcher() else { return }
        rfkill = r
        loop.watch(r.fd, lost: { [unowned self] e in
            log.warning("/dev/rfkill broke (\(e)); opening it again")
            reopen("rfkill") { [unowned self] () throws(Errno) in watchRfkill() }
        }) { [unowned self] in if r.drain() { sessions.rfkillChanged() } }
    }

    /// Runs `open` after a pause, and again every `reopenAfterMs` until it works.
    private func reopen(_ what: String, _ open: @escaping () throws(Errno) -> Void) {
        let timer = reopenTimers[what] ?? loop.makeTimer()
        reopenTimers[what] = timer
        timer.schedule(afterMs: Self.reopenAfterMs) { [unowned self] in
            do {
                try open()
                log.notice("\(what) descriptor open again")
            } catch {
                reopen(what, open)
            }
        }
    }
}
