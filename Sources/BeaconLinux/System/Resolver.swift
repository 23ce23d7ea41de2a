import BeaconKit
import CLinux
import Glibc

/// What a `Resolver` tells its owner, always on a later loop turn than `resolve`.
public enum ResolverOutcome: Equatable, Sendable {
    /// An IPv4 or IPv6 literal, and where it came from ("/etc/hosts", "DNS 192.168.1.1", "mDNS").
    case resolved(address: String, via: String)
    /// Why not, naming what was tried ("no answer from 192.168.1.1 (DNS)").
    case failed(String)
}

public protocol ResolverDelegate: AnyObject {
    func resolver(_ resolver: Resolver, finished outcome: ResolverOutcome)
}

/// A host name to one address on the event loop, never blocking: a static binary has no resolver
/// of its own (glibc's getaddrinfo needs shared NSS modules). In order: an IP literal, /etc/hosts,
/// then mDNS for names under `.local` (RFC 6762 §5.1 one-shot queries: avahi-daemon answers them)
/// or DNS to each `nameserver` of /etc/resolv.conf (with its `search` domains for a single label).
/// A and AAAA are asked together; IPv4 wins when both come. Nothing is cached: the owner resolves
/// at each connect, so a TTL is never outlived.
public final class Resolver {
    public struct Settings: Sendable {
        public var hostsPath = "/etc/hosts"
        public var resolvConfPath = "/etc/resolv.conf"
        /// Tests play the server on another port.
        public var dnsPort: UInt16 = 53
        public var multicastGroups = ["224.0.0.251", "ff02::fb"]
        public var multicastPort: UInt16 = 5353
        /// This machine's addresses for the mDNS source check; nil: read at each attempt
        /// (getifaddrs). Tests set them.
        public var localSubnets: [LocalSubnet]?
        /// Per server and try (glibc waits 5 s, twice): a reconnect is not held up long.
        public var timeoutMs: Int64 = 2000
        public var tries = 3
        public init() {}
    }

    private let loop: EventLoop
    private let settings: Settings
    private weak var delegate: ResolverDelegate?
    private let timer: LoopTimer
    /// Bumped by every resolve and cancel: what an older job posted is dropped.
    private var generation = 0
    private var job: ResolverJob?
    private var sockets: [UDPQuerySocket] = []
    /// For mDNS: this machine's addresses, read at each attempt.
    private var subnets: [LocalSubnet] = []

    public init(loop: EventLoop, settings: Settings = Settings(), delegate: ResolverDelegate) {
        self.loop = loop; self.settings = settings; self.delegate = delegate
        timer = loop.makeTimer()
    }

    /// Starts finding `host`; an earlier lookup still running is dropped.
    public func resolve(_ host: String) {
        cancel()
        if let address = resolveHost(host, hostsPath: settings.hostsPath) {
            return finish(.resolved(address: address, via: address == host ? "literal" : settings.hostsPath))
        }
        let multicast = isMulticastDNSName(host)
        var servers = multicast ? settings.multicastGroups : []
        var candidates = [host]
        if !multicast {
            let conf = ResolvConf(parsing: String(decoding: (try? readFile(settings.resolvConfPath, limit: 1 << 16)) ?? [], as: UTF8.self))
            // As glibc: no nameserver line means the local one.
            servers = conf.nameservers.isEmpty ? ["127.0.0.1"] : conf.nameservers
            candidates = conf.candidates(for: host)
        }
        var names: [DNSName] = []
        for c in candidates {
            guard let n = try? DNSName(c) else { return finish(.failed("'\(c)' is not a valid host name")) }
            names.append(n)
        }
        job = ResolverJob(host: host, multicast: multicast, names: names, servers: servers)
        ask()
    }

    /// Stops; nothing more is told for the lookup running.
    public func cancel() {
        generation += 1
        job = nil
        closeSockets()
    }

    // MARK: one attempt: one name, one try, one server (mDNS: every group at once)

    private func ask() {
        guard job != nil else { return }
        closeSockets()
        job?.startAttempt()
        guard let j = job else { return }
        let port = j.multicast ? settings.multicastPort : settings.dnsPort
        if j.multicast {
            if let s = settings.localSubnets ?? localSubnets() {
                subnets = s
            } else {
                // getifaddrs needs AF_NETLINK (the monitor's unit allows it).
                subnets = []
                job?.sourceCheck("this machine's addresses cannot be listed (\(Errno.current)): only loopback and IPv6 link-local answers are taken")
            }
        }
        let targets = j.multicast ? j.servers : [j.servers[j.server]]
        var sendError = Errno(0)
        for target in targets {
            switch open(target, port: port, j) {
            case .success(let s):
                sockets.append(s)
                loop.watch(s.fd) { [weak self, weak s] in if let self, let s { self.readable(s) } }
            case .failure(let e):
                sendError = e
            }
        }
        if sockets.isEmpty {
            // A closed port's ICMP can fail the second query's send already.
            let why = sendError.rawValue == 0 ? "no address" : "\(sendError)"
            job?.note(sendError == Errno(ECONNREFUSED) ? .refused : .failed("cannot be asked (\(why))"))
            return next()
        }
        timer.schedule(afterMs: settings.timeoutMs) { [weak self] in self?.timedOut() }
    }

    /// A socket to `target` with the attempt's queries sent. (Its own function: Swift 6.0.3's
    /// optimizer crashed on a typed `do`/`catch` inside `ask`'s loop, in DestroyAddrHoisting.)
    private func open(_ target: String, port: UInt16, _ j: ResolverJob) -> Result<UDPQuerySocket, Errno> {
        let s: UDPQuerySocket
        do throws(Errno) {
            s = try UDPQuerySocket(for: target, port: port, connect: !j.multicast)
        } catch {
            return .failure(error)
        }
        for q in j.queries {
            let query = DNSMessage.query(id: q.id, name: j.name, type: q.type, recursionDesired: !j.multicast)
            if let e = s.sendReporting(query, to: target, port: port) { return .failure(e) }
        }
        return .success(s)
    }

    private func readable(_ s: UDPQuerySocket) {
        for _ in 0..<16 {
            guard job != nil else { return }
            let bytes: [UInt8]
            do throws(Errno) {
                guard let d = try s.receive() else { return }
                if job?.multicast == true {
                    // RFC 6762 §6, §11: from port 5353 and from the link, or not believed.
                    let verdict = MulticastDNSSource.judge(address: d.address, port: d.port, interface: d.interface, subnets: subnets,
                                                           expectedPort: settings.multicastPort)
                    if verdict != .accepted {
                        job?.ignored(MulticastDNSSource.describe(address: d.address, port: d.port), verdict, port: settings.multicastPort)
                        continue
                    }
                }
                bytes = d.bytes
            } catch {
                // ECONNREFUSED: nothing listens there; try the next server now, not after the timeout.
                job?.note(error == Errno(ECONNREFUSED) ? .refused : .failed("\(error)"))
                return next()
            }
            guard let verdict = job?.received(bytes) else { continue }
            switch verdict {
            case .done(let address):
                return finish(.resolved(address: address, via: job.map { $0.multicast ? "mDNS" : "DNS \($0.servers[$0.server])" } ?? ""))
            case .next:
                return next()
            }
        }
    }

    private func timedOut() {
        guard let j = job else { return }
        if let address = j.bestAddress {
            return finish(.resolved(address: address, via: j.multicast ? "mDNS" : "DNS \(j.servers[j.server])"))
        }
        job?.note(.silent)
        next()
    }

    /// The next server, try or name; the end when all have been asked.
    private func next() {
        guard var j = job else { return }
        timer.cancel()
        let more = j.advance(tries: settings.tries)
        job = j
        if more { ask() } else { finish(.failed(j.failure)) }
    }

    private func finish(_ outcome: ResolverOutcome) {
        cancel()
        let current = generation
        loop.post { [weak self] in
            guard let self, generation == current else { return }
            delegate?.resolver(self, finished: outcome)
        }
    }

    private func closeSockets() {
        timer.cancel()
        for s in sockets { loop.unwatch(s.fd); s.fd.close() }
        sockets = []
    }
}

/// This machine's addresses (getifaddrs: interfaces that are up), for the mDNS source check;
/// nil when they cannot be listed (getifaddrs needs an AF_NETLINK socket).
func localSubnets() -> [LocalSubnet]? {
    var buf = [clinux_subnet](repeating: clinux_subnet(), count: 256)
    let n = buf.withUnsafeMutableBufferPointer { clinux_local_subnets($0.baseAddress, Int32($0.count)) }
    guard n >= 0 else { return nil }
    return buf.prefix(Int(n)).map { s in
        let length = Int(s.length)
        return LocalSubnet(interface: s.ifindex,
                           address: withUnsafeBytes(of: s.address) { Array($0.prefix(length)) },
                           netmask: withUnsafeBytes(of: s.netmask) { Array($0.prefix(length)) })
    }
}
