import BeaconKit
import BeaconLinux

/// SPEC §6: edits apply within a second without a restart; a refused edit keeps the last good
/// beacon on air, says why (FILE:LINE:COL) and blinks the fault LED until a good edit arrives.
/// What an edit must redo on air is the adapter session's policy's to decide, not this file's.
extension Daemon {
    func configFileChanged() {
        guard !stopping else { return }
        if let watcher, !watcher.isWatching { rewatch(watcher) }
        let now = monotonicMilliseconds()
        let at = debouncer.event(at: now)
        reloadTimer.schedule(afterMs: at - now) { [unowned self] in
            debouncer.fired()
            reload()
        }
    }

    /// The directory itself went away or was replaced: watch it again once it is back.
    private func rewatch(_ watcher: ConfigWatcher) {
        if (try? watcher.addWatch()) == true { return }
        rewatchTimer.schedule(afterMs: 2000) { [unowned self] in
            rewatch(watcher)
            if watcher.isWatching { configFileChanged() }
        }
    }

    func reload() {
        reloadTimer.cancel()
        // Between SIGTERM and exit nothing new goes on air.
        guard !stopping else { return }
        switch loadConfig(path: configPath) {
        case .failure(let e):
            let first = firstLine(e.message)
            // Compared byte for byte: String == normalizes, which is slow on hostile text.
            if !(refusedEdit?.utf8.elementsEqual(first.utf8) ?? false) {
                log.error("config edit refused, keeping the beacon on air: \(e.message)")
            }
            refusedEdit = first
        case .success(let new):
            let hadRefusal = refusedEdit != nil
            refusedEdit = nil
            if hadRefusal { log.notice("config accepted again: \(configPath)") }
            apply(new.config, bytes: new.bytes)
        }
        publishStatus()
    }

    /// Hands an accepted config to the adapter sessions; its bytes become the last good copy
    /// once the controller confirmed it on air.
    func apply(_ new: BeaconConfig, bytes: [UInt8]) {
        let old = config
        if new == old {
            // Nothing changes; the file's bytes may (a comment): what is on air is this file.
            if session.policy.confirmedGeneration == generation { lastGood?.store(bytes) } else { remember(bytes) }
            return
        }
        config = new
        generation += 1
        remember(bytes)
        if new.leds != old.leds {
            if let lights { lights.lights.reconfigure(new.leds) } else if let leds = new.leds {
                setLights(StatusLights(settings: leds, loop: loop, log: log))
            }
            lastStatus = nil   // show the status again on the new lines
        }
        log.info("config changed: \(describe(new)) on \(new.bluetooth.adapter), every \(new.bluetooth.intervalMs) ms")
        if new.bluetooth.adapterIndex != old.bluetooth.adapterIndex {
            moveAdapter(to: new)
        } else {
            session.configChanged(new, generation: generation)
        }
    }

    private func remember(_ bytes: [UInt8]) {
        unconfirmedBytes.append((generation, bytes))
        if unconfirmedBytes.count > 4 { unconfirmedBytes.removeFirst(unconfirmedBytes.count - 4) }
    }

    /// The old adapter's session takes every set off air (each command with its own deadline, so
    /// a hung old controller only delays its own goodbye) while the new one arms at once.
    private func moveAdapter(to new: BeaconConfig) {
        let old = session!
        log.notice("moving the beacon from \(old.adapter) to \(new.bluetooth.adapter); taking it off air on \(old.adapter)")
        retiring.append(old)
        old.retire(commandTimeoutMs: Self.retireCommandTimeoutMs, deadlineMs: Self.retireDeadlineMs) { [unowned self] confirmed in
            if confirmed { log.info("\(old.adapter): off air") }
            release(old)
        }
        session = makeSession(new)
        retargetMonitor()
        session.start()
    }

    /// Lets a retired session go on a later turn (never inside its own callback), and only once
    /// no power change of its runs (a hung HCIDEVUP may return minutes later).
    private func release(_ old: AdapterSession) {
        loop.post { [unowned self] in
            guard old.advertiser.isChangingPower else { return retiring.removeAll { $0 === old } }
            let wait = loop.makeTimer()
            wait.schedule(afterMs: 1000) { [unowned self] in
                _ = wait
                release(old)
            }
        }
    }

    static let retireCommandTimeoutMs: Int64 = 1000
    static let retireDeadlineMs: Int64 = 10_000
}

/// The first line of a message (the diagnostic's headline), by bytes.
func firstLine(_ s: String) -> String {
    guard let nl = s.utf8.firstIndex(of: 0x0A) else { return s }
    return String(s[..<nl])
}
