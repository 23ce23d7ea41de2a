import BeaconKit
import Glibc

/// Runs a raw call that returns -1 and sets errno on failure, retrying EINTR.
@inline(__always)
func syscall<T: BinaryInteger>(_ body: () -> T) throws(Errno) -> T {
    while true {
        let r = body()
        if r != -1 { return r }
        let e = Errno.current
        if e != .interrupted { throw e }
    }
}

/// Monotonic milliseconds: the one clock the daemon schedules by.
public func monotonicMilliseconds() -> Int64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Int64(ts.tv_sec) * 1000 + Int64(ts.tv_nsec) / 1_000_000
}

public func monotonicMicroseconds() -> Int64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Int64(ts.tv_sec) * 1_000_000 + Int64(ts.tv_nsec) / 1000
}

/// An owned file descriptor; closed exactly once.
public final class FileDescriptor: @unchecked Sendable {
    public private(set) var rawValue: Int32
    public init(_ raw: Int32) { rawValue = raw }
    public var isOpen: Bool { rawValue >= 0 }
    public func close() {
        guard rawValue >= 0 else { return }
        _ = Glibc.close(rawValue)   // never retried: Linux frees the descriptor even on EINTR
        rawValue = -1
    }
    deinit { close() }

    public func read(into buffer: inout [UInt8]) throws(Errno) -> Int {
        let fd = rawValue
        return try syscall { buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) } }
    }

    public func write(_ bytes: [UInt8]) throws(Errno) -> Int {
        let fd = rawValue
        return try syscall { bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) } }
    }

    /// Closes, reporting what close(2) reports: some file systems (NFS, a full disk) give their
    /// delayed write errors only here. EINTR is no error (Linux has freed the descriptor anyway).
    public func closeReportingErrors() throws(Errno) {
        let r = Glibc.close(rawValue)
        let e = r == -1 ? Errno.current : nil
        rawValue = -1
        if let e, e != .interrupted { throw e }
    }
}

/// Reads a whole small file (config, /proc, sysfs) with a size cap. No Foundation.
public func readFile(_ path: String, limit: Int = 1 << 20) throws(Errno) -> [UInt8] {
    let fd = FileDescriptor(try syscall { open(path, O_RDONLY | O_CLOEXEC) })
    defer { fd.close() }
    var out: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 16384)
    while out.count <= limit {
        let n = try fd.read(into: &chunk)
        if n == 0 { break }
        out.append(contentsOf: chunk[0..<n])
    }
    return out
}

/// The environment variable, or nil.
public func environment(_ name: String) -> String? {
    guard let p = getenv(name) else { return nil }
    return String(cString: p)
}

/// Writes all of `bytes` to `fd`, a short write continued where it stopped (EINTR is retried in
/// `syscall`, as everywhere).
public func writeAll(_ fd: Int32, _ bytes: [UInt8]) throws(Errno) {
    var off = 0
    while off < bytes.count {
        off += try syscall { bytes[off...].withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) } }
    }
}

/// Writes all of `s` to `fd`. False when the descriptor refused (a closed pipe, say); callers
/// with nowhere left to report it ignore that.
@discardableResult
public func writeAll(_ fd: Int32, _ s: String) -> Bool {
    (try? writeAll(fd, Array(s.utf8))) != nil
}

/// Writes to stderr, unbuffered, whole.
public func writeStandardError(_ s: String) { writeAll(2, s) }

/// Writes to stdout, whole.
public func writeStandardOutput(_ s: String) { writeAll(1, s) }
