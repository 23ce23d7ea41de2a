/// What waits for the socket while the broker does not take our bytes (its buffer full: the
/// broker stalled, or a slow link), bounded so that a stall costs little memory and, when the
/// broker reads again, the newest state goes rather than a backlog of old ones. A retained
/// PUBLISH is a topic's state: only the newest per topic is kept, and it goes in the place of
/// the newest (an older one is dropped). Other PUBLISHes keep their order, at most `maxOthers`,
/// the oldest dropped first. Control packets (PINGREQ, SUBSCRIBE, acknowledgements, DISCONNECT)
/// are few by nature and always kept. Pure; the runner (BeaconLinux's `MQTTConnection`) fills it
/// only while the socket is backed up and drains it as the socket takes bytes again. One per
/// connection: what is left when the connection ends goes with it (a new session says every
/// retained state again from what is true then).
public struct MQTTOutbox: Sendable {
    public static let defaultMaxOthers = 32

    public let maxOthers: Int
    private var packets: [MQTTPacket] = []
    /// PUBLISHes dropped since the outbox was made: replaced retained states, the oldest others.
    public private(set) var dropped = 0

    public init(maxOthers: Int = MQTTOutbox.defaultMaxOthers) { self.maxOthers = max(1, maxOthers) }

    public var isEmpty: Bool { packets.isEmpty }
    public var count: Int { packets.count }

    public mutating func append(_ packet: MQTTPacket) {
        if case .publish(let p) = packet {
            if p.retain {
                let before = packets.count
                packets.removeAll { if case .publish(let q) = $0 { q.retain && q.topic == p.topic } else { false } }
                dropped += before - packets.count
            } else if others >= maxOthers, let i = packets.firstIndex(where: Self.isOther) {
                packets.remove(at: i)
                dropped += 1
            }
        }
        packets.append(packet)
    }

    /// The packet to write next, in order.
    public mutating func next() -> MQTTPacket? { packets.isEmpty ? nil : packets.removeFirst() }

    private var others: Int { packets.lazy.filter(Self.isOther).count }

    private static func isOther(_ packet: MQTTPacket) -> Bool {
        if case .publish(let p) = packet { !p.retain } else { false }
    }
}
