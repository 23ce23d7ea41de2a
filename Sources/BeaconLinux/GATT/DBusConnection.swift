import BeaconKit
import CLinux
import Glibc

/// What a `DBusConnection` tells its owner, at once (no loop turn in between): `.closed` can come
/// from inside the owner's own `send` or `open`, when writing to the bus fails.
public enum DBusConnectionEvent: Sendable {
    /// Authenticated: messages can be sent.
    case opened
    /// A whole message from the bus.
    case received(DBusMessage)
    /// A message longer than `DBusMessage.maximumLength` (this many bytes) is being dropped
    /// unread: any local user may send one; the connection goes on.
    case droppedOversized(Int)
    /// The connection ended; the reason, for the log. Never after the owner's own `close`.
    case closed(String)
}

public protocol DBusConnectionDelegate: AnyObject {
    func dbusConnection(_ event: DBusConnectionEvent)
    /// Whether a message with this header (its body not decoded) is read whole: what is not for
    /// us costs no decoding. Every message by default.
    func dbusConnection(wantsBodyOf header: DBusMessage) -> Bool
}

extension DBusConnectionDelegate {
    public func dbusConnection(wantsBodyOf header: DBusMessage) -> Bool { true }
}

/// One connection to the D-Bus system bus on the daemon's event loop: a non-blocking AF_UNIX
/// stream socket, EXTERNAL authentication, then whole messages both ways (BeaconKit's codec).
/// No libdbus: the few hundred lines of protocol we need cost less than its static library.
public final class DBusConnection {
    public enum State: Equatable { case closed, authenticating, open }

    /// The system bus socket: $DBUS_SYSTEM_BUS_ADDRESS's `unix:path=` (or `unix:abstract=`,
    /// written with a leading '@'), else the well-known path.
    public static func systemBusPath(address: String? = environment("DBUS_SYSTEM_BUS_ADDRESS")) -> String {
        for part in (address ?? "").split(separator: ";") {
            for kv in part.drop(while: { $0 != ":" }).dropFirst().split(separator: ",") {
                if kv.hasPrefix("path=") { return String(kv.dropFirst(5)) }
                if kv.hasPrefix("abstract=") { return "@" + kv.dropFirst(9) }
            }
        }
        return "/run/dbus/system_bus_socket"
    }

    /// The bus socket rests this long after each read, so what arrives meanwhile is read in one
    /// batch. Any local user can flood us with small signals: read one wakeup apiece, 2000 cost
    /// the daemon 800 ms of CPU in the testbed's emulated guest, batched 320-370 ms. A call
    /// from bluetoothd is read at most this much later.
    static let batchMs: Int64 = 5

    private let loop: EventLoop
    private var stream: StreamSocket?
    private var auth = DBusAuthClient()
    private var reader = DBusMessageReader()
    public private(set) var state = State.closed
    /// Told the connection's events (weak: the owner holds the connection).
    public weak var delegate: DBusConnectionDelegate?

    public init(loop: EventLoop) {
        self.loop = loop
    }

    /// Connects and starts authenticating; throws when the socket cannot be reached at all.
    public func open(path: String) throws(Errno) {
        close()
        let sock = FileDescriptor(try syscall { socket(AF_UNIX, clinux_sock_stream_cloexec_nonblock, 0) })
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        var pathBytes = Array(path.utf8)
        if pathBytes.first == UInt8(ascii: "@") { pathBytes[0] = 0 }
        guard pathBytes.count < MemoryLayout.size(ofValue: addr.sun_path) else { throw Errno(ENAMETOOLONG) }
        withUnsafeMutableBytes(of: &addr.sun_path) { dst in
            for (i, b) in pathBytes.enumerated() { dst[i] = b }
        }
        let len = socklen_t(MemoryLayout<sa_family_t>.size + pathBytes.count + (pathBytes.first == 0 ? 0 : 1))
        _ = try syscall {
            withUnsafePointer(to: &addr) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(sock.rawValue, $0, len) }
            }
        }
        let stream = StreamSocket(loop: loop, fd: sock, peer: "the bus", coalesceMs: Self.batchMs, delegate: self)
        self.stream = stream
        state = .authenticating
        auth = DBusAuthClient()
        reader = DBusMessageReader()
        stream.watch()
        stream.send(DBusAuthClient.greeting(uid: getuid()))
    }

    /// Queues `message`; written at once unless the socket is full.
    public func send(_ message: DBusMessage) {
        guard state == .open else { return }
        stream?.send(message.encoded())
    }

    /// Closes without a word to the bus (it tells bluetoothd that we are gone).
    public func close() {
        stream?.close()
        stream = nil
        state = .closed
    }

    private func fail(_ reason: String) {
        guard state != .closed else { return }
        close()
        delegate?.dbusConnection(.closed(reason))
    }

    private func received(_ bytes: [UInt8]) {
        var bytes = bytes
        if state == .authenticating {
            switch auth.feed(bytes) {
            case .needMore: return
            case .rejected(let why): return fail(why)
            case .authenticated(_, let reply, let leftover):
                state = .open
                stream?.send(reply)
                delegate?.dbusConnection(.opened)
                bytes = leftover
            }
        }
        guard state == .open, !bytes.isEmpty else { return }
        do throws(DBusWireError) {
            let messages = try reader.feed(bytes) { [weak delegate] in delegate?.dbusConnection(wantsBodyOf: $0) ?? false }
            for n in reader.dropped {
                delegate?.dbusConnection(.droppedOversized(n))
                if state != .open { return }
            }
            for m in messages {
                delegate?.dbusConnection(.received(m))
                if state != .open { return }
            }
        } catch {
            fail("the bus sent bytes that are not a D-Bus message (\(error))")
        }
    }
}

extension DBusConnection: StreamSocketDelegate {
    func stream(_ stream: StreamSocket, received bytes: [UInt8]) { received(bytes) }
    func stream(_ stream: StreamSocket, failed why: String) { fail(why) }
}
