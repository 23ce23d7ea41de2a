import BeaconKit

/// SPEC §6: edits apply within a second without a restart; a refused edit keeps the last good
/// beacon on air, says why (FILE:LINE:COL) and blinks the fault LED until a good edit arrives.
/// What an edit must redo on air is the adapter session's policy's to decide, not this file's.
extension Daemon: ConfigEditsDelegate {
    public func configEditsSettled() { reload() }

    func configFileChanged() {
        guard !stopping else { return }
        edits.changed()
    }

    func reload() {
        edits.cancel()
        // Between SIGTERM and exit nothing new goes on air.
        guard !stopping else { return }
        switch loadConfig(path: configPath) {
        case .failure(let e):
            let first = firstLine(e.message)
            if RefusedEditRule.shouldSay(first, shownNow: sessions.refusedEdit) {
                log.error("config edit refused, keeping the beacon on air: \(e.message)")
            }
            sessions.refusedEdit = first
        case .success(let new):
            if sessions.refusedEdit != nil {
                sessions.refusedEdit = nil
                log.notice("config accepted again: \(configPath)")
            }
            let old = config
            sessions.apply(new.config, bytes: new.bytes)
            if new.config.leds != old.leds {
                if let lights { lights.lights.reconfigure(new.config.leds) } else if let leds = new.config.leds {
                    setLights(StatusLights(settings: leds, loop: loop, log: log))
                }
                sessions.publishStatus(force: true)   // show the status again on the new lines
            }
            if new.config.metrics != old.metrics {
                setMetrics(new.config.metrics.textfile)
                sessions.publishStatus(force: true)
            }
        }
    }
}
