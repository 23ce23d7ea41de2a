import XCTest
@testable import BeaconKit

final class MQTTClientSessionTests: XCTestCase {
    typealias Action = MQTTClientSession.Action
    let cancelAll: [Action] = [.cancel(.connAck), .cancel(.keepAlive)]

    func connectPacket(keepAlive: UInt16 = 10) throws -> MQTTConnect {
        try MQTTConnect(clientID: "altbeacond-monitor-test", keepAlive: keepAlive)
    }

    func accepted() throws -> [UInt8] { MQTTPacket.connAck(try MQTTConnAck(returnCode: .accepted)).encoded() }

    /// A session that started at 0, had TCP up at 100 and CONNACK at 200.
    func connectedSession(keepAlive: UInt16 = 10) throws -> MQTTClientSession {
        let s = MQTTClientSession(connect: try connectPacket(keepAlive: keepAlive))
        _ = s.start()
        _ = s.transportOpened(now: 100)
        _ = s.received(try accepted(), now: 200)
        XCTAssertEqual(s.state, .connected)
        return s
    }

    func testConnectThenConnAck() throws {
        let c = try connectPacket()
        let s = MQTTClientSession(connect: c)
        XCTAssertEqual(s.state, .closed)
        XCTAssertEqual(s.start(), [.schedule(.connAck, afterMs: 10_000)])
        XCTAssertEqual(s.state, .connecting)
        XCTAssertEqual(s.send(.pingReq, now: 50), [], "nothing goes before TCP is up")
        XCTAssertEqual(s.transportOpened(now: 100), [.send(.connect(c))])
        XCTAssertEqual(s.state, .waitingForConnAck)
        // CONNACK in two reads; the keep-alive counts from CONNECT (sent at 100).
        let ack = try accepted()
        XCTAssertEqual(s.received(Array(ack.prefix(1)), now: 150), [])
        XCTAssertEqual(s.received(Array(ack.dropFirst()), now: 200),
                       [.cancel(.connAck), .schedule(.keepAlive, afterMs: 9_900), .connected])
        XCTAssertEqual(s.state, .connected)
    }

    func testNoConnAckInTime() throws {
        let s = MQTTClientSession(connect: try connectPacket())
        _ = s.start()
        _ = s.transportOpened(now: 100)
        XCTAssertEqual(s.timerFired(.connAck, now: 10_000), cancelAll + [.closed("no answer from the broker within 10 s")])
        XCTAssertEqual(s.state, .closed)
        XCTAssertEqual(s.timerFired(.connAck, now: 10_001), [], "reported once")
    }

    func testRefusedWithAHintForCredentials() throws {
        let s = MQTTClientSession(connect: try connectPacket())
        _ = s.start()
        _ = s.transportOpened(now: 0)
        let refused = MQTTPacket.connAck(try MQTTConnAck(returnCode: .notAuthorized)).encoded()
        let actions = s.received(refused, now: 10)
        guard case .closed(let why)? = actions.last else { return XCTFail("not closed: \(actions)") }
        XCTAssertTrue(why.hasPrefix("the broker refused the connection: "), why)
        XCTAssertTrue(why.hasSuffix(" (check [mqtt] username and password_file)"), why)
    }

    /// Issue 30: a broker that answered CONNECT with PINGRESP kept the monitor waiting. The first
    /// packet must be CONNACK (3.2): anything else ends the attempt at once, and the owner backs off.
    func testAnythingButConnAckFirstIsAProtocolError() throws {
        let s = MQTTClientSession(connect: try connectPacket())
        _ = s.start()
        _ = s.transportOpened(now: 100)
        XCTAssertEqual(s.received(MQTTPacket.pingResp.encoded(), now: 150),
                       cancelAll + [.closed("the broker answered CONNECT with PINGRESP, not CONNACK")])
        XCTAssertEqual(s.state, .closed)
        XCTAssertEqual(s.timerFired(.connAck, now: 10_000), [], "reported once")
        let t = MQTTClientSession(connect: try connectPacket())
        _ = t.start()
        _ = t.transportOpened(now: 100)
        let pub = try MQTTPublish(topic: "x", payload: [1])
        XCTAssertEqual(t.received(MQTTPacket.publish(pub).encoded() + (try accepted()), now: 150).last,
                       .closed("the broker answered CONNECT with PUBLISH, not CONNACK"), "not acted on, not skipped")
    }

    /// The CONNACK deadline is its own timer: nothing the session does before CONNACK cancels it.
    func testTheConnAckDeadlineStandsUntilConnAck() throws {
        let s = MQTTClientSession(connect: try connectPacket())
        XCTAssertEqual(s.start(), [.schedule(.connAck, afterMs: 10_000)])
        XCTAssertEqual(s.transportOpened(now: 100), [.send(.connect(try connectPacket()))])
        let p = try MQTTPublish(topic: "a/b", payload: [1], retain: true)
        XCTAssertEqual(s.send(.publish(p), now: 200), [.send(.publish(p))])
        XCTAssertEqual(s.timerFired(.keepAlive, now: 5_000), [], "no keep-alive before CONNACK")
        XCTAssertEqual(s.timerFired(.connAck, now: 10_000), cancelAll + [.closed("no answer from the broker within 10 s")])
    }

    /// Issue 30: our refreshes count as sending, so a stalled broker never got a PINGREQ. The
    /// keep-alive is judged by what is received: a PINGREQ a keep-alive after the last packet from
    /// the broker, however much we sent meanwhile.
    func testPingWhenNothingWasReceivedForTheKeepAliveEvenWhileSending() throws {
        let s = try connectedSession(keepAlive: 10)
        let p = try MQTTPublish(topic: "a/b", payload: [1], retain: true)
        for t in stride(from: Int64(3_000), through: 9_000, by: 3_000) { XCTAssertEqual(s.send(.publish(p), now: t), [.send(.publish(p))]) }
        // CONNACK came at 200: the check at 10_200 pings, and the broker has until 15_200.
        XCTAssertEqual(s.timerFired(.keepAlive, now: 10_200), [.send(.pingReq), .schedule(.keepAlive, afterMs: 5_000)])
        XCTAssertEqual(s.received(MQTTPacket.pingResp.encoded(), now: 10_250), [])
        // Answered: the next check is a keep-alive after the PINGREQ (sent) or the PINGRESP (received).
        XCTAssertEqual(s.timerFired(.keepAlive, now: 15_200), [.schedule(.keepAlive, afterMs: 5_000)])
        XCTAssertEqual(s.state, .connected)
    }

    /// A stalled broker (SIGSTOP): nothing received, the PINGREQ unanswered, noticed 1.5 × the
    /// keep-alive after its last packet while we go on publishing; the owner reconnects.
    func testAStalledBrokerIsNoticedWithinOneAndAHalfKeepAlives() throws {
        let s = try connectedSession(keepAlive: 10)
        let p = try MQTTPublish(topic: "a/b", payload: [1], retain: true)
        _ = s.send(.publish(p), now: 9_000)
        XCTAssertEqual(s.timerFired(.keepAlive, now: 10_200), [.send(.pingReq), .schedule(.keepAlive, afterMs: 5_000)])
        _ = s.send(.publish(p), now: 12_000)
        XCTAssertEqual(s.timerFired(.keepAlive, now: 15_200),
                       cancelAll + [.closed("the broker stalled: nothing from it for 15 s (1.5 × keepalive_s), not even a PINGRESP")])
        XCTAssertEqual(s.state, .closed)
        XCTAssertEqual(s.timerFired(.keepAlive, now: 16_000), [])
    }

    /// Anything from the broker shows it alive, not only the PINGRESP; one PINGREQ per silence.
    func testAnyPacketReceivedCountsAndOnePingPerSilence() throws {
        let s = try connectedSession(keepAlive: 10)
        _ = s.send(.publish(try MQTTPublish(topic: "a/b", payload: [1])), now: 8_000)
        XCTAssertEqual(s.timerFired(.keepAlive, now: 10_200), [.send(.pingReq), .schedule(.keepAlive, afterMs: 5_000)])
        // No PINGRESP yet, but a message: the broker is alive. The next PINGREQ goes a keep-alive
        // after the last one (10_200 + 10_000); the broker then has until 14_000 + 15_000.
        let q = try MQTTPublish(topic: "homeassistant/status", payload: Array("online".utf8))
        XCTAssertEqual(s.received(MQTTPacket.publish(q).encoded(), now: 14_000), [.received(q)])
        XCTAssertEqual(s.timerFired(.keepAlive, now: 15_200), [.schedule(.keepAlive, afterMs: 5_000)])
        XCTAssertEqual(s.timerFired(.keepAlive, now: 20_200), [.send(.pingReq), .schedule(.keepAlive, afterMs: 8_800)])
        XCTAssertEqual(s.timerFired(.keepAlive, now: 29_000).last,
                       .closed("the broker stalled: nothing from it for 15 s (1.5 × keepalive_s), not even a PINGRESP"))
    }

    /// MQTT's own rule stays: a PINGREQ when nothing was sent for the keep-alive, even while the
    /// broker talks.
    func testPingWhenNothingWasSentForTheKeepAlive() throws {
        let s = try connectedSession(keepAlive: 10)
        let q = try MQTTPublish(topic: "homeassistant/status", payload: Array("online".utf8))
        _ = s.received(MQTTPacket.publish(q).encoded(), now: 9_000)
        // CONNECT went at 100.
        XCTAssertEqual(s.timerFired(.keepAlive, now: 10_100), [.send(.pingReq), .schedule(.keepAlive, afterMs: 10_000)])
        XCTAssertEqual(s.received(MQTTPacket.pingResp.encoded(), now: 10_150), [])
        XCTAssertEqual(s.timerFired(.keepAlive, now: 19_000), [.schedule(.keepAlive, afterMs: 1_100)])
    }

    func testAnOddKeepAliveSaysItsHalfSecond() throws {
        let s = try connectedSession(keepAlive: 5)
        XCTAssertEqual(s.timerFired(.keepAlive, now: 5_100), [.send(.pingReq), .schedule(.keepAlive, afterMs: 2_600)])
        XCTAssertEqual(s.timerFired(.keepAlive, now: 7_700).last,
                       .closed("the broker stalled: nothing from it for 7.5 s (1.5 × keepalive_s), not even a PINGRESP"))
    }

    func testKeepAliveZeroNeverPings() throws {
        let s = MQTTClientSession(connect: try connectPacket(keepAlive: 0))
        _ = s.start()
        _ = s.transportOpened(now: 0)
        XCTAssertEqual(s.received(try accepted(), now: 10), [.cancel(.connAck), .connected])
    }

    func testPublishesFromTheBrokerAndTheAcknowledgementsOwed() throws {
        let s = try connectedSession()
        let q0 = try MQTTPublish(topic: "homeassistant/status", payload: Array("online".utf8))
        let q1 = try MQTTPublish(topic: "x", payload: [2], qos: .atLeastOnce, packetID: 9)
        XCTAssertEqual(s.received(MQTTPacket.publish(q0).encoded() + MQTTPacket.publish(q1).encoded(), now: 300),
                       [.received(q0), .send(.pubAck(packetID: 9)), .received(q1)])
        XCTAssertEqual(s.received(MQTTPacket.pubRec(packetID: 3).encoded(), now: 400), [.send(.pubRel(packetID: 3))])
        XCTAssertEqual(s.received(MQTTPacket.pubRel(packetID: 4).encoded(), now: 400), [.send(.pubComp(packetID: 4))])
    }

    func testWhatOnlyClientsSendOrASecondConnAckEndsIt() throws {
        let a = try connectedSession()
        XCTAssertEqual(a.received(MQTTPacket.pingReq.encoded(), now: 300).last, .closed("the broker sent a PINGREQ packet, which only clients send"))
        let b = try connectedSession()
        XCTAssertEqual(b.received(try accepted(), now: 300).last, .closed("a second CONNACK"))
    }

    func testGarbageEndsItAndNothingAfterTheFailureIsActedOn() throws {
        let s = try connectedSession()
        let pub = try MQTTPublish(topic: "x", payload: [1])
        let actions = s.received([0x00, 0x00] + MQTTPacket.publish(pub).encoded(), now: 300)
        XCTAssertEqual(actions.count, cancelAll.count + 1)
        guard case .closed(let why)? = actions.last else { return XCTFail("\(actions)") }
        XCTAssertTrue(why.hasPrefix("the broker sent bytes that are not MQTT"), why)
        XCTAssertEqual(s.received(MQTTPacket.publish(pub).encoded(), now: 400), [], "closed: bytes are ignored")
    }

    func testDisconnectSaysSoOnlyWhenConnectedAndReportsNoReason() throws {
        let s = try connectedSession()
        XCTAssertEqual(s.disconnect(now: 500), [.send(.disconnect)] + cancelAll)
        XCTAssertEqual(s.state, .closed)
        let t = MQTTClientSession(connect: try connectPacket())
        _ = t.start()
        XCTAssertEqual(t.disconnect(now: 0), cancelAll)
        XCTAssertEqual(t.transportFailed("the broker closed the connection"), [], "over already")
    }
}

/// The session's actions compared in the tests only (the binary does without the conformance).
extension MQTTClientSession.Action: Equatable {
    public static func == (a: Self, b: Self) -> Bool {
        switch (a, b) {
        case let (.send(x), .send(y)): x == y
        case let (.schedule(x, m), .schedule(y, n)): x == y && m == n
        case let (.cancel(x), .cancel(y)): x == y
        case (.connected, .connected): true
        case let (.received(x), .received(y)): x == y
        case let (.closed(x), .closed(y)): x == y
        default: false
        }
    }
}
