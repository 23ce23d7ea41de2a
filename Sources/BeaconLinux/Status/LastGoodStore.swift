import BeaconKit
import Glibc

/// Keeps the last good config in the state directory (SPEC §6), off the loop: the temp file's and
/// the directory's fsyncs run on a helper thread, so a slow SD card never delays SIGTERM, an edit
/// or the LEDs. One write at a time; a newer config waiting replaces an older one waiting.
public final class LastGoodStore {
    public let file: StateFile
    private let log: Logger
    private let worker: BlockingCall
    /// The bytes stored (nil: none yet), and the newest waiting to be written.
    public private(set) var stored: [UInt8]?
    private var waiting: [UInt8]?
    private var writing: [UInt8]?

    public init(file: StateFile, stored: [UInt8]?, loop: EventLoop, log: Logger) {
        self.file = file
        self.stored = stored
        self.log = log
        worker = BlockingCall(loop: loop)
    }

    /// True while a write runs (the daemon lets it finish before exiting).
    public var isWriting: Bool { writing != nil }

    /// Stores `bytes` unless they are what is stored already.
    public func store(_ bytes: [UInt8]) {
        guard LastGoodConfig.needsWrite(applied: bytes, stored: writing ?? stored) else { return }
        if writing != nil { waiting = bytes; return }
        writing = bytes
        let file = file
        worker.start({
            do throws(Errno) {
                try file.write(bytes)
                return 0
            } catch {
                errno = error.rawValue
                return -1
            }
        }) { [weak self] e in
            guard let self else { return }
            if let e {
                log.warning("cannot store the last good config in \(file.path) (\(e)); the beacon goes on, but a config file refused at the next start will have no fallback")
            } else {
                stored = bytes
                log.info("stored the applied config as the last good one: \(file.path)")
            }
            writing = nil
            if let next = waiting {
                waiting = nil
                store(next)
            }
        }
    }
}
