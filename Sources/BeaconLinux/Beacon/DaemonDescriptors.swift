import BeaconKit
import Glibc

/// The daemon's core descriptors (SPEC §5, robust loop edges): each is watched with a handler for
/// when the kernel says it broke; a broken one is logged once and opened again by the
/// `DescriptorReopener` (BeaconLinux, tested there): after a pause, never in a busy loop.
extension Daemon {
    func watchSignals() {
        loop.watch(signals.fd, lost: { [weak self] e in
            guard let self else { return }
            log.error("the signal descriptor broke (\(e)); opening a new one")
            reopener.reopen("signals") { [weak self] () throws(Errno) in
                guard let self else { return }
                signals = try SignalDescriptor(signals: Self.signalsHandled)
                watchSignals()
            }
        }) { [weak self] in self?.onSignals() }
    }

    public static let signalsHandled = [SIGTERM, SIGINT, SIGHUP, SIGUSR1]

    func watchControl() {
        loop.watch(control.fd, lost: { [weak self] e in self?.controlLost(e) }) { [weak self] in self?.onDeviceEvents() }
    }

    func controlLost(_ e: Errno) {
        log.error("the HCI control socket broke (\(e)); opening a new one")
        loop.unwatch(control.fd)
        reopener.reopen("control") { [weak self] () throws(Errno) in
            guard let self else { return }
            control = try HCIControlSocket()
            watchControl()
            // Device events may have been missed meanwhile: check the adapter from scratch.
            sessions.deviceEvent(.registered, index: sessions.session.index)
        }
    }

    func watchMonitor() {
        loop.watch(monitor.fd, lost: { [weak self] e in self?.monitorLost(e) }) { [weak self] in self?.onMonitor() }
    }

    func monitorLost(_ e: Errno) {
        log.error("the HCI monitor socket broke (\(e)); opening a new one")
        loop.unwatch(monitor.fd)
        reopener.reopen("monitor") { [weak self] () throws(Errno) in
            guard let self else { return }
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
            loop.watch(w.fd, lost: { [weak self] e in
                guard let self else { return }
                log.error("the inotify descriptor broke (\(e)); watching \(configPath) anew")
                reopener.reopen("inotify") { [weak self] () throws(Errno) in
                    guard let self else { return }
                    watchConfig()
                    configFileChanged()
                }
            }) { [weak self] in
                guard let self else { return }
                if w.drain() { configFileChanged() }
            }
        } catch {
            log.warning("cannot watch \(configPath) for edits (\(error)); SIGHUP still reloads it")
        }
    }

    func watchRfkill() {
        guard let r = try? RfkillWatcher() else { return }
        rfkill = r
        loop.watch(r.fd, lost: { [weak self] e in
            guard let self else { return }
            log.warning("/dev/rfkill broke (\(e)); opening it again")
            reopener.reopen("rfkill") { [weak self] () throws(Errno) in self?.watchRfkill() }
        }) { [weak self] in
            guard let self else { return }
            if r.drain() { sessions.rfkillChanged() }
        }
    }
}
