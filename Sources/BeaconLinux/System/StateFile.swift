import BeaconKit
import Glibc

/// A small file in the daemon's state directory, replaced atomically: written to a temp file
/// in the same directory, fsync'd, renamed over the old one, then the directory fsync'd, so a
/// power cut leaves either the old or the new content, never a mix or an empty file.
public struct StateFile: Sendable {
    public let directory: String
    public let name: String

    public init(directory: String, name: String) {
        self.directory = directory
        self.name = name
    }

    public var path: String { directory + "/" + name }
    var temporaryPath: String { directory + "/." + name + ".tmp" }

    /// The content, or nil when there is no such file.
    public func read(limit: Int = 1 << 20) throws(Errno) -> [UInt8]? {
        do throws(Errno) {
            return try readFile(path, limit: limit)
        } catch let e where e == .noEntry {
            return nil
        }
    }

    /// Creates the temp file; a missing state directory (a run without systemd's
    /// `StateDirectory=`) is created once, mode 0700, its parent must exist.
    private func openTemporary(_ tmp: String, mode: mode_t) throws(Errno) -> Int32 {
        let flags = O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW
        do throws(Errno) {
            return try syscall { open(tmp, flags, mode) }
        } catch let e where e == .noEntry {
            _ = try syscall { mkdir(directory, 0o700) }
            return try syscall { open(tmp, flags, mode) }
        }
    }

    /// Replaces the file with `bytes` (`mode`, whatever the umask), atomically and durably.
    public func write(_ bytes: [UInt8], mode: mode_t = 0o600) throws(Errno) {
        let tmp = temporaryPath
        do throws(Errno) {
            let fd = FileDescriptor(try openTemporary(tmp, mode: mode))
            defer { fd.close() }
            let raw = fd.rawValue
            _ = try syscall { fchmod(raw, mode) }
            try writeAll(raw, bytes)
            _ = try syscall { fsync(raw) }
            try fd.closeReportingErrors()
            _ = try syscall { rename(tmp, path) }
        } catch {
            _ = unlink(tmp)
            throw error
        }
        let dir = FileDescriptor(try syscall { open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC) })
        defer { dir.close() }
        let raw = dir.rawValue
        _ = try syscall { fsync(raw) }
    }
}

/// `path`'s directory ("." without a slash, "/" at the root) and its last component.
public func splitPath(_ path: String) -> (directory: String, name: String) {
    guard let slash = path.lastIndex(of: "/") else { return (".", path) }
    return (slash == path.startIndex ? "/" : String(path[..<slash]), String(path[path.index(after: slash)...]))
}

extension StateFile {
    public init(path: String) {
        let (directory, name) = splitPath(path)
        self.init(directory: directory, name: name)
    }
}
