import BeaconKit
import CLinux
import Glibc

/// A non-blocking UDP socket for the resolver's queries: connected to one DNS server (so only its
/// datagrams arrive, and a closed port says ECONNREFUSED at once), or unconnected for mDNS, whose
/// answers come from whichever host responds (RFC 6762 §6.7: unicast to our port).
final class UDPQuerySocket {
    let fd: FileDescriptor
    private let connected: Bool

    /// A socket of `address`'s family, connected to it (`connect`) or not.
    init(for address: String, port: UInt16, connect: Bool) throws(Errno) {
        guard let (storage, length, family) = ipSocketAddress(address, port: port) else { throw Errno(EINVAL) }
        let raw = try syscall { socket(family, clinux_sock_dgram_cloexec, 0) }
        fd = FileDescriptor(raw)
        connected = connect
        _ = try syscall { fcntl(raw, F_SETFL, fcntl(raw, F_GETFL) | O_NONBLOCK) }
        if connect {
            _ = try syscall { withUnsafePointer(to: storage) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(raw, $0, length) } } }
        } else if family == AF_INET {
            // RFC 6762 §11: mDNS packets carry TTL 255 (some responders check); link-local anyway.
            var ttl: UInt8 = 255
            setsockopt(raw, Int32(IPPROTO_IP), IP_MULTICAST_TTL, &ttl, socklen_t(1))
        } else {
            var hops: Int32 = 255
            setsockopt(raw, Int32(IPPROTO_IPV6), IPV6_MULTICAST_HOPS, &hops, socklen_t(4))
        }
    }

    /// To the connected peer, or to `address` `port`.
    /// `send`, its failure as a value (nil: sent).
    func sendReporting(_ bytes: [UInt8], to address: String? = nil, port: UInt16 = 0) -> Errno? {
        do throws(Errno) {
            try send(bytes, to: address, port: port)
            return nil
        } catch {
            return error
        }
    }

    func send(_ bytes: [UInt8], to address: String? = nil, port: UInt16 = 0) throws(Errno) {
        let raw = fd.rawValue
        if connected || address == nil {
            _ = try syscall { bytes.withUnsafeBytes { Glibc.send(raw, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) } }
            return
        }
        guard let (storage, length, _) = ipSocketAddress(address!, port: port) else { throw Errno(EINVAL) }
        _ = try syscall {
            bytes.withUnsafeBytes { b in
                withUnsafePointer(to: storage) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { sendto(raw, b.baseAddress, b.count, Int32(MSG_NOSIGNAL), $0, length) }
                }
            }
        }
    }

    /// The next datagram, nil when none waits. A connected socket reports the server's ICMP
    /// "port unreachable" here as ECONNREFUSED.
    func receive() throws(Errno) -> [UInt8]? {
        var buf = [UInt8](repeating: 0, count: 4096)
        let raw = fd.rawValue
        do throws(Errno) {
            let n = try syscall { buf.withUnsafeMutableBytes { recv(raw, $0.baseAddress, $0.count, 0) } }
            return Array(buf[0..<n])
        } catch where error == .wouldBlock {
            return nil
        }
    }
}
