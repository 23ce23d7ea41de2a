import BeaconKit
import CLinux
import Glibc

/// What an `MQTTConnection` tells its owner.
public enum MQTTConnectionEvent: Sendable {
    /// The broker accepted the session.
    case connected
    case received(MQTTPublish)
    /// The session ended or never started: why, in a few words. Told on a later loop turn than
    /// the call that caused it, once per attempt; never after the owner's own `close`/`disconnect`.
    case closed(String)
}

public protocol MQTTConnectionDelegate: AnyObject {
    func mqttConnection(_ event: MQTTConnectionEvent)
}

/// One MQTT 3.1.1 session with a broker over TCP, or TLS over it, on the event loop: the socket,
/// a non-blocking connect, the TLS handshake (stepped as the socket is ready), and the loop timers of BeaconKit's `MQTTClientSession`,
/// which decides everything else (CONNACK deadline, keep-alive, liveness, acknowledgements).
/// While the socket is backed up, packets wait in BeaconKit's bounded `MQTTOutbox`. The owner
/// reconnects (with back-off) after `.closed`.
///
/// Size: 13 stored fields, one past 12: the OS resources of one session's stages (the connecting
/// socket, the TLS handshake, the stream), its two timers and outbox, all dropped by `close`, and
/// the attempt number that silences an older one; MQTTClientSession decides.
public final class MQTTConnection {
    public typealias State = MQTTClientSession.State

    private let loop: EventLoop
    public weak var delegate: MQTTConnectionDelegate?
    /// The socket while TCP connects; then `stream` owns it.
    private var connecting: FileDescriptor?
    /// TLS for this attempt: the loaded files and the name the broker's certificate must carry.
    private var tls: (config: TLSClientConfig, serverName: String)?
    /// The socket and its session while the TLS handshake runs.
    private var handshaking: (fd: FileDescriptor, session: TLSSession)?
    /// The protocol and cipher suite of the session up now, nil for plain TCP.
    public private(set) var tlsAgreed: String?
    private var stream: StreamSocket?
    private var session: MQTTClientSession?
    private let connAckTimer: LoopTimer
    private let keepAliveTimer: LoopTimer
    /// What waits while the socket is backed up (this connection's only).
    private var outbox = MQTTOutbox()
    /// PUBLISHes the outboxes dropped, over every connection.
    public private(set) var droppedTotal = 0
    /// Packets waiting for the socket (tests).
    var outboxCount: Int { outbox.count }
    /// Bumped by every open and close: actions and reports of an older attempt are dropped.
    private var attempt = 0

    public init(loop: EventLoop) {
        self.loop = loop
        connAckTimer = loop.makeTimer(); keepAliveTimer = loop.makeTimer()
    }

    public var state: State { session?.state ?? .closed }

    /// Starts connecting to `address` (IPv4 or IPv6 literal) `port`; CONNECT goes once TCP is up,
    /// or with `tls` once the handshake is done and the broker's certificate verified. The
    /// session's CONNACK deadline covers the handshake too.
    public func open(address: String, port: UInt16, connect packet: MQTTConnect,
                     tls: (config: TLSClientConfig, serverName: String)? = nil) {
        close()
        self.tls = tls
        let s = MQTTClientSession(connect: packet)
        session = s
        let start = s.start()
        guard let (storage, length, family) = ipSocketAddress(address, port: port) else {
            return fail("'\(address)' is not an IP address")
        }
        let raw = socket(family, clinux_sock_stream_cloexec_nonblock, 0)
        guard raw >= 0 else { return fail("socket: \(Errno.current)") }
        let sock = FileDescriptor(raw)
        connecting = sock
        perform(start)
        let r = withUnsafePointer(to: storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(sock.rawValue, $0, length) }
        }
        if r != 0 && errno != EINPROGRESS { return fail("connect: \(Errno.current)") }
        loop.watchWritable(sock) { [weak self] in self?.tcpConnected() }
    }

    /// Sends `packet` (held in the outbox while the socket is backed up; dropped unless the
    /// session is being made or up).
    public func send(_ packet: MQTTPacket) {
        perform(session?.send(packet, now: loop.now) ?? [])
    }

    /// DISCONNECT when connected (so the broker does not publish the will), written, then closed.
    public func disconnect() {
        perform(session?.disconnect(now: loop.now) ?? [])
        close()
    }

    /// Closes without a word to the broker; nothing more is reported for this attempt.
    public func close() {
        attempt += 1
        connAckTimer.cancel(); keepAliveTimer.cancel()
        if let connecting { loop.unwatch(connecting); connecting.close() }
        connecting = nil
        if let (fd, _) = handshaking { loop.unwatch(fd); fd.close() }
        handshaking = nil
        tls = nil
        tlsAgreed = nil
        stream?.close()
        stream = nil
        session = nil
        outbox = MQTTOutbox()
    }

    /// The socket could not be made, or broke.
    private func fail(_ why: String) {
        perform(session?.transportFailed(why) ?? [])
    }

    private func tcpConnected() {
        guard let fd = connecting else { return }
        var err: Int32 = 0
        var len = socklen_t(MemoryLayout<Int32>.size)
        getsockopt(fd.rawValue, SOL_SOCKET, SO_ERROR, &err, &len)
        guard err == 0 else { return fail("cannot connect: \(Errno(err))") }
        connecting = nil
        loop.unwatch(fd)
        guard let tls else { return opened(fd, transport: nil) }
        switch TLSSession.start(tls.config, fd: fd, serverName: tls.serverName) {
        case .failure(let e):
            fd.close()
            fail(e.text)
        case .success(let s):
            handshaking = (fd, s)
            stepHandshake()
        }
    }

    /// One step of the TLS handshake; on again when the socket is ready for the next.
    private func stepHandshake() {
        guard let (fd, s) = handshaking else { return }
        switch s.handshake() {
        case .done:
            loop.unwatch(fd)
            handshaking = nil
            tlsAgreed = s.agreed
            opened(fd, transport: TLSTransport(s))
        case .wantRead:
            // one interest at a time: the handshake waits for the one it named
            loop.unwatch(fd)
            loop.watch(fd, lost: { [weak self] e in self?.fail("the connection broke during the TLS handshake (\(e))") }) { [weak self] in
                self?.stepHandshake()
            }
        case .wantWrite:
            loop.unwatch(fd)
            loop.watchWritable(fd) { [weak self] in self?.stepHandshake() }
        case .closed:
            // mosquitto's require_certificate does just that to a TLS 1.2 client without one
            fail("the broker closed the connection during the TLS handshake\(tls?.config.refusalHint ?? "")")
        case .failed(let why):
            fail(why)
        }
    }

    private func opened(_ fd: FileDescriptor, transport: StreamTransport?) {
        let s = StreamSocket(loop: loop, fd: fd, transport: transport, peer: "the broker", delegate: self)
        stream = s
        s.watch()
        perform(session?.transportOpened(now: loop.now) ?? [])
    }

    /// To the socket, unless it is backed up (or packets wait already: they go first).
    private func write(_ p: MQTTPacket) {
        guard let stream else { return }
        guard stream.isBacklogged || !outbox.isEmpty else { return stream.send(p.encoded()) }
        let before = outbox.dropped
        outbox.append(p)
        droppedTotal += outbox.dropped - before
    }

    /// The socket took its backlog: what waits goes, until it is backed up again.
    private func drain() {
        while let stream, stream.isOpen, !stream.isBacklogged, let p = outbox.next() { stream.send(p.encoded()) }
    }

    private func received(_ bytes: [UInt8]) {
        perform(session?.received(bytes, now: loop.now) ?? [])
    }

    /// Does what the session said, in order; stops when the attempt ends meanwhile (the
    /// delegate closed it, or a new one began).
    private func perform(_ actions: [MQTTClientSession.Action]) {
        let current = attempt
        for a in actions {
            guard attempt == current else { return }
            switch a {
            case .send(let p):
                write(p)
            case .schedule(let t, let ms):
                timer(t).schedule(afterMs: ms) { [weak self] in self?.timerFired(t) }
            case .cancel(let t):
                timer(t).cancel()
            case .connected:
                delegate?.mqttConnection(.connected)
            case .received(let p):
                delegate?.mqttConnection(.received(p))
            case .closed(let why):
                close()
                // Reported on the next turn: never inside the caller's own call (open, send).
                let reported = attempt
                loop.post { [weak self] in
                    guard let self, attempt == reported else { return }
                    delegate?.mqttConnection(.closed(why))
                }
            }
        }
    }

    private func timer(_ t: MQTTClientSession.Timer) -> LoopTimer {
        switch t {
        case .connAck: connAckTimer
        case .keepAlive: keepAliveTimer
        }
    }

    private func timerFired(_ t: MQTTClientSession.Timer) {
        perform(session?.timerFired(t, now: loop.now) ?? [])
    }
}

extension MQTTConnection: StreamSocketDelegate {
    func stream(_ stream: StreamSocket, received bytes: [UInt8]) { received(bytes) }
    func stream(_ stream: StreamSocket, failed why: String) { fail(why) }
    func streamDrained(_ stream: StreamSocket) { drain() }
}
