import BeaconKit
import Glibc
import XCTest
@testable import BeaconLinux

/// The monitor's link to the broker against a broker played by the test on loopback, on a
/// virtual clock: what each attempt connects with, when it tries again, what it says and what
/// it tells its owner.
final class MQTTBrokerLinkTests: XCTestCase, MQTTConnectionDelegate {
    let lines = LogLines()
    var broker: LoopbackBroker!
    var link: MQTTBrokerLink?
    /// What the owner was told, with how long the session had lived at `.closed`.
    var events: [String] = []
    var dir = ""

    override func setUp() {
        broker = LoopbackBroker()
        var template = Array("/tmp/altbeacond-link-XXXXXX".utf8CString)
        dir = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)) }
    }

    override func tearDown() {
        link?.stop()
        unlink(dir + "/password"); rmdir(dir)
        broker = nil
    }

    func mqttConnection(_ event: MQTTConnectionEvent) {
        switch event {
        case .connected: events.append("connected")
        case .received(let p): events.append("received \(p.topic)")
        case .closed: events.append("closed, lived \(link?.connectedForMs.map(String.init) ?? "-")")
        }
    }

    func start(_ loop: EventLoop, passwordFile: String? = nil) -> MQTTBrokerLink {
        let lines = lines
        let settings = MQTTSettings(host: "127.0.0.1", port: broker.port, username: passwordFile.map { _ in "pi" }, passwordFile: passwordFile)
        let l = MQTTBrokerLink(settings: settings, clientID: "altbeacond-test", willTopic: "altbeacond/n/status", loop: loop,
                               log: Logger(journal: false, threshold: .info, sink: { lines.lines.append($0) }))
        l.delegate = self
        link = l
        l.start()
        return l
    }

    /// The next connection, its CONNECT answered with CONNACK, until the link has it.
    func accepted(_ loop: EventLoop, _ l: MQTTBrokerLink) throws -> BrokerEnd {
        let end = try XCTUnwrap(broker.accept(loop))
        end.send(.connAck(try MQTTConnAck(returnCode: .accepted)))
        XCTAssertTrue(loop.run(atMostMs: 1000) { l.isConnected })
        return end
    }

    /// The broker ends the connection after `ms`; the virtual time the link saw it end.
    func end(_ loop: EventLoop, _ l: MQTTBrokerLink, _ end: BrokerEnd, afterMs ms: Int64) -> Int64 {
        loop.run(forMs: ms)
        end.close()
        XCTAssertTrue(loop.run(atMostMs: 1000) { !l.isConnected && events.last?.hasPrefix("closed") == true })
        return loop.now
    }

    func testTheConnectCarriesTheClientIDAndTheWillAndTheOwnerIsToldEachEvent() throws {
        let loop = EventLoop.virtual()
        let l = start(loop)
        let end = try XCTUnwrap(broker.accept(loop))
        let connect = try XCTUnwrap(end.connect)
        XCTAssertEqual(connect.clientID, "altbeacond-test")
        XCTAssertEqual(connect.will, try MQTTWill(topic: "altbeacond/n/status", message: Array("offline".utf8), retain: true))
        XCTAssertEqual(connect.keepAlive, MQTTSettings.defaultKeepAliveS)
        XCTAssertNil(connect.password)
        XCTAssertEqual(events, [], "not connected before CONNACK")
        end.send(.connAck(try MQTTConnAck(returnCode: .accepted)))
        XCTAssertTrue(loop.run(atMostMs: 1000) { l.isConnected })
        XCTAssertEqual(lines.count("MQTT: connected to 127.0.0.1:\(broker.port)\n"), 1, lines.lines.joined())
        end.send(.publish(try MQTTPublish(topic: "a/b", payload: [1])))
        XCTAssertTrue(loop.run(atMostMs: 1000) { events.count == 2 })
        let ended = self.end(loop, l, end, afterMs: 7000)
        XCTAssertEqual(events, ["connected", "received a/b", "closed, lived 7000"])
        XCTAssertNil(l.connectedForMs, "between sessions")
        XCTAssertTrue(loop.run(atMostMs: 10_000) { broker.connectionWaiting })
        XCTAssertEqual(loop.now - ended, 1000, "a session that had settled: the shortest wait")
    }

    /// The password file is read at each attempt: while it is missing, the cause is said once,
    /// the wait grows and the owner is told nothing (no connection was made); once it is there,
    /// the next attempt sends it.
    func testAnAttemptThatFailsBeforeTheConnectionIsSaidOnceAndTriedAgain() throws {
        let loop = EventLoop.virtual()
        let password = dir + "/password"
        _ = start(loop, passwordFile: password)
        loop.run(forMs: 3500)   // attempts at 0, 1000 and 3000
        XCTAssertFalse(broker.connectionWaiting)
        XCTAssertEqual(lines.count("MQTT: 127.0.0.1:\(broker.port): cannot read the MQTT password file \(password)"), 1, lines.lines.joined())
        XCTAssertEqual(lines.count("trying again with back-off"), 1, lines.lines.joined())
        let fd = open(password, O_WRONLY | O_CREAT | O_EXCL, 0o600)
        XCTAssertEqual(write(fd, "secret\n", 7), 7)
        close(fd)
        XCTAssertTrue(loop.run(atMostMs: 10_000) { broker.connectionWaiting })
        XCTAssertEqual(loop.now, 7000, "the attempt after a wait of 4 s")
        let end = try XCTUnwrap(broker.accept(loop))
        XCTAssertEqual(end.connect?.username, "pi")
        XCTAssertEqual(end.connect?.password, Array("secret".utf8))
        XCTAssertEqual(events, [])
    }

    /// Sessions the broker ends within 5 s of accepting them (another client with our ID) make
    /// the wait grow and are not said one by one; a session that lasts 5 s is said and starts
    /// the back-off again.
    func testSessionsEndedAtOnceGrowTheWaitUntilOneLasts() throws {
        let loop = EventLoop.virtual()
        let l = start(loop)
        var gaps: [Int64] = []
        var endedAt: Int64?
        for _ in 0..<4 {
            XCTAssertTrue(loop.run(atMostMs: 100_000) { broker.connectionWaiting })
            if let e = endedAt { gaps.append(loop.now - e) }
            endedAt = end(loop, l, try accepted(loop, l), afterMs: 300)
        }
        XCTAssertEqual(gaps, [1000, 2000, 4000])
        XCTAssertEqual(events.filter { $0 == "closed, lived 300" }.count, 4, "\(events)")
        XCTAssertEqual(lines.count("MQTT: connected to"), 1, lines.lines.joined())
        let lasting = try accepted(loop, l)
        let ended = end(loop, l, lasting, afterMs: 6000)
        XCTAssertEqual(lines.count("has lasted 5 s, after 4 that the broker ended within 5 s; the back-off starts again from 1 s"), 1,
                       lines.lines.joined())
        XCTAssertTrue(loop.run(atMostMs: 10_000) { broker.connectionWaiting })
        XCTAssertEqual(loop.now - ended, 1000)
    }

    /// `[mqtt]` or the node edited while the link waits out a long back-off: the new attempt
    /// goes at once, with the new will; the old connection's end is ours, not told.
    func testReconnectGoesAtOnceWithTheNewWill() throws {
        let loop = EventLoop.virtual()
        let l = start(loop)
        for n in 1...3 {
            // refused before CONNACK: the wait grows to 4 s
            let end = try XCTUnwrap(broker.accept(loop))
            end.close()
            XCTAssertTrue(loop.run(atMostMs: 1000) { events.count == n })
        }
        XCTAssertEqual(events, ["closed, lived -", "closed, lived -", "closed, lived -"], "no session: nothing lived")
        loop.run(forMs: 500)
        let editedAt = loop.now
        l.reconnect(settings: l.settings, willTopic: "altbeacond/m/status")
        XCTAssertTrue(loop.run(atMostMs: 10_000) { broker.connectionWaiting })
        XCTAssertEqual(loop.now, editedAt, "without the back-off")
        let end = try accepted(loop, l)
        XCTAssertEqual(end.connect?.will?.topic, "altbeacond/m/status")

        l.reconnect(settings: l.settings, willTopic: "altbeacond/o/status")
        XCTAssertTrue(end.receive(loop) { $0.last == .disconnect }, "the broker fires no will: \(end.packets)")
        XCTAssertEqual(try XCTUnwrap(broker.accept(loop)).connect?.will?.topic, "altbeacond/o/status")
        XCTAssertEqual(events.suffix(1), ["connected"], "the session we ended is not told")
    }

    /// Stopped: DISCONNECT, and nothing more is tried, said or told, an edit neither.
    func testAfterStopNothingIsTriedOrTold() throws {
        let loop = EventLoop.virtual()
        let l = start(loop)
        let end = try accepted(loop, l)
        l.stop()
        XCTAssertTrue(end.receive(loop) { $0.last == .disconnect }, "\(end.packets)")
        l.reconnect(settings: l.settings, willTopic: "altbeacond/m/status")
        loop.run(forMs: 120_000)
        XCTAssertFalse(broker.connectionWaiting)
        XCTAssertEqual(events, ["connected"])
        XCTAssertEqual(lines.count("trying again"), 0, lines.lines.joined())
    }

    /// While the broker reads nothing, the messages left out are said once per session.
    func testMessagesLeftOutAreSaidOncePerSession() throws {
        let loop = EventLoop.virtual()
        let l = start(loop)
        let body = [UInt8](repeating: 0x41, count: 60_000)
        for session in 1...2 {
            let end = try accepted(loop, l)
            // 24 MB, far more than the kernel's buffers on both ends take.
            for i in 0..<200 {
                for t in ["s/a", "s/b"] { l.send(.publish(try MQTTPublish(topic: t, payload: body + [UInt8(i)], retain: true))) }
            }
            XCTAssertGreaterThan(l.droppedTotal, 0)
            XCTAssertEqual(lines.count("takes no more bytes; older messages are left out"), session, lines.lines.joined())
            end.close()
            XCTAssertTrue(loop.run(atMostMs: 1000) { !l.isConnected })
        }
    }
}
