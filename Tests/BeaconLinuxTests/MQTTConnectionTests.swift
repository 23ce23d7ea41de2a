import Glibc
import XCTest
@testable import BeaconKit
@testable import BeaconLinux

/// MQTTConnection against a broker played by the test on a real loopback TCP socket, on a
/// virtual clock: what the session decides, performed on a socket.
final class MQTTConnectionTests: XCTestCase, MQTTConnectionDelegate {
    var events: [String] = []

    func mqttConnection(_ event: MQTTConnectionEvent) {
        switch event {
        case .connected: events.append("connected")
        case .received(let p): events.append("received \(p.topic)")
        case .closed(let why): events.append("closed: \(why)")
        }
    }

    /// A listening socket on 127.0.0.1 and its port.
    func listener() -> (Int32, UInt16) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var a = sockaddr_in()
        a.sin_family = sa_family_t(AF_INET)
        a.sin_addr.s_addr = UInt32(0x7f00_0001).bigEndian
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        let r = withUnsafeMutablePointer(to: &a) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, len) == 0 && listen(fd, 4) == 0 && getsockname(fd, $0, &len) == 0 }
        }
        XCTAssertTrue(r, "listen: \(Errno.current)")
        return (fd, UInt16(bigEndian: a.sin_port))
    }

    /// Loop turns until `done` (false after `turns`).
    func run(_ loop: EventLoop, turns: Int = 1000, until done: () -> Bool) -> Bool {
        for _ in 0..<turns {
            if done() { return true }
            loop.runOnce(maxWaitMs: 100)
        }
        return done()
    }

    /// The broker's end once the client's CONNECT is in: accepted, CONNECT read (blocking, 2 s at most).
    func acceptConnect(_ lfd: Int32) -> Int32 {
        let fd = accept(lfd, nil, nil)
        var tv = timeval(tv_sec: 2, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        var reader = MQTTPacketReader()
        var buf = [UInt8](repeating: 0, count: 4096)
        while true {
            if case .connect? = try? reader.next() { return fd }
            let n = buf.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            guard n > 0 else { XCTFail("no CONNECT"); return fd }
            reader.append(buf[0..<n])
        }
    }

    func writeAll(_ fd: Int32, _ bytes: [UInt8]) {
        XCTAssertEqual(bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, 0) }, bytes.count)
    }

    /// Issue 30: the fake broker that answers CONNECT with PINGRESP is refused at once, long
    /// before the CONNACK deadline.
    func testABrokerThatAnswersConnectWithPingRespIsRefused() throws {
        let (lfd, port) = listener()
        defer { close(lfd) }
        let loop = EventLoop(clock: LoopClock(virtualStartingAt: 0))
        let c = MQTTConnection(loop: loop)
        c.delegate = self
        c.open(address: "127.0.0.1", port: port, connect: try MQTTConnect(clientID: "t", keepAlive: 5))
        XCTAssertTrue(run(loop) { c.state == .waitingForConnAck })
        let server = acceptConnect(lfd)
        defer { close(server) }
        writeAll(server, MQTTPacket.pingResp.encoded())
        XCTAssertTrue(run(loop) { !events.isEmpty })
        XCTAssertEqual(events, ["closed: the broker answered CONNECT with PINGRESP, not CONNACK"])
        XCTAssertLessThan(loop.now, MQTTClientSession.connAckTimeoutMs)
    }

    /// Issue 30: while the broker reads nothing, what waits is bounded: the newest retained state
    /// per topic. When it reads again, everything else it gets is in order and ends with those.
    func testWhileTheBrokerReadsNothingTheNewestStatePerTopicWaits() throws {
        let (lfd, port) = listener()
        defer { close(lfd) }
        let loop = EventLoop(clock: LoopClock(virtualStartingAt: 0))
        let c = MQTTConnection(loop: loop)
        c.delegate = self
        c.open(address: "127.0.0.1", port: port, connect: try MQTTConnect(clientID: "t", keepAlive: 0))
        XCTAssertTrue(run(loop) { c.state == .waitingForConnAck })
        let server = acceptConnect(lfd)
        defer { close(server) }
        writeAll(server, MQTTPacket.connAck(try MQTTConnAck(returnCode: .accepted)).encoded())
        XCTAssertTrue(run(loop) { events == ["connected"] })
        // 24 MB, far more than the kernel's buffers on both ends take.
        let n = 200, topics = ["s/a", "s/b"]
        let body = [UInt8](repeating: 0x41, count: 60_000)
        for i in 0..<n {
            for t in topics { c.send(.publish(try MQTTPublish(topic: t, payload: body + [UInt8(i)], retain: true))) }
        }
        XCTAssertGreaterThan(c.droppedTotal, 0)
        XCTAssertLessThanOrEqual(c.outboxCount, topics.count)
        // The broker reads again.
        _ = fcntl(server, F_SETFL, O_NONBLOCK)
        var reader = MQTTPacketReader()
        var buf = [UInt8](repeating: 0, count: 1 << 16)
        var got: [(String, UInt8)] = []
        XCTAssertTrue(run(loop, turns: 100_000) {
            while true {
                let r = buf.withUnsafeMutableBytes { recv(server, $0.baseAddress, $0.count, 0) }
                guard r > 0 else { break }
                reader.append(buf[0..<r])
            }
            while case .publish(let p)? = try? reader.next() { got.append((p.topic, p.payload.last ?? 0)) }
            return got.count + c.droppedTotal >= n * topics.count
        })
        XCTAssertEqual(got.count + c.droppedTotal, n * topics.count, "each sent or dropped, none twice")
        XCTAssertEqual(got.suffix(2).map(\.0), topics)
        XCTAssertEqual(got.suffix(2).map(\.1), [UInt8(n - 1), UInt8(n - 1)])
        XCTAssertEqual(c.outboxCount, 0)
        XCTAssertEqual(events, ["connected"])
    }
}
