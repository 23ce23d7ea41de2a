import BeaconKit
import CLinux
import Glibc

/// A non-blocking UDP socket for the resolver's queries: connected to one DNS server (so only its
/// datagrams arrive, and a closed port says ECONNREFUSED at once), or unconnected for mDNS, whose
/// answers come from whichever host responds (RFC 6762 §6.7: unicast to our port): each
/// datagram with its source and arrival interface, for `MulticastDNSSource` to judge.
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
        } else {
            if family == AF_INET {
                // RFC 6762 §11: mDNS packets carry TTL 255 (some responders check); link-local anyway.
                var ttl: UInt8 = 255
                setsockopt(raw, Int32(IPPROTO_IP), IP_MULTICAST_TTL, &ttl, socklen_t(1))
            } else {
                var hops: Int32 = 255
                setsockopt(raw, Int32(IPPROTO_IPV6), IPV6_MULTICAST_HOPS, &hops, socklen_t(4))
            }
            // Each answer's arrival interface, for the source address check (RFC 6762 §11);
            // without it, any interface's subnets are taken.
            _ = clinux_want_pktinfo(raw, family)
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

    /// One datagram and where it came from: the source address (4 or 16 bytes; empty when
    /// unknown) and port, and the index of the interface it came in on (0: unknown).
    struct Datagram {
        var bytes: [UInt8]
        var address: [UInt8]
        var port: UInt16
        var interface: UInt32
    }

    /// The next datagram, nil when none waits. A connected socket reports the server's ICMP
    /// "port unreachable" here as ECONNREFUSED.
    func receive() throws(Errno) -> Datagram? {
        var buf = [UInt8](repeating: 0, count: 4096)
        var from = clinux_source()
        let raw = fd.rawValue
        do throws(Errno) {
            let n = try syscall { buf.withUnsafeMutableBytes { clinux_recv_from(raw, $0.baseAddress, UInt($0.count), &from) } }
            let address = withUnsafeBytes(of: from.address) { Array($0.prefix(Int(from.length))) }
            return Datagram(bytes: Array(buf[0..<Int(n)]), address: address, port: from.port, interface: from.ifindex)
        } catch where error == .wouldBlock {
            return nil
        }
    }
}
