import BeaconKit

/// A file another process rewrites by a rename (the beacon daemon's status file, the updater's
/// state file), watched through its directory with inotify (`ConfigWatcher`) so that each change
/// is told at once, not at the owner's next refresh. The directory may appear later (its daemon
/// starts after us): the watch is added again at each `rewatch`, and by the handler after the
/// directory went away.
final class FileChangeWatch {
    let path: String
    private let loop: EventLoop
    /// nil before `start`, and when inotify cannot be had: no change is told, the owner's
    /// refresh still reads the file.
    private var watcher: ConfigWatcher?

    init(path: String, loop: EventLoop) {
        self.path = path; self.loop = loop
    }

    /// Whether the directory is watched now.
    var isWatching: Bool { watcher?.isWatching ?? false }

    /// `changed` on a later loop turn after each change of the file; changes within 100 ms are
    /// one.
    func start(_ changed: @escaping () -> Void) {
        guard watcher == nil, let w = try? ConfigWatcher(path: path) else { return }
        watcher = w
        loop.watch(w.fd, coalesceMs: 100) { [weak self] in
            guard let self, let w = watcher, w.drain() else { return }
            rewatch()
            changed()
        }
    }

    /// The watch added again if the directory has appeared since (or came back).
    func rewatch() {
        if let w = watcher, !w.isWatching { _ = try? w.addWatch() }
    }

    func stop() {
        if let w = watcher { loop.unwatch(w.fd) }
        watcher = nil
    }
}
