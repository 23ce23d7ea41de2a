import BeaconKit
import CLinux
import Glibc

/// One MQTT 3.1.1 session with a broker over TCP on the event loop (no TLS: docs/monitoring.md),
/// BeaconKit's codec for the packets: a non-blocking connect, CONNECT with the will, CONNACK
/// within `connAckTimeoutMs`, PINGREQ when nothing was sent for the keep-alive, the broker taken
/// for gone when no PINGRESP comes within half of it. A lost or refused session is reported once
/// through `onClose`; the owner reconnects (with back-off).
public final class MQTTConnection {
    public enum State: Equatable { case closed, connecting, waitingForConnAck, connected }
    public static let connAckTimeoutMs: Int64 = 10_000

    private let loop: EventLoop
    /// The socket while TCP connects; then `stream` owns it.
    private var connecting: FileDescriptor?
    private var stream: StreamSocket?
    private var reader = MQTTPacketReader()
    private var connect: MQTTConnect?
    private let keepAliveTimer: LoopTimer
    private let answerTimer: LoopTimer
    private var lastSentMs: Int64 = 0
    public private(set) var state = State.closed
    public var onConnected: () -> Void = {}
    public var onPublish: (MQTTPublish) -> Void = { _ in }
    /// The session ended or never started: why, in a few words.
    public var onClose: (String) -> Void = { _ in }

    public init(loop: EventLoop) {
        self.loop = loop
        keepAliveTimer = loop.makeTimer(); answerTimer = loop.makeTimer()
    }

    /// Starts connecting to `address` (IPv4 or IPv6 literal) `port`; CONNECT goes once TCP is up.
    public func open(address: String, port: UInt16, connect packet: MQTTConnect) {
        close()
        connect = packet
        var storage = sockaddr_storage()
        var length: socklen_t = 0
        let family: Int32
        if address.contains(":") {
            var a = sockaddr_in6()
            a.sin6_family = sa_family_t(AF_INET6)
            a.sin6_port = port.bigEndian
            guard inet_pton(AF_INET6, address, &a.sin6_addr) == 1 else { return fail("'\(address)' is not an IP address") }
            withUnsafeBytes(of: a) { src in withUnsafeMutableBytes(of: &storage) { $0.copyMemory(from: src) } }
            length = socklen_t(MemoryLayout<sockaddr_in6>.size)
            family = AF_INET6
        } else {
            var a = sockaddr_in()
            a.sin_family = sa_family_t(AF_INET)
            a.sin_port = port.bigEndian
            guard inet_pton(AF_INET, address, &a.sin_addr) == 1 else { return fail("'\(address)' is not an IP address") }
            withUnsafeBytes(of: a) { src in withUnsafeMutableBytes(of: &storage) { $0.copyMemory(from: src) } }
            length = socklen_t(MemoryLayout<sockaddr_in>.size)
            family = AF_INET
        }
        let raw = socket(family, clinux_sock_stream_cloexec_nonblock, 0)
        guard raw >= 0 else { return fail("socket: \(Errno.current)") }
        let sock = FileDescriptor(raw)
        connecting = sock
        state = .connecting
        let r = withUnsafePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(sock.rawValue, $0, length) }
        }
        if r != 0 && errno != EINPROGRESS { return fail("connect: \(Errno.current)") }
        loop.watchWritable(sock) { [weak self] in self?.tcpConnected() }
        answerTimer.schedule(afterMs: Self.connAckTimeoutMs) { [weak self] in self?.fail("no answer from the broker within \(Self.connAckTimeoutMs / 1000) s") }
    }

    /// Sends `packet` (queued while the socket is full).
    public func send(_ packet: MQTTPacket) {
        guard state == .connected || state == .waitingForConnAck else { return }
        lastSentMs = loop.now
        stream?.send(packet.encoded())
    }

    /// DISCONNECT (so the broker does not publish the will), written, then closed.
    public func disconnect() {
        if state == .connected { send(.disconnect) }
        close()
    }

    public func close() {
        keepAliveTimer.cancel(); answerTimer.cancel()
        if let connecting { loop.unwatch(connecting); connecting.close() }
        connecting = nil
        stream?.close()
        stream = nil
        reader = MQTTPacketReader()
        state = .closed
    }

    private func fail(_ why: String) {
        close()
        // Reported on the next turn: never inside the caller's own call (open, send).
        loop.post { [weak self] in self?.onClose(why) }
    }

    private func tcpConnected() {
        guard let fd = connecting, let connect else { return }
        var err: Int32 = 0
        var len = socklen_t(MemoryLayout<Int32>.size)
        getsockopt(fd.rawValue, SOL_SOCKET, SO_ERROR, &err, &len)
        guard err == 0 else { return fail("cannot connect: \(Errno(err))") }
        connecting = nil
        let s = StreamSocket(loop: loop, fd: fd, peer: "the broker")
        s.onBytes = { [weak self] in self?.received($0) }
        s.onFailure = { [weak self] in self?.fail($0) }
        stream = s
        s.watch()
        state = .waitingForConnAck
        send(.connect(connect))
    }

    private func received(_ bytes: [UInt8]) {
        do throws(MQTTWireError) {
            for p in try reader.feed(bytes) {
                received(p)
                if state == .closed { return }
            }
        } catch {
            fail("the broker sent bytes that are not MQTT (\(error))")
        }
    }

    private func received(_ p: MQTTPacket) {
        switch p {
        case .connAck(let ack):
            guard state == .waitingForConnAck else { return fail("a second CONNACK") }
            guard ack.returnCode == .accepted else {
                let hint = [.badUserNameOrPassword, .notAuthorized].contains(ack.returnCode) ? " (check [mqtt] username and password_file)" : ""
                return fail("the broker refused the connection: \(ack.returnCode)\(hint)")
            }
            state = .connected
            answerTimer.cancel()
            scheduleKeepAlive()
            onConnected()
        case .publish(let pub):
            guard state == .connected else { return }
            // QoS 1 from the broker (a subscription granted more than asked): acknowledged.
            if pub.qos == .atLeastOnce, let id = pub.packetID { send(.pubAck(packetID: id)) }
            onPublish(pub)
        case .pingResp:
            answerTimer.cancel()
        case .subAck, .unsubAck, .pubAck, .pubComp:
            break
        case .pubRec(let id):
            send(.pubRel(packetID: id))
        case .pubRel(let id):
            send(.pubComp(packetID: id))
        case .connect, .subscribe, .unsubscribe, .pingReq, .disconnect:
            fail("the broker sent a \(p.type) packet, which only clients send")
        }
    }

    /// PINGREQ when nothing was sent for the keep-alive; PINGRESP expected within half of it.
    private func scheduleKeepAlive() {
        guard let keep = connect?.keepAlive, keep > 0 else { return }
        let periodMs = Int64(keep) * 1000
        keepAliveTimer.schedule(afterMs: max(1000, lastSentMs + periodMs - loop.now)) { [weak self] in
            guard let self, state == .connected else { return }
            if loop.now - lastSentMs >= periodMs {
                send(.pingReq)
                answerTimer.schedule(afterMs: periodMs / 2) { [weak self] in self?.fail("no PINGRESP within \(keep / 2) s") }
            }
            scheduleKeepAlive()
        }
    }
}
