import BeaconKit
import Glibc

/// How long a replaced file's content must last.
public enum Durability: Sendable {
    /// While the system runs: the rename alone (files in /run, rewritten anyway: the status file,
    /// the metrics, requests to another process).
    case running
    /// Across a power cut: the file fsync'd before the rename, its directory after, so a cut
    /// leaves either the old or the new content, never a mix or an empty file (config.toml, the
    /// last good copy, the monitor's memory).
    case powerCut
}

/// The one atomic writer: `bytes` go into a hidden temporary file in `path`'s directory (named
/// `.<name>.<pid>-<thread>.tmp`: never what a reader looks for, `*.prom` for node_exporter,
/// `*.request` for the daemon; one per thread, so two writers never share one), which gets
/// `mode` whatever the umask and is renamed over `path`: a reader sees the old file or the new
/// one, whole. On failure the temporary file is removed and `path` is as it was.
/// `makeDirectory`: a missing directory is made with that mode (not its parents).
public func replaceFile(_ path: String, with bytes: [UInt8], mode: mode_t, durability: Durability,
                        makeDirectory: mode_t? = nil) throws(Errno) {
    let (directory, name) = splitPath(path)
    let tmp = (directory == "/" ? "" : directory) + "/.\(name).\(getpid())-\(UInt(bitPattern: Int(bitPattern: pthread_self()))).tmp"
    let flags = O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW
    let fd: FileDescriptor
    do throws(Errno) {
        fd = FileDescriptor(try syscall { open(tmp, flags, mode) })
    } catch let e where e == .noEntry && makeDirectory != nil {
        _ = try syscall { mkdir(directory, makeDirectory ?? 0o700) }
        fd = FileDescriptor(try syscall { open(tmp, flags, mode) })
    }
    do throws(Errno) {
        defer { fd.close() }
        let raw = fd.rawValue
        _ = try syscall { fchmod(raw, mode) }
        try writeAll(raw, bytes)
        if durability == .powerCut { _ = try syscall { fsync(raw) } }
        try fd.closeReportingErrors()
        _ = try syscall { rename(tmp, path) }
    } catch {
        _ = unlink(tmp)
        throw error
    }
    guard durability == .powerCut else { return }
    let dir = FileDescriptor(try syscall { open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC) })
    defer { dir.close() }
    let raw = dir.rawValue
    _ = try syscall { fsync(raw) }
}

/// A small file in the daemon's state directory, replaced atomically and durably
/// (`replaceFile`, `.powerCut`); a missing state directory (a run without systemd's
/// `StateDirectory=`) is made once, mode 0700, its parent must exist.
public struct StateFile: Sendable {
    public let directory: String
    public let name: String

    public init(directory: String, name: String) {
        self.directory = directory
        self.name = name
    }

    public var path: String { directory + "/" + name }

    /// The content, or nil when there is no such file.
    public func read(limit: Int = 1 << 20) throws(Errno) -> [UInt8]? {
        do throws(Errno) {
            return try readFile(path, limit: limit)
        } catch let e where e == .noEntry {
            return nil
        }
    }

    /// Replaces the file with `bytes` (`mode`, whatever the umask), atomically and durably.
    public func write(_ bytes: [UInt8], mode: mode_t = 0o600) throws(Errno) {
        try replaceFile(path, with: bytes, mode: mode, durability: .powerCut, makeDirectory: 0o700)
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
