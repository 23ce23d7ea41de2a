import BeaconKit
import BeaconLinux
import Glibc

/// The monitor's MQTT output (SPEC §10): `altbeacond/<node>/status` (retained `online`, the will
/// `offline`), `altbeacond/<node>/beacons/<name>` (retained JSON: on every heard/silent change
/// and, while it changes, at most every `refreshMs`), `altbeacond/<node>/health` (the local beacon
/// daemon's status file, when there is one), and Home Assistant discovery, sent again when
/// `<prefix>/status` says `online`. Reconnects with back-off; one log line per cause.
final class MonitorMQTT {
    static let refreshMs: Int64 = 30_000
    static let retryMs: ClosedRange<Int64> = 1000...60_000

    let settings: MQTTSettings
    let node: String
    let config: MonitorConfig
    let loop: EventLoop
    let log: Logger
    let connection: MQTTConnection
    let retryTimer: LoopTimer
    let refreshTimer: LoopTimer
    var retryDelay = MonitorMQTT.retryMs.lowerBound
    var lastProblem: String?
    /// What each retained topic last got, so only changes are sent.
    var published: [String: String] = [:]
    /// The monitor's tracker as it is now, read when something is published (not per advert).
    let tracker: () -> BeaconTracker
    var stopping = false
    var connectedOnce = false

    init(settings: MQTTSettings, node: String, config: MonitorConfig, loop: EventLoop, log: Logger,
         tracker: @escaping () -> BeaconTracker) {
        self.settings = settings; self.node = node; self.config = config; self.loop = loop; self.log = log
        self.tracker = tracker
        connection = MQTTConnection(loop: loop)
        retryTimer = loop.makeTimer()
        refreshTimer = loop.makeTimer()
        connection.onConnected = { [unowned self] in connected() }
        connection.onPublish = { [unowned self] p in received(p) }
        connection.onClose = { [unowned self] why in lost(why) }
    }

    var statusTopic: String { MonitorExport.statusTopic(node: node) }
    var broker: String { "\(settings.host):\(settings.port)" }

    func start() { connect() }

    private func connect() {
        guard !stopping else { return }
        guard let address = resolveHost(settings.host) else {
            return lost("cannot resolve '\(settings.host)' (give an IP address, or a name in /etc/hosts)")
        }
        var password: [UInt8]?
        if let file = settings.passwordFile {
            do throws(Errno) {
                let bytes = try readFile(file, limit: 4096)
                password = Array(bytes.prefix { $0 != 0x0a && $0 != 0x0d })
            } catch {
                return lost("cannot read the MQTT password file \(file) (\(error))")
            }
        }
        let packet: MQTTConnect
        do throws(MQTTWireError) {
            let will = try MQTTWill(topic: statusTopic, message: Array("offline".utf8), retain: true)
            packet = try MQTTConnect(clientID: "altbeacond-monitor-\(node)", keepAlive: settings.keepAliveS, will: will,
                                     username: settings.username, password: password)
        } catch {
            return lost("cannot make the CONNECT packet (\(error))")
        }
        connection.open(address: address, port: settings.port, connect: packet)
    }

    private func connected() {
        log.info("MQTT: connected to \(broker)\(lastProblem == nil ? "" : " again")")
        lastProblem = nil
        retryDelay = Self.retryMs.lowerBound
        published = [:]   // a new session: whatever the broker kept, say it all again
        publish(statusTopic, "online")
        if let s = try? MQTTSubscribe(packetID: 1, subscriptions: [MQTTSubscription(settings.discoveryPrefix + "/status")]) {
            connection.send(.subscribe(s))
        }
        sendDiscovery()
        publishAll()
        connectedOnce = true
    }

    /// Unreachable, refused (wrong credentials), broken: said once per cause, tried again.
    private func lost(_ why: String) {
        guard !stopping else { return }
        refreshTimer.cancel()
        if lastProblem != why { log.warning("MQTT: \(broker): \(why); trying again with back-off") }
        lastProblem = why
        retryTimer.schedule(afterMs: retryDelay) { [unowned self] in connect() }
        retryDelay = min(retryDelay * 2, Self.retryMs.upperBound)
    }

    private func received(_ p: MQTTPublish) {
        // Home Assistant's birth message: it lost what it knew, discovery goes again.
        guard p.topic == settings.discoveryPrefix + "/status", p.payload == Array("online".utf8) else { return }
        log.info("MQTT: Home Assistant is online; sending discovery again")
        sendDiscovery(force: true)
        publishAll(force: true)
    }

    private func sendDiscovery(force: Bool = false) {
        for e in config.expectations {
            for d in MonitorExport.discovery(e, node: node, prefix: settings.discoveryPrefix, silentAfterS: config.silentAfterS) {
                publish(d.topic, d.payload, force: force)
            }
        }
    }

    /// Every beacon's topic and the health topic, where they changed.
    private func publishAll(force: Bool = false) {
        guard connection.state == .connected else { return }
        for (s, e) in zip(tracker().states, config.expectations) {
            publish(MonitorExport.beaconTopic(node: node, name: s.name), MonitorExport.beaconJSON(s, expectation: e), force: force)
        }
        if let health = try? readFile(defaultStatusPath(), limit: 1 << 16) {
            publish(MonitorExport.healthTopic(node: node), String(decoding: health, as: UTF8.self).trimmingNewline, force: force)
        }
        refreshTimer.schedule(afterMs: Self.refreshMs) { [unowned self] in publishAll() }
    }

    /// A heard/silent change (or a reboot): the beacons' topics at once; sightings without a
    /// change are picked up by the next refresh.
    func changed() { publishAll() }

    private func publish(_ topic: String, _ payload: String, force: Bool = false) {
        guard connection.state == .connected, force || published[topic] != payload else { return }
        guard let p = try? MQTTPublish(topic: topic, payload: Array(payload.utf8), retain: true) else {
            log.warning("MQTT: cannot publish to '\(topic)'")
            return
        }
        published[topic] = payload
        connection.send(.publish(p))
    }

    /// `offline` said ourselves (a clean DISCONNECT does not fire the will), then DISCONNECT.
    func stop(_ done: @escaping () -> Void) {
        stopping = true
        retryTimer.cancel(); refreshTimer.cancel()
        if connection.state == .connected {
            publish(statusTopic, "offline", force: true)
            connection.disconnect()
        } else {
            connection.close()
        }
        loop.post(done)
    }
}

/// An IP address for `host`: a literal as it is, "localhost", or the first match in /etc/hosts.
/// No DNS: a static binary has no resolver of its own (glibc's needs its shared NSS modules).
func resolveHost(_ host: String) -> String? {
    var v4 = in_addr(), v6 = in6_addr()
    if inet_pton(AF_INET, host, &v4) == 1 || inet_pton(AF_INET6, host, &v6) == 1 { return host }
    if host == "localhost" { return "127.0.0.1" }
    guard let bytes = try? readFile("/etc/hosts", limit: 1 << 20) else { return nil }
    for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") {
        let fields = line.prefix { $0 != "#" }.split(whereSeparator: { $0 == " " || $0 == "\t" })
        guard fields.count >= 2, fields.dropFirst().contains(where: { $0 == host }) else { continue }
        let address = String(fields[0])
        if inet_pton(AF_INET, address, &v4) == 1 || inet_pton(AF_INET6, address, &v6) == 1 { return address }
    }
    return nil
}

extension String {
    var trimmingNewline: String {
        var s = Substring(self)
        while let l = s.last, l == "\n" || l == "\r\n" { s = s.dropLast() }
        return String(s)
    }
}
