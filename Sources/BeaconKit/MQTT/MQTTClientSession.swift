/// The rules of one MQTT 3.1.1 client session, without the socket: CONNECT once the transport is
/// up; CONNACK, and nothing else first (3.2), within `connAckTimeoutMs` of starting, whatever else
/// arrives; PINGREQ when nothing was sent for the keep-alive (3.1.2.10) or nothing received for
/// it; the broker taken for stalled when nothing at all, not even the PINGRESP, came for 1.5 × the
/// keep-alive (the time the broker gives us, SPEC §12); the QoS acknowledgements a client owes;
/// the first failure ending the session with a reason. Pure: events in (bytes, timers, what the
/// owner sends), actions out; the runner (BeaconLinux's `MQTTConnection`) performs them in order
/// and keeps one loop timer per `Timer`. One per connection attempt. A class, not a struct: the
/// runner keeps it in place, and the binary is spared the copies of a large value.
public final class MQTTClientSession {
    public enum State: Equatable, Sendable { case closed, connecting, waitingForConnAck, connected }

    /// The session's deadlines, one loop timer each.
    public enum Timer: Sendable {
        /// From the start of the attempt (TCP included) to CONNACK.
        case connAck
        /// The next keep-alive check: a PINGREQ due, or the broker silent past 1.5 × the keep-alive.
        case keepAlive
    }

    public enum Action: Sendable {
        case send(MQTTPacket)
        case schedule(Timer, afterMs: Int64)
        case cancel(Timer)
        /// The broker accepted the session: the owner may publish and subscribe.
        case connected
        /// An application message from the broker.
        case received(MQTTPublish)
        /// The session ended (timers cancelled before it): why, in a few words, for the log.
        case closed(String)
    }

    public static let connAckTimeoutMs: Int64 = 10_000

    public let connect: MQTTConnect
    public private(set) var state = State.closed
    private var reader = MQTTPacketReader()
    private var lastSentMs: Int64 = 0
    /// Judged by what is received, not sent: our own publishes say nothing of the broker.
    private var lastReceivedMs: Int64 = 0
    /// A PINGREQ went after the last packet received: an answer is awaited.
    private var pinged = false

    public init(connect: MQTTConnect) { self.connect = connect }

    /// The attempt starts (the transport is connecting): the CONNACK deadline runs from now.
    public func start() -> [Action] {
        state = .connecting
        return [.schedule(.connAck, afterMs: Self.connAckTimeoutMs)]
    }

    /// The transport is up: CONNECT goes.
    public func transportOpened(now nowMs: Int64) -> [Action] {
        guard state == .connecting else { return [] }
        state = .waitingForConnAck
        return send(.connect(connect), now: nowMs)
    }

    /// The transport failed or could not be made.
    public func transportFailed(_ why: String) -> [Action] { fail(why) }

    /// A packet of the owner's (PUBLISH, SUBSCRIBE): sent while the session is being made or up.
    public func send(_ packet: MQTTPacket, now nowMs: Int64) -> [Action] {
        guard state == .connected || state == .waitingForConnAck else { return [] }
        lastSentMs = nowMs
        return [.send(packet)]
    }

    /// DISCONNECT when connected (so the broker does not publish the will); the session is over
    /// without a reason reported: the owner asked for it.
    public func disconnect(now nowMs: Int64) -> [Action] {
        var out = state == .connected ? send(.disconnect, now: nowMs) : []
        out += end()
        return out
    }

    /// Bytes from the broker, as they were read.
    public func received(_ bytes: [UInt8], now nowMs: Int64) -> [Action] {
        guard state == .waitingForConnAck || state == .connected else { return [] }
        reader.append(bytes)
        var out: [Action] = []
        do throws(MQTTWireError) {
            while state != .closed, let p = try reader.next() { out += received(p, now: nowMs) }
        } catch {
            out += fail("the broker sent bytes that are not MQTT (\(error))")
        }
        return out
    }

    public func timerFired(_ timer: Timer, now nowMs: Int64) -> [Action] {
        switch timer {
        case .connAck:
            guard state == .connecting || state == .waitingForConnAck else { return [] }
            return fail("no answer from the broker within \(Self.connAckTimeoutMs / 1000) s")
        case .keepAlive:
            guard state == .connected, connect.keepAlive > 0 else { return [] }
            if pinged && nowMs - lastReceivedMs >= silenceLimitMs {
                let k = Int(connect.keepAlive)
                return fail("the broker stalled: nothing from it for \(k * 3 / 2)\(k % 2 == 1 ? ".5" : "") s (1.5 × keepalive_s), not even a PINGRESP")
            }
            var out: [Action] = []
            // MQTT asks for a packet every keep-alive; our liveness asks for one from the broker.
            // One PINGREQ per silence: the deadline then runs from the last packet received.
            if nowMs - lastSentMs >= keepAliveMs || (!pinged && nowMs - lastReceivedMs >= keepAliveMs) {
                out += send(.pingReq, now: nowMs)
                pinged = true
            }
            return out + keepAlive(now: nowMs)
        }
    }

    private func received(_ p: MQTTPacket, now nowMs: Int64) -> [Action] {
        // The server's first packet is CONNACK (3.2): a broker that answers with anything else
        // (a PINGRESP) is not talking MQTT with us, and waiting on would only hide it.
        if state == .waitingForConnAck, p.type != .connAck {
            return fail("the broker answered CONNECT with \(p.type), not CONNACK")
        }
        lastReceivedMs = nowMs
        pinged = false
        switch p {
        case .connAck(let ack):
            guard state == .waitingForConnAck else { return fail("a second CONNACK") }
            guard ack.returnCode == .accepted else {
                let hint = [.badUserNameOrPassword, .notAuthorized].contains(ack.returnCode) ? " (check [mqtt] username and password_file)" : ""
                return fail("the broker refused the connection: \(ack.returnCode)\(hint)")
            }
            state = .connected
            return [.cancel(.connAck)] + keepAlive(now: nowMs) + [.connected]
        case .publish(let pub):
            guard state == .connected else { return [] }
            // QoS 1 from the broker (a subscription granted more than asked): acknowledged.
            var out: [Action] = []
            if pub.qos == .atLeastOnce, let id = pub.packetID { out += send(.pubAck(packetID: id), now: nowMs) }
            return out + [.received(pub)]
        case .pingResp, .subAck, .unsubAck, .pubAck, .pubComp:
            return []
        case .pubRec(let id):
            return send(.pubRel(packetID: id), now: nowMs)
        case .pubRel(let id):
            return send(.pubComp(packetID: id), now: nowMs)
        case .connect, .subscribe, .unsubscribe, .pingReq, .disconnect:
            return fail("the broker sent a \(p.type) packet, which only clients send")
        }
    }

    private var keepAliveMs: Int64 { Int64(connect.keepAlive) * 1000 }
    private var silenceLimitMs: Int64 { keepAliveMs * 3 / 2 }

    /// The next keep-alive check: a keep-alive after the last packet sent, or after the last one
    /// received, or (a PINGREQ unanswered) 1.5 × the keep-alive after it; none for a keep-alive
    /// of 0. A packet received meanwhile only moves what the check finds due.
    private func keepAlive(now nowMs: Int64) -> [Action] {
        guard connect.keepAlive > 0 else { return [] }
        let next = min(lastSentMs + keepAliveMs, lastReceivedMs + (pinged ? silenceLimitMs : keepAliveMs))
        return [.schedule(.keepAlive, afterMs: max(1, next - nowMs))]
    }

    private func fail(_ why: String) -> [Action] {
        guard state != .closed else { return [] }
        return end() + [.closed(why)]
    }

    private func end() -> [Action] {
        state = .closed
        reader = MQTTPacketReader()
        pinged = false
        return [.cancel(.connAck), .cancel(.keepAlive)]
    }
}
