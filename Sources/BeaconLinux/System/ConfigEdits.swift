import BeaconKit

/// Told once a burst of edits to the watched config file has settled.
public protocol ConfigEditsDelegate: AnyObject {
    func configEditsSettled()
}

/// A config file read again once its edits settle (SPEC §6), for the beacon daemon's config.toml
/// and the monitor's monitor.toml alike: each inotify event that concerns the file restarts a
/// `Debouncer`, and a watched directory that went away (or was replaced) is watched again every
/// 2 s, with a read once it is back.
public final class ConfigEdits {
    public weak var delegate: ConfigEditsDelegate?
    public private(set) var watcher: ConfigWatcher?
    private let loop: EventLoop
    private var debouncer = Debouncer()
    private let settleTimer: LoopTimer
    private let rewatchTimer: LoopTimer

    public init(loop: EventLoop) {
        self.loop = loop
        settleTimer = loop.makeTimer()
        rewatchTimer = loop.makeTimer()
    }

    /// Watches the file with `watcher` from now on (its descriptor is the caller's to poll).
    public func use(_ watcher: ConfigWatcher) { self.watcher = watcher }

    /// The file (or its directory) changed: the delegate is told once the edits settle.
    public func changed() {
        if let watcher, !watcher.isWatching { rewatch(watcher) }
        let now = loop.now
        let at = debouncer.event(at: now)
        settleTimer.schedule(afterMs: at - now) { [weak self] in
            guard let self else { return }
            debouncer.fired()
            delegate?.configEditsSettled()
        }
    }

    /// A read made for another reason (SIGHUP) takes the place of the one waiting.
    public func cancel() {
        settleTimer.cancel()
        debouncer.fired()
    }

    private func rewatch(_ watcher: ConfigWatcher) {
        if (try? watcher.addWatch()) == true { return }
        rewatchTimer.schedule(afterMs: 2000) { [weak self] in
            guard let self else { return }
            rewatch(watcher)
            if watcher.isWatching { changed() }
        }
    }
}
