import BeaconKit
import Glibc
import XCTest
@testable import BeaconLinux

/// A broker played by a test on a real loopback TCP socket, for a client on the loop's virtual
/// clock: the listening socket, and the broker's end of each connection.
final class LoopbackBroker {
    let listenFD: Int32
    let port: UInt16

    init() {
        listenFD = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var a = sockaddr_in()
        a.sin_family = sa_family_t(AF_INET)
        a.sin_addr.s_addr = UInt32(0x7f00_0001).bigEndian
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        let fd = listenFD
        let ok = withUnsafeMutablePointer(to: &a) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, len) == 0 && listen(fd, 4) == 0 && getsockname(fd, $0, &len) == 0 }
        }
        XCTAssertTrue(ok, "listen: \(Errno.current)")
        port = UInt16(bigEndian: a.sin_port)
    }

    deinit { close(listenFD) }

    /// A client's connection waits to be accepted.
    var connectionWaiting: Bool {
        var p = pollfd(fd: listenFD, events: Int16(POLLIN), revents: 0)
        return poll(&p, 1, 0) == 1
    }

    /// The next connection, accepted, once its CONNECT is in (the loop turning meanwhile, as the
    /// client sends it from the loop); nil when none came.
    func accept(_ loop: EventLoop) -> BrokerEnd? {
        guard loop.run(atMostMs: 10_000, until: { connectionWaiting }) else { return nil }
        let end = BrokerEnd(fd: Glibc.accept(listenFD, nil, nil))
        guard end.receive(loop, until: { $0.contains { if case .connect = $0 { true } else { false } } }) else { return nil }
        return end
    }
}

/// One client connection as the broker sees it.
final class BrokerEnd {
    private(set) var fd: Int32
    /// Everything the client sent so far, in order.
    private(set) var packets: [MQTTPacket] = []
    private var reader = MQTTPacketReader()

    init(fd: Int32) { self.fd = fd }
    deinit { close() }

    var connect: MQTTConnect? {
        for case .connect(let c) in packets { return c }
        return nil
    }

    func send(_ packet: MQTTPacket) {
        let bytes = packet.encoded()
        XCTAssertEqual(bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, 0) }, bytes.count)
    }

    /// Reads what the client sent, the loop turning, until `done` holds for all of it. In real
    /// time too: the client's small writes may wait for the kernel's delayed ACK (Nagle).
    func receive(_ loop: EventLoop, until done: ([MQTTPacket]) -> Bool) -> Bool {
        var buf = [UInt8](repeating: 0, count: 65536)
        for _ in 0..<500 {
            var ready = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            _ = poll(&ready, 1, 10)
            let n = buf.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if n > 0 { reader.append(buf[0..<n]) }
            while let p = try? reader.next() { packets.append(p) }
            if done(packets) { return true }
            loop.runOnce(maxWaitMs: 0)
        }
        return false
    }

    /// The broker ends the connection (as one taking the session over, or going away).
    func close() {
        guard fd >= 0 else { return }
        _ = Glibc.close(fd)
        fd = -1
    }
}
