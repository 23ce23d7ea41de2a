import BeaconKit
import Glibc
import XCTest
@testable import BeaconLinux

/// sd_notify against a real AF_UNIX datagram socket, as systemd listens.
final class SystemdNotifierTests: XCTestCase {
    /// Binds a datagram socket at `path` (a leading "@" means the abstract namespace).
    func listen(_ path: String) throws -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        XCTAssertGreaterThanOrEqual(fd, 0)
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        var bytes = Array(path.utf8)
        let abstract = bytes.first == UInt8(ascii: "@")
        if abstract { bytes[0] = 0 }
        withUnsafeMutableBytes(of: &addr.sun_path) { for (i, b) in bytes.enumerated() { $0[i] = b } }
        let len = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count + (abstract ? 0 : 1))
        let r = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, len) } }
        XCTAssertEqual(r, 0, "bind \(path): \(Errno.current)")
        var tv = timeval(tv_sec: 2, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        return fd
    }

    func receive(_ fd: Int32) -> String? {
        var buf = [UInt8](repeating: 0, count: 4096)
        let n = buf.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        return n >= 0 ? String(decoding: buf[0..<n], as: UTF8.self) : nil
    }

    func testPathSocket() throws {
        let path = "/tmp/altbeacond-notify-\(getpid()).sock"
        unlink(path)
        let fd = try listen(path)
        defer { close(fd); unlink(path) }
        let n = SystemdNotifier(notifySocket: path, watchdogUsec: nil, watchdogPid: nil)
        XCTAssertTrue(n.isEnabled)
        XCTAssertNil(n.notify("READY=1\nSTATUS=advertising"))
        XCTAssertEqual(receive(fd), "READY=1\nSTATUS=advertising")
        XCTAssertNil(n.notify("STOPPING=1"))
        XCTAssertEqual(receive(fd), "STOPPING=1")
    }

    func testAbstractSocket() throws {
        let name = "@altbeacond-test-\(getpid())"
        let fd = try listen(name)
        defer { close(fd) }
        let n = SystemdNotifier(notifySocket: name, watchdogUsec: nil, watchdogPid: nil)
        XCTAssertNil(n.notify("WATCHDOG=1"))
        XCTAssertEqual(receive(fd), "WATCHDOG=1")
    }

    func testNoSocketIsANoOp() {
        let n = SystemdNotifier(notifySocket: nil, watchdogUsec: nil, watchdogPid: nil)
        XCTAssertFalse(n.isEnabled)
        XCTAssertNil(n.notify("READY=1"))
    }

    func testMissingListenerIsReportedNotFatal() {
        let n = SystemdNotifier(notifySocket: "/tmp/altbeacond-nobody-listens-\(getpid())", watchdogUsec: nil, watchdogPid: nil)
        XCTAssertNotNil(n.notify("READY=1"))
    }

    func testWatchdogIntervalIsHalfOfWatchdogUsec() {
        XCTAssertEqual(SystemdNotifier(notifySocket: nil, watchdogUsec: "30000000", watchdogPid: nil).watchdogIntervalMs, 15000)
        XCTAssertEqual(SystemdNotifier(notifySocket: nil, watchdogUsec: "30000000", watchdogPid: "\(getpid())").watchdogIntervalMs, 15000)
        XCTAssertNil(SystemdNotifier(notifySocket: nil, watchdogUsec: "30000000", watchdogPid: "1").watchdogIntervalMs,
                     "pings meant for another process")
        XCTAssertNil(SystemdNotifier(notifySocket: nil, watchdogUsec: "0", watchdogPid: nil).watchdogIntervalMs)
        XCTAssertNil(SystemdNotifier(notifySocket: nil, watchdogUsec: "x", watchdogPid: nil).watchdogIntervalMs)
    }
}
