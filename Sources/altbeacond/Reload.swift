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
            let first = e.message.split(separator: "\n").first.map(String.init) ?? e.message
            if refusedEdit != first {
                log.error("config edit refused, keeping the beacon on air: \(e.message)")
            }
            refusedEdit = first
            refreshHealth()
        case .success(let new):
            let hadRefusal = refusedEdit != nil
            refusedEdit = nil
            apply(new)
            if hadRefusal { log.notice("config accepted again: \(configPath)") }
            refreshHealth()
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
            _ = advertiser.disable(timeoutMs: 400)
            closeAdapter()
            retargetMonitor()
            scope = .full
        } else if new.bluetooth.intervalMs != old.bluetooth.intervalMs || new.bluetooth.txPowerDbm != old.bluetooth.txPowerDbm {
            scope = .parameters
        } else if new.beacon != old.beacon {
            scope = .data
        } else {
            scope = nil
        }
        if let scope {
            log.info("config changed: \(describe(new.beacon)) on \(new.bluetooth.adapter), every \(new.bluetooth.intervalMs) ms")
            handle(.configChanged(scope))
        }
    }
}
