// The resolver's decisions, without sockets or clocks (BeaconLinux's `Resolver` performs them):
// which name and server to ask next, what an answer means, and the failure in words that name
// what was tried.

/// Size: 13 stored fields, one past 12: the lookup asked for (host, names, servers, multicast),
/// where its walk is (name, try, server, settled), the attempt's queries and answers, and what each
/// server said, which `failure` names; one lookup's record, start to failure.
public struct ResolverJob: Sendable {
    /// What one server (or, for mDNS, one round of queries) came to.
    public enum Outcome: Equatable, Sendable {
        case silent, refused, noSuchName, noAddress
        case failed(String)
    }

    public enum Verdict: Equatable, Sendable {
        /// An address to connect to.
        case done(String)
        /// This server or name is settled without one: go on.
        case next
    }

    public let host: String
    public let multicast: Bool
    /// The names to ask for, in order (search domains applied).
    public let names: [DNSName]
    /// DNS servers, asked one at a time; for mDNS the groups, asked together.
    public let servers: [String]
    public private(set) var nameIndex = 0
    public private(set) var tryIndex = 0
    public private(set) var server = 0
    /// The attempt's query IDs: A first, then AAAA.
    public private(set) var queries: [(id: UInt16, type: DNSRecordType)] = []
    /// nil until answered.
    private var v4: [DNSAddress]?
    private var v6: [DNSAddress]?
    /// The name needs asking no more (it does not exist, or has no address).
    private var nameSettled = false
    /// Per name, the last outcome of each server, in the order first heard.
    private var outcomes: [[(who: String, outcome: Outcome)]]
    /// mDNS answers not taken for where they came from (`MulticastDNSSource`), each once, in the
    /// order first seen: said with the failure.
    public private(set) var ignoredAnswers: [String] = []

    public init(host: String, multicast: Bool, names: [DNSName], servers: [String]) {
        self.host = host; self.multicast = multicast; self.names = names; self.servers = servers
        outcomes = Array(repeating: [], count: names.count)
    }

    public var name: DNSName { names[nameIndex] }

    /// Fresh IDs for a new attempt (an old attempt's late answer is then ignored).
    public mutating func startAttempt(id: UInt16 = .random(in: 0...UInt16.max)) {
        queries = [(id, .a), (id &+ 1, .aaaa)]
        v4 = nil; v6 = nil
    }

    /// What a datagram means: nil while the answer is still incomplete, or it was not for us.
    public mutating func received(_ bytes: [UInt8]) -> Verdict? {
        for q in queries {
            do throws(DNSError) {
                // A link-local IPv6 address needs an interface we do not know: not usable.
                let got = try DNSMessage.addresses(in: bytes, id: q.id, name: name, type: q.type, multicast: multicast)
                    .filter { !($0.bytes.count == 16 && $0.bytes[0] == 0xfe && $0.bytes[1] & 0xc0 == 0x80) }
                if q.type == .a { v4 = got } else { v6 = got }
                break
            } catch .wrongID {
                continue
            } catch {
                // Over mDNS, one confused responder does not speak for the others.
                if multicast { return nil }
                switch error {
                case .noSuchName: note(.noSuchName)
                case .serverError(let rcode): note(.failed("answered with an error (RCODE \(rcode)\(rcode == 2 ? ", server failure" : rcode == 5 ? ", refused" : ""))"))
                default: note(.failed("answered with a malformed message (\(error))"))
                }
                return .next
            }
        }
        if let a = v4?.first { return .done(a.description) }
        guard v4 != nil, let v6 else { return nil }
        if let a = v6.first { return .done(a.description) }
        note(.noAddress)
        return .next
    }

    /// At the attempt's end: what came, IPv4 first.
    public var bestAddress: String? { (v4?.first ?? v6?.first)?.description }

    /// An mDNS answer from `source` ("10.1.2.3:5353") not taken, and why (`port`: the one asked).
    public mutating func ignored(_ source: String, _ verdict: MulticastDNSSource.Verdict, port: UInt16 = MulticastDNSSource.port) {
        let why = verdict == .wrongPort ? "not from port \(port)" : "not on this machine's links"
        sourceCheck("from \(source), \(why)")
    }

    /// Something to say with the failure about the mDNS source check, once.
    public mutating func sourceCheck(_ text: String) {
        if !ignoredAnswers.contains(text), ignoredAnswers.count < 4 { ignoredAnswers.append(text) }
    }

    public mutating func note(_ o: Outcome) {
        if o == .noSuchName || o == .noAddress { nameSettled = true }
        let who = multicast ? "mDNS" : servers[server]
        outcomes[nameIndex].removeAll { $0.who == who }
        outcomes[nameIndex].append((who, o))
    }

    /// On to the next server, try or name; false when every one has been asked.
    public mutating func advance(tries: Int) -> Bool {
        if nameSettled {
            nameSettled = false
            tryIndex = tries
        } else if multicast {
            tryIndex += 1
        } else {
            server += 1
            if server == servers.count { server = 0; tryIndex += 1 }
        }
        if tryIndex >= tries { nameIndex += 1; tryIndex = 0; server = 0 }
        return nameIndex < names.count
    }

    /// "no answer from 192.168.1.1 (DNS)"; with search domains, each name's own story.
    public var failure: String {
        let parts = names.indices.map { i -> String in
            var groups: [(Outcome, [String])] = []
            for (who, o) in outcomes[i] {
                if let g = groups.firstIndex(where: { $0.0 == o }) { groups[g].1.append(who) } else { groups.append((o, [who])) }
            }
            let text = groups.map { render($0.0, $0.1) }.joined(separator: ", ")
            return names.count == 1 && names[0].description == host.lowercased() ? text : "\(names[i]): \(text)"
        }
        let ignored = ignoredAnswers.isEmpty ? "" : " (answers ignored, RFC 6762: \(ignoredAnswers.joined(separator: "; ")))"
        return parts.joined(separator: "; ") + ignored
    }

    private func render(_ o: Outcome, _ who: [String]) -> String {
        if multicast {
            switch o {
            case .silent: return "no answer to mDNS queries on \(servers.joined(separator: ", "))"
            case .failed(let why): return "mDNS queries \(why)"
            default: return "no address for it over mDNS"
            }
        }
        let s = who.joined(separator: ", ")
        switch o {
        case .silent: return "no answer from \(s) (DNS)"
        case .refused: return "\(s) refused the query (no DNS server listens there)"
        case .noSuchName: return "no such name, says \(s) (DNS)"
        case .noAddress: return "no address for it, says \(s) (DNS)"
        case .failed(let why): return "\(s) (DNS) \(why)"
        }
    }
}
