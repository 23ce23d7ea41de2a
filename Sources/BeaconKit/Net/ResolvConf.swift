// What the resolver takes from /etc/resolv.conf (resolv.conf(5)) and which names it asks for.

public struct ResolvConf: Equatable, Sendable {
    /// Server addresses as written (IPv4 or IPv6 literals; the caller checks them), at most 3 as glibc.
    public var nameservers: [String] = []
    /// `search` (or `domain`: the last of the two wins, as in glibc).
    public var search: [String] = []

    public init(nameservers: [String] = [], search: [String] = []) { self.nameservers = nameservers; self.search = search }

    public init(parsing text: String) {
        for line in text.split(separator: "\n") {
            let fields = line.prefix { $0 != "#" && $0 != ";" }.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\r" })
            guard let key = fields.first else { continue }
            switch key {
            case "nameserver" where fields.count >= 2 && nameservers.count < 3:
                // A scope ("fe80::1%eth0") is left out: the resolver sends without one.
                nameservers.append(String(fields[1].prefix { $0 != "%" }))
            case "search", "domain":
                search = fields.dropFirst().map(String.init).filter { $0 != "." }
            default:
                continue
            }
        }
    }

    /// The names to ask for `host`, in order: a single label gets the search domains first (so
    /// "broker" finds "broker.lan"), then itself; a name with a dot, or a final dot, only itself.
    public func candidates(for host: String) -> [String] {
        if host.hasSuffix(".") || host.contains(".") { return [host] }
        return search.prefix(6).map { "\(host).\($0)" } + [host]
    }
}

/// Names mDNS answers for (RFC 6762 §3): under "local.".
public func isMulticastDNSName(_ host: String) -> Bool {
    let h = host.hasSuffix(".") ? host.dropLast() : Substring(host)
    return h.lowercased().hasSuffix(".local")
}
