import BeaconKit

/// The monitor's link to the broker (SPEC §10): one `MQTTConnection`, kept up across the
/// sessions the broker accepts and ends. At each attempt the broker's name is resolved again
/// (`Resolver`: DNS, mDNS), and the password file and the TLS files are read again. Reconnects
/// with back-off (`SessionRetry`: a session the broker ends within 5 s of accepting it makes the
/// wait grow), one log line per cause. Its owner is told what the connection tells; an attempt
/// that never reached the connection (a name not resolved, a file unreadable) is only said and
/// tried again.
final class MQTTBrokerLink: MQTTConnectionDelegate, ResolverDelegate {
    static let retryMs: ClosedRange<Int64> = 1000...60_000

    private(set) var settings: MQTTSettings
    let clientID: String
    /// The will's topic (`offline`, retained): the publisher's status topic.
    private var willTopic: String
    private let loop: EventLoop
    private let log: Logger
    private let connection: MQTTConnection
    /// The broker's name, found again at each connect (DNS, mDNS: Resolver).
    private lazy var resolver = Resolver(loop: loop, delegate: self)
    /// The wait before the next attempt, or, while a session is up, until it has lived
    /// `MonitorNodeClash.shortSessionMs` (then the back-off starts again): never both at once.
    private let timer: LoopTimer
    private var retry = SessionRetry(range: MQTTBrokerLink.retryMs, settleMs: MonitorNodeClash.shortSessionMs)
    /// The session up now: when it was accepted, and whether its dropped messages were said
    /// (once per session); nil between sessions.
    private var session: (acceptedAtMs: Int64, saidDrops: Bool)?
    /// Set by `stop`: nothing more is tried, and the owner takes no more edits.
    private(set) var stopping = false
    /// Told `.connected`, `.received`, `.closed` as the connection tells them.
    weak var delegate: MQTTConnectionDelegate?

    /// `willTopic`: where the broker says `offline` (retained) when the session is lost.
    init(settings: MQTTSettings, clientID: String, willTopic: String, loop: EventLoop, log: Logger) {
        self.settings = settings; self.clientID = clientID; self.willTopic = willTopic; self.loop = loop; self.log = log
        connection = MQTTConnection(loop: loop)
        timer = loop.makeTimer()
        connection.delegate = self
    }

    var broker: String { "\(settings.host):\(settings.port)" }
    var isConnected: Bool { connection.state == .connected }
    /// PUBLISHes left out while the socket was backed up, over every session.
    var droppedTotal: Int { connection.droppedTotal }
    /// How long the session up has lived; nil between sessions. Still set while its `.closed`
    /// is told, for the session that ended.
    var connectedForMs: Int64? { session.map { loop.now - $0.acceptedAtMs } }

    /// Says how the broker's certificate is checked, and connects.
    func start() {
        if let t = settings.tls {
            let client = t.certFile.map { "; client certificate \($0)" } ?? ""
            log.info("MQTT: TLS with \(TLSClientConfig.library): the broker's certificate checked against \(t.caFile) for \(t.expectedName(host: settings.host))\(client)")
        }
        connect()
    }

    /// Sends `packet`; the first PUBLISH of a session left out (the broker takes no more bytes)
    /// is said.
    func send(_ packet: MQTTPacket) {
        let dropped = connection.droppedTotal
        connection.send(packet)
        guard connection.droppedTotal > dropped, session?.saidDrops == false else { return }
        session?.saidDrops = true
        log.warning("MQTT: \(broker) takes no more bytes; older messages are left out (the newest state of each topic is kept)")
    }

    /// `[mqtt]` or the node edited (the broker, the credentials, the will's topic are the
    /// CONNECT's): the session ended (DISCONNECT: no will) and a new one at once, the back-off
    /// from its start.
    func reconnect(settings new: MQTTSettings, willTopic newTopic: String) {
        guard !stopping else { return }
        settings = new; willTopic = newTopic
        connection.disconnect()
        timer.cancel(); resolver.cancel()
        session = nil
        retry = SessionRetry(range: Self.retryMs, settleMs: MonitorNodeClash.shortSessionMs)
        connect()
    }

    /// DISCONNECT when connected (the owner said `offline` first), else the attempt dropped;
    /// nothing more is tried or told.
    func stop() {
        stopping = true
        timer.cancel(); resolver.cancel()
        if isConnected { connection.disconnect() } else { connection.close() }
    }

    // MARK: MQTTConnectionDelegate

    func mqttConnection(_ event: MQTTConnectionEvent) {
        switch event {
        case .connected:
            let over = connection.tlsAgreed.map { " over \($0), the certificate of \(settings.tls?.expectedName(host: settings.host) ?? "") verified" } ?? ""
            // Not said again while the broker ends each session at once (the node clash says why).
            let accepted = retry.accepted(atMs: loop.now)
            if accepted.say { log.info("MQTT: connected to \(broker)\(over)\(accepted.again ? " again" : "")") }
            timer.schedule(afterMs: accepted.settleAfterMs) { [weak self] in self?.settled() }
            session = (loop.now, false)
            delegate?.mqttConnection(event)
        case .received:
            delegate?.mqttConnection(event)
        case .closed(let why):
            timer.cancel()
            delegate?.mqttConnection(event)
            session = nil
            lost(why)
        }
    }

    // MARK: an attempt

    private func connect() {
        guard !stopping else { return }
        resolver.resolve(settings.host)
    }

    func resolver(_ resolver: Resolver, finished outcome: ResolverOutcome) {
        switch outcome {
        case .failed(let why): lost("cannot resolve '\(settings.host)': \(why)")
        case .resolved(let address, _): open(address)
        }
    }

    private func open(_ address: String) {
        guard !stopping else { return }
        var password: [UInt8]?
        if let file = settings.passwordFile {
            switch readPasswordFile(file) {
            case .success(let p): password = p
            case .failure(let why): return lost(why.text)
            }
        }
        // The TLS files are loaded again at each attempt too: a renewed certificate is used
        // without a restart.
        var tls: (config: TLSClientConfig, serverName: String)?
        if let t = settings.tls {
            switch TLSClientConfig.load(t) {
            case .success(let c): tls = (c, t.expectedName(host: settings.host))
            case .failure(let why): return lost(why.text)
            }
        }
        let packet: MQTTConnect
        do throws(MQTTWireError) {
            let will = try MQTTWill(topic: willTopic, message: Array("offline".utf8), retain: true)
            packet = try MQTTConnect(clientID: clientID, keepAlive: settings.keepAliveS, will: will,
                                     username: settings.username, password: password)
        } catch {
            return lost("cannot make the CONNECT packet (\(error))")
        }
        connection.open(address: address, port: settings.port, connect: packet, tls: tls)
    }

    /// Unreachable, refused (wrong credentials), broken: said once per cause, tried again.
    private func lost(_ why: String) {
        guard !stopping else { return }
        let (say, afterMs) = retry.failed(why, atMs: loop.now)
        if say { log.warning("MQTT: \(broker): \(why); trying again with back-off") }
        timer.schedule(afterMs: afterMs) { [weak self] in self?.connect() }
    }

    /// The session has lived `MonitorNodeClash.shortSessionMs`: the back-off starts again from
    /// its lower bound; said when sessions had ended at once before it.
    private func settled() {
        guard isConnected, let short = retry.settled(atMs: loop.now), short > 0 else { return }
        log.info("MQTT: the session with \(broker) has lasted \(MonitorNodeClash.shortSessionMs / 1000) s, after \(short) that the broker ended within \(MonitorNodeClash.shortSessionMs / 1000) s; "
            + "the back-off starts again from \(Self.retryMs.lowerBound / 1000) s")
    }
}
