import Glibc
import XCTest
@testable import BeaconKit
@testable import BeaconLinux

/// The monitor's MQTT output against a broker played by the test on a real loopback TCP socket,
/// on a virtual clock: when it reconnects.
final class MonitorMQTTOutputTests: XCTestCase, MonitorStatusSource {
    final class Lines: @unchecked Sendable { var all: [String] = [] }
    let lines = Lines()
    var listenFD: Int32 = -1
    var port: UInt16 = 0

    var status: MonitorStatus {
        MonitorStatus(adapter: "hci0", tracker: BeaconTracker(expectations: [], silentAfterMs: 30_000, startMs: 0), scanning: false, scanProblem: nil)
    }

    override func setUp() {
        listenFD = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var a = sockaddr_in()
        a.sin_family = sa_family_t(AF_INET)
        a.sin_addr.s_addr = UInt32(0x7f00_0001).bigEndian
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ok = withUnsafeMutablePointer(to: &a) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listenFD, $0, len) == 0 && listen(listenFD, 4) == 0 && getsockname(listenFD, $0, &len) == 0 }
        }
        XCTAssertTrue(ok, "listen: \(Errno.current)")
        port = UInt16(bigEndian: a.sin_port)
    }

    override func tearDown() { close(listenFD) }

    func output(_ loop: EventLoop) -> MonitorMQTTOutput {
        let lines = lines
        return MonitorMQTTOutput(settings: MQTTSettings(host: "127.0.0.1", port: port), node: "clone",
                                 config: MonitorConfig(expectations: []), healthPath: "/nonexistent/altbeacond-test/status",
                                 loop: loop, log: Logger(journal: false, threshold: .info, sink: { lines.all.append($0) }))
    }

    /// Loop turns until `done`.
    func run(_ loop: EventLoop, until done: () -> Bool) -> Bool {
        for _ in 0..<1000 {
            if done() { return true }
            loop.runOnce(maxWaitMs: 100)
        }
        return done()
    }

    /// Virtual time goes on by `ms` (the loop's own timers firing meanwhile).
    func wait(_ loop: EventLoop, _ ms: Int64) {
        var done = false
        let t = loop.makeTimer()
        t.schedule(afterMs: ms) { done = true }
        XCTAssertTrue(run(loop) { done })
    }

    var connectionWaiting: Bool {
        var p = pollfd(fd: listenFD, events: Int16(POLLIN), revents: 0)
        return poll(&p, 1, 0) == 1
    }

    /// The broker's side of one session: the connection accepted, the CONNECT read (the loop
    /// turning meanwhile, as the client sends it from the loop), CONNACK, until the client has it.
    func acceptSession(_ loop: EventLoop, _ out: MonitorMQTTOutput) -> Int32 {
        let fd = accept(listenFD, nil, nil)
        var reader = MQTTPacketReader()
        var buf = [UInt8](repeating: 0, count: 4096)
        let gotConnect = run(loop) {
            let n = buf.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if n > 0 { reader.append(buf[0..<n]) }
            if case .connect? = try? reader.next() { return true }
            return false
        }
        XCTAssertTrue(gotConnect, "no CONNECT")
        let ack = MQTTPacket.connAck(try! MQTTConnAck(returnCode: .accepted)).encoded()
        XCTAssertEqual(ack.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, 0) }, ack.count)
        XCTAssertTrue(run(loop) { out.figures.connected })
        return fd
    }

    /// One session the broker ends `livesMs` after accepting it; the virtual time it ended at.
    func session(_ loop: EventLoop, _ out: MonitorMQTTOutput, livesMs: Int64) -> Int64 {
        let fd = acceptSession(loop, out)
        wait(loop, livesMs)
        close(fd)
        XCTAssertTrue(run(loop) { !out.figures.connected })
        return loop.now
    }

    /// Issue 38: another client with our client ID (a cloned card) takes each session over
    /// right after CONNACK (here: the broker closes it 300 ms after accepting it). The back-off
    /// used to start again at every CONNACK: a reconnection every second for ever. Now the
    /// waits grow to the cap, and the reconnections are not said each time; a session that
    /// lives 10 s starts the back-off again from 1 s.
    func testSessionsTakenOverRightAfterConnAckGrowTheBackOffUntilOneLasts() {
        let loop = EventLoop(clock: LoopClock(virtualStartingAt: 0))
        let out = output(loop)
        out.start(self)
        var gaps: [Int64] = []
        var endedAt: Int64?
        for _ in 0..<9 {
            XCTAssertTrue(run(loop) { connectionWaiting })
            if let e = endedAt { gaps.append(loop.now - e) }
            endedAt = session(loop, out, livesMs: 300)
        }
        XCTAssertEqual(gaps, [1000, 2000, 4000, 8000, 16_000, 32_000, 60_000, 60_000])
        XCTAssertEqual(lines.all.filter { $0.contains("MQTT: connected to") }.count, 1, lines.all.joined())
        XCTAssertEqual(lines.all.filter { $0.contains("trying again with back-off") }.count, 1, "the same cause, said once: \(lines.all.joined())")
        XCTAssertEqual(lines.all.filter { $0.contains("within 5 s of accepting it 3 times in a row") }.count, 1, lines.all.joined())

        // A session that lives 10 s: said, and the next wait is 1 s again.
        XCTAssertTrue(run(loop) { connectionWaiting })
        let ended = session(loop, out, livesMs: 10_000)
        XCTAssertEqual(lines.all.filter { $0.contains("has lasted 5 s, after 9 that the broker ended within 5 s; the back-off starts again from 1 s") }.count, 1,
                       lines.all.joined())
        XCTAssertTrue(run(loop) { connectionWaiting })
        XCTAssertEqual(loop.now - ended, 1000)
        let fd = acceptSession(loop, out)
        XCTAssertEqual(lines.all.filter { $0.contains("MQTT: connected to") }.count, 2, "said again after a good session: \(lines.all.joined())")
        close(fd)
    }

    /// Issue 38: what was announced is kept in the state directory (atomically, when it
    /// changes); a renamed node (monitor.toml edited) is a new session under the new name, at
    /// once, and the file then names the new node's topics.
    func testARenamedNodeIsANewSessionAndWhatWasAnnouncedIsKept() throws {
        let loop = EventLoop(clock: LoopClock(virtualStartingAt: 0))
        let dir = "/tmp/altbeacond-test-announced-\(getpid())"
        let file = StateFile(directory: dir, name: MonitorAnnounced.fileName)
        unlink(file.path); rmdir(dir)
        defer { unlink(file.path); rmdir(dir) }
        let lines = lines
        let settings = MQTTSettings(host: "127.0.0.1", port: port)
        let out = MonitorMQTTOutput(settings: settings, node: "old", config: MonitorConfig(expectations: []),
                                    healthPath: "/nonexistent/altbeacond-test/status", announced: file, loop: loop,
                                    log: Logger(journal: false, threshold: .info, sink: { lines.all.append($0) }))
        out.start(self)
        XCTAssertTrue(run(loop) { connectionWaiting })
        let first = acceptSession(loop, out)
        func kept() -> [String] { ((try? file.read()) ?? nil).map(MonitorAnnounced.parse) ?? [] }
        XCTAssertTrue(run(loop) { kept().contains("altbeacond/old/status") }, "\(kept())")
        out.reconfigure(settings: settings, node: "new", config: MonitorConfig(expectations: []))
        XCTAssertTrue(run(loop) { connectionWaiting }, "a new session at once, without the back-off")
        let second = acceptSession(loop, out)
        XCTAssertTrue(run(loop) { kept().contains("altbeacond/new/status") }, "\(kept())")
        XCTAssertEqual(lines.all.filter { $0.contains("[mqtt] or the node changed: connecting again") }.count, 1, lines.all.joined())
        close(first); close(second)
    }

    /// Issue 39: on an A/B card the release topic is subscribed (packet 4; the Install topic
    /// too with `[mqtt] control` on), and a release heard is on the update entity at once.
    func testTheFleetReleaseReachesTheUpdateEntity() throws {
        let loop = EventLoop(clock: LoopClock(virtualStartingAt: 0))
        let dir = "/tmp/altbeacond-test-update-\(getpid())"
        let files = [dir + "/status.json", dir + "/update/state"]
        mkdir(dir, 0o700); mkdir(dir + "/update", 0o770)
        defer { for f in files { unlink(f) }; rmdir(dir + "/update"); rmdir(dir) }
        for (path, text) in zip(files, ["{\"version\":\"1.2.0\",\"pid\":1,\"updated\":0}", "installed_version=1.2.0\nslot=A\nphase=idle\n"]) {
            let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
            XCTAssertEqual(Array(text.utf8).withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }, text.utf8.count)
            close(fd)
        }
        let lines = lines
        let out = MonitorMQTTOutput(settings: MQTTSettings(host: "127.0.0.1", port: port), node: "clone", config: MonitorConfig(expectations: []),
                                    healthPath: files[0], version: "1.2.0",
                                    updatePaths: FirmwareUpdatePaths(directory: dir + "/update", imageMarker: dir + "/none"), loop: loop,
                                    log: Logger(journal: false, threshold: .info, sink: { lines.all.append($0) }))
        out.start(self)
        XCTAssertTrue(run(loop) { connectionWaiting })
        let fd = acceptSession(loop, out)
        defer { close(fd) }
        var reader = MQTTPacketReader()
        var packets: [MQTTPacket] = []
        var buf = [UInt8](repeating: 0, count: 65536)
        // In real time too: the loop's clock is virtual, the client's small writes wait for
        // the kernel's delayed ACK (Nagle).
        func receive(until done: ([MQTTPacket]) -> Bool) -> Bool {
            run(loop) {
                var ready = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                _ = poll(&ready, 1, 20)
                let n = buf.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
                if n > 0 { reader.append(buf[0..<n]) }
                while let p = try? reader.next() { packets.append(p) }
                return done(packets)
            }
        }
        func update() -> String? {
            for case .publish(let p) in packets.reversed() where p.topic == "altbeacond/clone/update" { return String(decoding: p.payload, as: UTF8.self) }
            return nil
        }
        XCTAssertTrue(receive { $0.contains { if case .subscribe(let s) = $0 { s.packetID == 4 } else { false } } })
        for case .subscribe(let s) in packets where s.packetID == 4 {
            XCTAssertEqual(s.subscriptions, [MQTTSubscription("altbeacond/fleet/release", qos: .atLeastOnce),
                                             MQTTSubscription("altbeacond/fleet/release/rolled-back/+", qos: .atLeastOnce)], "control off: no Install topic")
        }
        XCTAssertTrue(receive { _ in update()?.hasPrefix("{\"installed_version\":\"1.2.0\",\"latest_version\":\"1.2.0\",") ?? false }, update() ?? "none")
        let release = MQTTPacket.publish(try MQTTPublish(topic: "altbeacond/fleet/release", payload: Array(("{\"version\":\"1.3.0\",\"url\":"
            + "\"https://host/a.raucb\",\"size\":1,\"sha256\":\"\(String(repeating: "ab", count: 32))\"}").utf8), retain: true)).encoded()
        XCTAssertEqual(release.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, 0) }, release.count)
        XCTAssertTrue(receive { _ in update()?.hasPrefix("{\"installed_version\":\"1.2.0\",\"latest_version\":\"1.3.0\",") ?? false },
                      update() ?? "none")
        XCTAssertTrue(lines.all.contains("altbeacond: info: update: an A/B card (slot A, 1.2.0); releases from altbeacond/fleet/release; "
                                         + "no Install: [mqtt] control is off\n"), lines.all.joined())
    }
}
