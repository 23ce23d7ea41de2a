import XCTest
@testable import BeaconKit

final class MQTTClientSessionTests: XCTestCase {
    typealias Action = MQTTClientSession.Action
    let cancelAll: [Action] = [.cancel(.connAck), .cancel(.keepAlive), .cancel(.pingResponse)]

    func connectPacket(keepAlive: UInt16 = 10) throws -> MQTTConnect {
        try MQTTConnect(clientID: "altbeacond-monitor-test", keepAlive: keepAlive)
    }

    func accepted() throws -> [UInt8] { MQTTPacket.connAck(try MQTTConnAck(returnCode: .accepted)).encoded() }

    /// A session that started at 0, had TCP up at 100 and CONNACK at 200.
    func connectedSession(keepAlive: UInt16 = 10) throws -> MQTTClientSession {
        let s = MQTTClientSession(connect: try connectPacket(keepAlive: keepAlive))
        _ = s.start()
        _ = s.transportOpened(nowMs: 100)
        _ = s.received(try accepted(), nowMs: 200)
        XCTAssertEqual(s.state, .connected)
        return s
    }

    func testConnectThenConnAck() throws {
        let c = try connectPacket()
        let s = MQTTClientSession(connect: c)
        XCTAssertEqual(s.state, .closed)
        XCTAssertEqual(s.start(), [.schedule(.connAck, afterMs: 10_000)])
        XCTAssertEqual(s.state, .connecting)
        XCTAssertEqual(s.send(.pingReq, nowMs: 50), [], "nothing goes before TCP is up")
        XCTAssertEqual(s.transportOpened(nowMs: 100), [.send(.connect(c))])
        XCTAssertEqual(s.state, .waitingForConnAck)
        // CONNACK in two reads; the keep-alive counts from CONNECT (sent at 100).
        let ack = try accepted()
        XCTAssertEqual(s.received(Array(ack.prefix(1)), nowMs: 150), [])
        XCTAssertEqual(s.received(Array(ack.dropFirst()), nowMs: 200),
                       [.cancel(.connAck), .schedule(.keepAlive, afterMs: 9_900), .connected])
        XCTAssertEqual(s.state, .connected)
    }

    func testNoConnAckInTime() throws {
        let s = MQTTClientSession(connect: try connectPacket())
        _ = s.start()
        _ = s.transportOpened(nowMs: 100)
        XCTAssertEqual(s.timerFired(.connAck, nowMs: 10_000), cancelAll + [.closed("no answer from the broker within 10 s")])
        XCTAssertEqual(s.state, .closed)
        XCTAssertEqual(s.timerFired(.connAck, nowMs: 10_001), [], "reported once")
    }

    func testRefusedWithAHintForCredentials() throws {
        let s = MQTTClientSession(connect: try connectPacket())
        _ = s.start()
        _ = s.transportOpened(nowMs: 0)
        let refused = MQTTPacket.connAck(try MQTTConnAck(returnCode: .notAuthorized)).encoded()
        let actions = s.received(refused, nowMs: 10)
        guard case .closed(let why)? = actions.last else { return XCTFail("not closed: \(actions)") }
        XCTAssertTrue(why.hasPrefix("the broker refused the connection: "), why)
        XCTAssertTrue(why.hasSuffix(" (check [mqtt] username and password_file)"), why)
    }

    func testPingOnlyWhenNothingWasSentForTheKeepAlive() throws {
        let s = try connectedSession(keepAlive: 10)
        // A publish at 5000 moves the next ping: the check at 10_100 finds it too early.
        let p = try MQTTPublish(topic: "a/b", payload: [1])
        XCTAssertEqual(s.send(.publish(p), nowMs: 5_000), [.send(.publish(p))])
        XCTAssertEqual(s.timerFired(.keepAlive, nowMs: 10_100), [.schedule(.keepAlive, afterMs: 4_900)])
        XCTAssertEqual(s.timerFired(.keepAlive, nowMs: 15_000),
                       [.send(.pingReq), .schedule(.pingResponse, afterMs: 5_000), .schedule(.keepAlive, afterMs: 10_000)])
        XCTAssertEqual(s.received(MQTTPacket.pingResp.encoded(), nowMs: 15_050), [.cancel(.pingResponse)])
    }

    func testNoPingRespEndsTheSession() throws {
        let s = try connectedSession(keepAlive: 10)
        _ = s.timerFired(.keepAlive, nowMs: 10_100)
        XCTAssertEqual(s.timerFired(.pingResponse, nowMs: 15_100), cancelAll + [.closed("no PINGRESP within 5 s")])
    }

    func testKeepAliveZeroNeverPings() throws {
        let s = MQTTClientSession(connect: try connectPacket(keepAlive: 0))
        _ = s.start()
        _ = s.transportOpened(nowMs: 0)
        XCTAssertEqual(s.received(try accepted(), nowMs: 10), [.cancel(.connAck), .connected])
    }

    func testPublishesFromTheBrokerAndTheAcknowledgementsOwed() throws {
        let s = try connectedSession()
        let q0 = try MQTTPublish(topic: "homeassistant/status", payload: Array("online".utf8))
        let q1 = try MQTTPublish(topic: "x", payload: [2], qos: .atLeastOnce, packetID: 9)
        XCTAssertEqual(s.received(MQTTPacket.publish(q0).encoded() + MQTTPacket.publish(q1).encoded(), nowMs: 300),
                       [.received(q0), .send(.pubAck(packetID: 9)), .received(q1)])
        XCTAssertEqual(s.received(MQTTPacket.pubRec(packetID: 3).encoded(), nowMs: 400), [.send(.pubRel(packetID: 3))])
        XCTAssertEqual(s.received(MQTTPacket.pubRel(packetID: 4).encoded(), nowMs: 400), [.send(.pubComp(packetID: 4))])
    }

    func testWhatOnlyClientsSendOrASecondConnAckEndsIt() throws {
        let a = try connectedSession()
        XCTAssertEqual(a.received(MQTTPacket.pingReq.encoded(), nowMs: 300).last, .closed("the broker sent a PINGREQ packet, which only clients send"))
        let b = try connectedSession()
        XCTAssertEqual(b.received(try accepted(), nowMs: 300).last, .closed("a second CONNACK"))
    }

    func testGarbageEndsItAndNothingAfterTheFailureIsActedOn() throws {
        let s = try connectedSession()
        let pub = try MQTTPublish(topic: "x", payload: [1])
        let actions = s.received([0x00, 0x00] + MQTTPacket.publish(pub).encoded(), nowMs: 300)
        XCTAssertEqual(actions.count, 4)
        guard case .closed(let why)? = actions.last else { return XCTFail("\(actions)") }
        XCTAssertTrue(why.hasPrefix("the broker sent bytes that are not MQTT"), why)
        XCTAssertEqual(s.received(MQTTPacket.publish(pub).encoded(), nowMs: 400), [], "closed: bytes are ignored")
    }

    func testDisconnectSaysSoOnlyWhenConnectedAndReportsNoReason() throws {
        let s = try connectedSession()
        XCTAssertEqual(s.disconnect(nowMs: 500), [.send(.disconnect)] + cancelAll)
        XCTAssertEqual(s.state, .closed)
        let t = MQTTClientSession(connect: try connectPacket())
        _ = t.start()
        XCTAssertEqual(t.disconnect(nowMs: 0), cancelAll)
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
