import BeaconKit
import CLinux
import Glibc

/// systemd's notify protocol without libsystemd: one datagram to $NOTIFY_SOCKET
/// (a path, or an abstract address written with a leading '@').
public final class SystemdNotifier {
    public let socketPath: String?
    /// Half of WATCHDOG_USEC, when systemd asked for pings (and WATCHDOG_PID, if set, is us).
    public let watchdogIntervalMs: Int64?
    private let fd: FileDescriptor?

    public init(notifySocket: String? = environment("NOTIFY_SOCKET"),
                watchdogUsec: String? = environment("WATCHDOG_USEC"),
                watchdogPid: String? = environment("WATCHDOG_PID")) {
        socketPath = notifySocket.flatMap { $0.isEmpty ? nil : $0 }
        if let usec = watchdogUsec.flatMap({ Int64($0) }), usec > 0,
           watchdogPid.flatMap({ Int32($0) }).map({ $0 == getpid() }) ?? true {
            watchdogIntervalMs = max(1, usec / 2000)
        } else {
            watchdogIntervalMs = nil
        }
        if socketPath != nil, let raw = try? syscall({ socket(AF_UNIX, clinux_sock_dgram_cloexec, 0) }) {
            fd = FileDescriptor(raw)
        } else {
            fd = nil
        }
    }

    public var isEnabled: Bool { fd != nil }

    /// Sends `message` ("READY=1\nSTATUS=..."). Failures are returned, never fatal.
    @discardableResult
    public func notify(_ message: String) -> Errno? {
        guard let fd, let path = socketPath else { return nil }
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        var pathBytes = Array(path.utf8)
        if pathBytes.first == UInt8(ascii: "@") { pathBytes[0] = 0 }
        let capacity = MemoryLayout.size(ofValue: addr.sun_path)
        guard pathBytes.count < capacity else { return Errno(ENAMETOOLONG) }
        withUnsafeMutableBytes(of: &addr.sun_path) { dst in
            for (i, b) in pathBytes.enumerated() { dst[i] = b }
        }
        let len = socklen_t(MemoryLayout<sa_family_t>.size + pathBytes.count + (pathBytes.first == 0 ? 0 : 1))
        let bytes = Array(message.utf8)
        do {
            _ = try syscall {
                bytes.withUnsafeBytes { msg in
                    withUnsafePointer(to: &addr) {
                        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                            sendto(fd.rawValue, msg.baseAddress, msg.count, Int32(MSG_NOSIGNAL), $0, len)
                        }
                    }
                }
            }
            return nil
        } catch {
            return error
        }
    }
}
