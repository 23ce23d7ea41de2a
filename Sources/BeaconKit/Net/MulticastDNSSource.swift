/// One address of this machine's interfaces, with its netmask and the interface's index (as
/// getifaddrs and if_nametoindex give them).
public struct LocalSubnet: Equatable, Sendable {
    public var interface: UInt32
    /// 4 bytes (IPv4) or 16 (IPv6), network order; `netmask` as long.
    public var address: [UInt8]
    public var netmask: [UInt8]

    public init(interface: UInt32, address: [UInt8], netmask: [UInt8]) {
        self.interface = interface; self.address = address; self.netmask = netmask
    }

    /// `a` is on this subnet.
    public func contains(_ a: [UInt8]) -> Bool {
        a.count == address.count && netmask.count == address.count
            && a.indices.allSatisfy { a[$0] & netmask[$0] == address[$0] & netmask[$0] }
    }
}

/// Whether an mDNS response may be believed, by where it came from (RFC 6762). Queries go to
/// link-local groups (224.0.0.251, ff02::fb), so an answer can only come from the link: one from
/// elsewhere (a routed host that guessed our query, or a host on another of our networks) would
/// make itself "the broker" and receive the monitor's password. Pure.
///
/// - §6: the source UDP port of every response is 5353; any other is ignored.
/// - §11, the source address check: the source is on the local link. Here: a loopback address
///   (the kernel never lets one in from outside), any address of this machine's own (a responder
///   on this machine answers from the address of its interface, delivered over loopback), an IPv6
///   link-local address (fe80::/10, never routed), or an address within a subnet of the interface
///   the response came in on (any of this machine's interfaces when that is not known). An
///   IPv4-mapped IPv6 source is judged as the IPv4 address it is.
public enum MulticastDNSSource {
    public static let port: UInt16 = 5353

    public enum Verdict: Equatable, Sendable {
        case accepted
        /// Not from `expectedPort` (§6).
        case wrongPort
        /// Not from the link (§11).
        case offLink
    }

    /// `address` (4 or 16 bytes) and `port`: the response's source; `interface`: the index of the
    /// interface it came in on, 0 when unknown; `subnets`: this machine's addresses.
    public static func judge(address: [UInt8], port: UInt16, interface: UInt32, subnets: [LocalSubnet],
                             expectedPort: UInt16 = MulticastDNSSource.port) -> Verdict {
        guard port == expectedPort else { return .wrongPort }
        var a = address
        if a.count == 16, a[0..<10].allSatisfy({ $0 == 0 }), a[10] == 0xff, a[11] == 0xff { a = Array(a[12...]) }
        switch a.count {
        case 4:
            if a[0] == 127 { return .accepted }
        case 16:
            if a == [UInt8](repeating: 0, count: 15) + [1] { return .accepted }
            if a[0] == 0xfe, a[1] & 0xc0 == 0x80 { return .accepted }
        default:
            return .offLink
        }
        if subnets.contains(where: { $0.address == a }) { return .accepted }
        let onLink = subnets.contains { (interface == 0 || $0.interface == interface) && $0.contains(a) }
        return onLink ? .accepted : .offLink
    }

    /// "192.168.1.9:5353", "[fe80::1]:5353", for the log.
    public static func describe(address: [UInt8], port: UInt16) -> String {
        guard address.count == 4 || address.count == 16 else { return "?:\(port)" }
        let text = DNSAddress(bytes: address, ttl: 0).description
        return address.count == 16 ? "[\(text)]:\(port)" : "\(text):\(port)"
    }
}
