import BeaconKit
import CLinux
import Glibc

/// The directory where the monitor leaves changes from afar for the beacon daemon (issue 32):
/// `<runtime>/requests`, made by the daemon, mode 0700 (the monitor runs as the same user; its
/// unit is the one that may write here). Watched with inotify: a request is complete once it is
/// renamed in (IN_MOVED_TO), never read half-written.
public final class RequestDirectory {
    public let path: String
    public let fd: FileDescriptor

    public init(path: String) throws(Errno) {
        self.path = path
        do throws(Errno) {
            _ = try syscall { mkdir(path, 0o700) }
        } catch let e where e == .exists {}
        fd = FileDescriptor(try syscall { inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC)) })
        _ = try syscall { inotify_add_watch(fd.rawValue, path, UInt32(IN_MOVED_TO | IN_CLOSE_WRITE)) }
    }

    /// Drains the inotify events; the requests are then found by listing (`take`).
    public func drain() {
        var buf = [UInt8](repeating: 0, count: 4096)
        while let n = try? readUnlessWouldBlock(fd, &buf), n > 0 {}
    }

    /// The complete requests (`*.request`), oldest name first, at most `limit` of them, each
    /// removed once read: a request is acted on once, even if the daemon restarts. A file that
    /// cannot be read is still removed and returned as its error. `more`: others are waiting
    /// (take them on the next loop turn; inotify will not say so again).
    public func take(limit: Int = 256) -> (requests: [(name: String, bytes: Result<[UInt8], Errno>)], more: Bool) {
        var names = pendingNames()
        // Byte order: the monitor names them by monotonic time, zero-padded.
        names.sort { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        let taken = names.prefix(limit).map { name in
            let file = path + "/" + name
            let bytes: Result<[UInt8], Errno>
            do throws(Errno) {
                bytes = .success(try readRequest(file))
            } catch {
                bytes = .failure(error)
            }
            _ = unlink(file)
            return (name, bytes)
        }
        return (taken, names.count > limit)
    }

    /// The names of the complete requests in `directory`, in no order.
    public func pendingNames() -> [String] { Self.pendingNames(in: path) }

    public static func pendingNames(in directory: String) -> [String] {
        guard let dir = opendir(directory) else { return [] }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name.hasSuffix(".request") && !name.hasPrefix(".") { names.append(name) }
        }
        return names
    }

    /// A regular file of at most `RemoteRequest.maximumBytes` (a larger one is refused unread).
    private func readRequest(_ file: String) throws(Errno) -> [UInt8] {
        let fd = FileDescriptor(try syscall { open(file, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC) })
        defer { fd.close() }
        var st = stat()
        _ = try syscall { fstat(fd.rawValue, &st) }
        guard st.st_mode & S_IFMT == S_IFREG, st.st_size <= RemoteRequest.maximumBytes else { throw Errno.fileTooLarge }
        var buf = [UInt8](repeating: 0, count: RemoteRequest.maximumBytes + 1)
        let n = try fd.read(into: &buf)
        return Array(buf[0..<n])
    }
}
