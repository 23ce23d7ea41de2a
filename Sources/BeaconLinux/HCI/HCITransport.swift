import BeaconKit
import CBlueZ
import Glibc

/// Where one controller's HCI commands go and its events come from: the kernel's raw HCI socket
/// (`HCISocketTransport`), or a scripted controller in the unit tests. Everything that talks to a
/// controller, the beacon and `scan` alike, goes through an `HCICommandChannel` over one of these.
public protocol HCITransport: AnyObject {
    /// Writes one command packet (H4 type byte first).
    func write(_ packet: [UInt8]) throws(Errno)
    /// From now on: `onPacket` with each event packet read (on the loop, never inside `write`),
    /// and `onLost` once when the transport broke (the controller went away under it).
    func start(onPacket: @escaping (ArraySlice<UInt8>) -> Void, onLost: @escaping (Errno) -> Void)
    func close()
}

/// The kernel's raw HCI socket bound to one controller, read when the loop says it is readable.
public final class HCISocketTransport: HCITransport {
    public let socket: HCIDeviceSocket
    private let loop: EventLoop
    /// See `EventLoop.watch(_:coalesceMs:lost:_:)`.
    private let coalesceMs: Int64

    public init(index: UInt16, loop: EventLoop, events: [UInt8] = HCIDeviceSocket.commandEvents, withoutReports: Bool = false,
                coalesceMs: Int64 = 0) throws(Errno) {
        socket = try HCIDeviceSocket(index: index, events: events, withoutReports: withoutReports)
        self.loop = loop
        self.coalesceMs = coalesceMs
    }

    public func write(_ packet: [UInt8]) throws(Errno) { _ = try socket.fd.write(packet) }

    public func start(onPacket: @escaping (ArraySlice<UInt8>) -> Void, onLost: @escaping (Errno) -> Void) {
        // Weak: a packet handler may end the session that owns this transport.
        loop.watch(socket.fd, coalesceMs: coalesceMs, lost: onLost) { [weak self] in
            guard let self else { return }
            var buf = [UInt8](repeating: 0, count: 300)
            while socket.fd.isOpen {
                let n: Int?
                do throws(Errno) {
                    n = try readUnlessWouldBlock(socket.fd, &buf)
                } catch {
                    return onLost(error)
                }
                guard let n else { return }
                if n == 0 { return onLost(.brokenPipe) }
                onPacket(buf[0..<n])
            }
        }
    }

    public func close() {
        loop.unwatch(socket.fd)
        socket.close()
    }
}
