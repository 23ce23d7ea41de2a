/// Two monitors that get in each other's way on one broker (SPEC §12), noticed and said once:
///
/// - **The same node name** (two Pis left with the default hostname both publish
///   `altbeacond/raspberrypi/...`, each overwriting the other's retained states). Each session
///   announces its client ID on `altbeacond/<node>/monitor`, not retained, and listens there. The
///   broker forwards a message to a subscription made earlier with the retain flag clear
///   (MQTT-3.3.1-9): such a message with another ID is another monitor connected under our node
///   name now, never a leftover of the past (a Pi moved or renamed). It is answered once with our
///   own announcement, so that the other side, which may have connected first, learns of us too.
/// - **The same client ID** (3.1.4: the broker closes the older connection, and the two take the
///   session from each other in turn). Both would announce the same ID, so it shows instead as
///   sessions the broker ends right after accepting them, `shortSessionsToSay` in a row.
///
/// Pure: the runner subscribes and publishes what `connected` returns, hands over what arrives
/// on `topic`, and says when a session ended.
public struct MonitorNodeClash: Sendable {
    public static let shortSessionMs: Int64 = 5000
    public static let shortSessionsToSay = 3

    public enum Action: Sendable {
        case subscribe(MQTTSubscribe)
        case publish(MQTTPublish)
        /// For the log, once.
        case say(String)
    }

    public let node: String
    public let clientID: String
    /// Another monitor was heard announcing itself as our node.
    public private(set) var nodeClash = false
    private var answered = false
    private var shortSessions = 0
    private var saidShortSessions = false

    public init(node: String, clientID: String) { self.node = node; self.clientID = clientID }

    public var topic: String { "altbeacond/\(node)/monitor" }

    /// The monitor's client ID: one per machine and adapter, and the same across restarts and
    /// reboots, so that a half-open session of our own from before (a crash, a power cut) is
    /// taken over at once instead of firing its will later. `machine`: `MachineIdentity.choose`'s
    /// (the board's serial, else /etc/machine-id with the network hardware addresses, else the
    /// hostname with them; the caller reads them). "altbeacond-" and 12 hex
    /// digits of a hash: 23 bytes, the most every MQTT 3.1.1 server must accept (3.1.3.1).
    public static func clientID(machine: String, adapter: String) -> String {
        // FNV-1a 64; the label keeps it apart from other uses of the same hash.
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in Array("altbeacond monitor client".utf8) + [0] + Array(machine.utf8) + [0] + Array(adapter.utf8) {
            h = (h ^ UInt64(b)) &* 0x0000_0100_0000_01b3
        }
        let v = (h ^ (h >> 48)) & 0xffff_ffff_ffff
        let digits = Array("0123456789abcdef".utf8)
        return "altbeacond-" + String(decoding: (0..<12).map { digits[Int(v >> (44 - 4 * UInt64($0)) & 0xf)] }, as: UTF8.self)
    }

    /// A new session: the subscription (packet identifier `packetID`), then the announcement.
    public func connected(packetID: UInt16) -> [Action] {
        guard let s = try? MQTTSubscribe(packetID: packetID, subscriptions: [MQTTSubscription(topic)]) else { return [] }
        return [.subscribe(s)] + announcement()
    }

    /// A message on `topic`.
    public mutating func received(_ message: MQTTPublish) -> [Action] {
        let other = String(decoding: message.payload, as: UTF8.self)
        guard message.topic == topic, !message.retain, other != clientID else { return [] }
        var out: [Action] = []
        if !nodeClash {
            nodeClash = true
            out.append(.say("another monitor (client ID \(other)) publishes as node '\(node)' on this broker: each overwrites the other's topics. "
                + "Give each machine its own [monitor] node (the default is the hostname)"))
        }
        if !answered {
            answered = true
            out += announcement()
        }
        return out
    }

    /// A session the broker accepted ended (not by us), after `connectedForMs`.
    public mutating func sessionEnded(connectedForMs: Int64) -> [Action] {
        guard connectedForMs < Self.shortSessionMs else {
            shortSessions = 0
            return []
        }
        shortSessions += 1
        guard shortSessions >= Self.shortSessionsToSay, !saidShortSessions else { return [] }
        saidShortSessions = true
        return [.say("the broker ended the session within \(Self.shortSessionMs / 1000) s of accepting it \(shortSessions) times in a row: "
            + "another client may use our client ID \(clientID) and take the session over (a second monitor on this machine and adapter, "
            + "or a copy of this system); the wait before each reconnection grows until a session lasts \(Self.shortSessionMs / 1000) s")]
    }

    private func announcement() -> [Action] {
        guard let p = try? MQTTPublish(topic: topic, payload: Array(clientID.utf8)) else { return [] }
        return [.publish(p)]
    }
}
