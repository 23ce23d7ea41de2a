import BeaconKit
import Glibc
import XCTest
@testable import BeaconLinux

/// bluetoothd's side, scripted: the test says when it serves.
final class FakeBluetoothd: BluetoothdGATT {
    weak var delegate: BluetoothdGATTDelegate?
    var isServing = false
    var served: [GATTIdentity] = []
    var stops = 0
    func serve(adapterIndex: UInt16, identity: GATTIdentity) { served.append(identity) }
    func stop() { stops += 1; isServing = false }
    func say(serving: Bool) { isServing = serving; delegate?.bluetoothdGATT(serving: serving) }
}

/// What a DBusConnection told, in order.
final class DBusEvents: DBusConnectionDelegate {
    var said: [String] = []
    var onOpened: () -> Void = {}
    func dbusConnection(_ event: DBusConnectionEvent) {
        switch event {
        case .opened: said.append("opened"); onOpened()
        case .received(let m): said.append("received \(m.member ?? "?")")
        case .droppedOversized(let n): said.append("dropped \(n)")
        case .closed(let why): said.append("closed: \(why)")
        }
    }
}

/// The GATT identity's events as delegates: which server serves reaches the status through
/// AdapterSessions at once, and a DBusConnection reports to its delegate in the order it learns.
final class GATTEventsTests: ScriptedTestCase {
    let identity = GATTIdentity(identifier: "2F234454-CF6D-4A0F-ADF2-F4911BA9FFA6")

    func testTheServerSwitchReachesTheStatusThroughTheSessions() {
        var config = TestBeacons.config()
        config.gattIdentity = identity
        let c = controller()
        let sessions = AdapterSessions(config: config, loop: loop, log: log) { _ in c }
        let out = RecordingOutput()
        sessions.outputs = [out]
        keep.append(sessions)
        let bluetoothd = FakeBluetoothd()
        // No adapter address: the own server is chosen but does not open a socket.
        let gatt = GATTIdentityService(loop: loop, log: log, bluetoothd: bluetoothd) { _ in nil }
        XCTAssertTrue(bluetoothd.delegate === gatt)
        sessions.gatt = gatt
        XCTAssertTrue(gatt.delegate === sessions)

        sessions.start(bytes: nil)
        XCTAssertEqual(gatt.server, .own)
        XCTAssertEqual(bluetoothd.served, [identity])
        XCTAssertEqual(out.shown.last?.gattServer, GATTIdentityService.Server.own.rawValue)
        bluetoothd.say(serving: true)
        XCTAssertEqual(out.shown.last?.gattServer, GATTIdentityService.Server.bluetoothd.rawValue, "in the same turn")
        bluetoothd.say(serving: false)
        XCTAssertEqual(out.shown.last?.gattServer, GATTIdentityService.Server.own.rawValue)
        gatt.stop()
        XCTAssertNil(gatt.server)
        XCTAssertEqual(bluetoothd.stops, 1)
        XCTAssertEqual(out.shown.last?.gattServer, "nobody (see log)")
    }

    /// A listening AF_UNIX socket in the abstract namespace, as the bus; the connection to it.
    func bus(_ name: String) -> (listener: Int32, path: String) {
        let path = "@altbeacond-test-\(name)-\(getpid())"
        let l = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        let bytes = [0] + Array(path.utf8.dropFirst())
        withUnsafeMutableBytes(of: &addr.sun_path) { dst in for (i, b) in bytes.enumerated() { dst[i] = b } }
        let len = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count)
        let r = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(l, $0, len) } }
        XCTAssertEqual(r, 0)
        XCTAssertEqual(listen(l, 1), 0)
        return (l, path)
    }

    func write(_ fd: Int32, _ bytes: [UInt8]) {
        XCTAssertEqual(bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }, bytes.count)
    }

    /// The greeting, then OK and a message in one write: opened, then the message, then closed.
    func testTheConnectionTellsOpenedReceivedAndClosedInOrder() throws {
        let (l, path) = bus("order")
        defer { close(l) }
        let connection = DBusConnection(loop: loop)
        let events = DBusEvents()
        connection.delegate = events
        try connection.open(path: path)
        let peer = accept(l, nil, nil)
        XCTAssertGreaterThanOrEqual(peer, 0)
        var buf = [UInt8](repeating: 0, count: 256)
        XCTAssertEqual(read(peer, &buf, buf.count), DBusAuthClient.greeting(uid: getuid()).count)
        let signal = DBusMessage(kind: .signal, serial: 1, path: "/org/bluez", interface: "org.bluez.Test", member: "Hello")
        write(peer, Array("OK 0123456789abcdef\r\n".utf8) + signal.encoded())
        XCTAssertTrue(loop.run(atMostMs: 1000) { events.said.count == 2 })
        XCTAssertEqual(events.said, ["opened", "received Hello"])
        XCTAssertEqual(connection.state, .open)
        // BEGIN read first: closing with unread bytes would reset the connection instead.
        XCTAssertEqual(read(peer, &buf, buf.count), 7)
        close(peer)
        XCTAssertTrue(loop.run(atMostMs: 1000) { events.said.count == 3 })
        XCTAssertEqual(events.said.last, "closed: the bus closed the connection")
        XCTAssertEqual(connection.state, .closed)
    }

    /// A 1.1 MB unicast signal, as any local user may send (issue 30): dropped unread, said once,
    /// and the connection goes on to the next message.
    func testAnOversizedMessageIsDroppedAndTheConnectionStays() throws {
        let (l, path) = bus("big")
        defer { close(l) }
        let connection = DBusConnection(loop: loop)
        let events = DBusEvents()
        connection.delegate = events
        try connection.open(path: path)
        let peer = accept(l, nil, nil)
        defer { close(peer) }
        var buf = [UInt8](repeating: 0, count: 256)
        XCTAssertEqual(read(peer, &buf, buf.count), DBusAuthClient.greeting(uid: getuid()).count)
        write(peer, Array("OK 0123456789abcdef\r\n".utf8))
        XCTAssertTrue(loop.run(atMostMs: 1000) { events.said == ["opened"] })
        var big = DBusMessage(kind: .signal, serial: 2, path: "/x", interface: "a.b", member: "Big")
        big.body = [.bytes([UInt8](repeating: 7, count: 1_100_000))]
        let small = DBusMessage(kind: .signal, serial: 3, path: "/x", interface: "a.b", member: "Small")
        let bytes = big.encoded() + small.encoded()
        XCTAssertEqual(fcntl(peer, F_SETFL, fcntl(peer, F_GETFL) | O_NONBLOCK), 0)
        var sent = 0
        for _ in 0..<10_000 where sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { Glibc.write(peer, $0.baseAddress, $0.count) }
            if n > 0 { sent += n }
            _ = read(peer, &buf, buf.count)   // BEGIN
            loop.run(forMs: 1)
        }
        XCTAssertEqual(sent, bytes.count)
        XCTAssertTrue(loop.run(atMostMs: 2000) { events.said.count == 3 })
        XCTAssertEqual(events.said, ["opened", "dropped \(big.encoded().count)", "received Small"])
        XCTAssertEqual(connection.state, .open)
        connection.close()
    }

    /// The delegate hears `.opened` synchronously: closing there drops the message read with it,
    /// and its own close is not reported back.
    func testClosingOnOpenedHearsNothingMore() throws {
        let (l, path) = bus("close")
        defer { close(l) }
        let connection = DBusConnection(loop: loop)
        let events = DBusEvents()
        events.onOpened = { connection.close() }
        connection.delegate = events
        try connection.open(path: path)
        let peer = accept(l, nil, nil)
        defer { close(peer) }
        var buf = [UInt8](repeating: 0, count: 256)
        _ = read(peer, &buf, buf.count)
        let signal = DBusMessage(kind: .signal, serial: 1, path: "/org/bluez", interface: "org.bluez.Test", member: "Hello")
        write(peer, Array("OK 0123456789abcdef\r\n".utf8) + signal.encoded())
        XCTAssertTrue(loop.run(atMostMs: 1000) { !events.said.isEmpty })
        loop.run(forMs: 50)
        XCTAssertEqual(events.said, ["opened"])
        XCTAssertEqual(connection.state, .closed)
    }
}
