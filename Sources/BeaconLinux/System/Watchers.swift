import BeaconKit
import CLinux
import Glibc

/// Watches the config file's directory with inotify, so saves by rename, truncate-and-write and
/// editors' temporary files all count. Reports only events that name the file.
public final class ConfigWatcher {
    public let fd: FileDescriptor
    public let directory: String
    public let fileName: String
    private var watch: Int32 = -1

    public init(path: String) throws(Errno) {
        (directory, fileName) = splitPath(path)
        fd = FileDescriptor(try syscall { inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC)) })
        try addWatch()
    }

    /// (Re-)adds the directory watch; false while the directory does not exist.
    @discardableResult
    public func addWatch() throws(Errno) -> Bool {
        // IN_ATTRIB: a chmod or chown that makes a refused-for-permission file readable is an edit too.
        let mask = UInt32(IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_CREATE | IN_DELETE | IN_MODIFY | IN_ATTRIB
                          | IN_DELETE_SELF | IN_MOVE_SELF)
        do {
            watch = try syscall { inotify_add_watch(fd.rawValue, directory, mask) }
            return true
        } catch let e where e == .noEntry {
            watch = -1
            return false
        }
    }

    public var isWatching: Bool { watch >= 0 }

    /// Drains events; true if any concerned the config file (or the directory itself went away).
    public func drain() -> Bool {
        var relevant = false
        var buf = [UInt8](repeating: 0, count: 4096)
        while let n = try? readUnlessWouldBlock(fd, &buf), n > 0 {
            var off = 0
            let header = MemoryLayout<inotify_event>.size
            while off + header <= n {
                let (mask, len) = buf.withUnsafeBytes { p -> (UInt32, Int) in
                    (p.load(fromByteOffset: off + 4, as: UInt32.self), Int(p.load(fromByteOffset: off + 12, as: UInt32.self)))
                }
                let nameStart = off + header, nameEnd = min(n, nameStart + len)
                let name = String(decoding: buf[nameStart..<nameEnd].prefix { $0 != 0 }, as: UTF8.self)
                if mask & UInt32(IN_Q_OVERFLOW) != 0 {
                    // Events were lost: whatever they were, read the file again.
                    relevant = true
                } else if mask & UInt32(IN_IGNORED | IN_DELETE_SELF | IN_MOVE_SELF) != 0 {
                    watch = -1
                    relevant = true
                } else if name == fileName {
                    relevant = true
                }
                off = nameStart + len
            }
        }
        return relevant
    }
}

/// /dev/rfkill: the kernel reports every block and unblock, so an unblocked adapter is
/// re-armed at once instead of at the next retry.
public final class RfkillWatcher {
    public let fd: FileDescriptor
    public init() throws(Errno) {
        fd = FileDescriptor(try syscall { open("/dev/rfkill", O_RDONLY | O_NONBLOCK | O_CLOEXEC) })
    }
    /// Drains events; true if any arrived.
    public func drain() -> Bool {
        var any = false
        var buf = [UInt8](repeating: 0, count: 64)
        while let n = try? fd.read(into: &buf), n > 0 { any = true }
        return any
    }
}
