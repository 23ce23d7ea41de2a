import BeaconKit
import BeaconLinux

/// SPEC §6: edits apply within a second without a restart; a refused edit keeps the last good
/// beacon on air, says why (FILE:LINE:COL) and blinks the fault LED until a good edit arrives.
extension Daemon {
    func configFileChanged() {
        if let watcher, !watcher.isWatching { rewatch(watcher) }
        let at = debouncer.event(at: monotonicMilliseconds())
        loop.schedule("reload", afterMs: at - monotonicMilliseconds()) { [unowned self] in
            debouncer.fired()
            reload()
        }
    }

    /// The directory itself went away or was replaced: watch it again once it is back.
    private func rewatch(_ watcher: ConfigWatcher) {
        if (try? watcher.addWatch()) == true { return }
        loop.schedule("rewatch", afterMs: 2000) { [unowned self] in
            rewatch(watcher)
            if watcher.isWatching { configFileChanged() }
        }
    }

    func reload() {
        loop.cancel("reload")
        switch loadConfig(path: configPath) {
        case .failure(let e):
            let first = firstLine(e.message)
            // Compared byte for byte: String == normalizes, which is slow on hostile text.
            if !(refusedEdit?.utf8.elementsEqual(first.utf8) ?? false) {
                log.error("config edit refused, keeping the beacon on air: \(e.message)")
            }
            refusedEdit = first
            refreshHealth()
        case .success(let new):
            let hadRefusal = refusedEdit != nil
            refusedEdit = nil
            apply(new.config)
            if hadRefusal { log.notice("config accepted again: \(configPath)") }
            storeLastGood(new.bytes)
            refreshHealth()
        }
    }

    /// SPEC §6: keeps the applied file's bytes in the state directory, written only when they
    /// differ from the stored copy. A directory that cannot be written is a warning, never a failure.
    func storeLastGood(_ bytes: [UInt8]) {
        guard let lastGood, LastGoodConfig.needsWrite(applied: bytes, stored: storedLastGood) else { return }
        do {
            try lastGood.write(bytes)
            storedLastGood = bytes
            log.info("stored the applied config as the last good one: \(lastGood.path)")
        } catch {
            log.warning("cannot store the last good config in \(lastGood.path) (\(error)); the beacon goes on, but a config file refused at the next start will have no fallback")
        }
    }

    private func apply(_ new: BeaconConfig) {
        let old = config
        guard new != old else { return }
        config = new
        if new.leds != old.leds {
            if let lights { lights.reconfigure(new.leds) } else if let leds = new.leds {
                lights = StatusLights(settings: leds, loop: loop, log: log)
            }
            lights?.show(health)
        }
        if new.watchdog != old.watchdog {
            supervisor.probeIntervalMs = Int64(new.watchdog.checkIntervalS) * 1000
        }
        let scope: ArmScope?
        if new.bluetooth.adapterIndex != old.bluetooth.adapterIndex {
            // Take the old adapter off air before moving.
            advertiser.disable(deadlineMs: 400) {}
            advertiser.close()
            retargetMonitor()
            scope = .full
        } else if new.bluetooth.intervalMs != old.bluetooth.intervalMs || new.bluetooth.txPowerDbm != old.bluetooth.txPowerDbm {
            scope = .parameters
        } else if new.frames.map(\.name) != old.frames.map(\.name) {
            // Frames added or removed: the slots are laid out anew.
            scope = .parameters
        } else if new.frames != old.frames {
            // Only the frames whose bytes changed are sent again.
            scope = .data
        } else {
            scope = nil
        }
        if new.bluetooth.rotationMs != old.bluetooth.rotationMs, loop.isScheduled("rotate") { scheduleRotation() }
        if let scope {
            log.info("config changed: \(describe(new)) on \(new.bluetooth.adapter), every \(new.bluetooth.intervalMs) ms")
            handle(.configChanged(scope))
        }
    }
}

/// The first line of a message (the diagnostic's headline), by bytes.
func firstLine(_ s: String) -> String {
    guard let nl = s.utf8.firstIndex(of: 0x0A) else { return s }
    return String(s[..<nl])
}
