// PUBLISH (MQTT 3.1.1 section 3.3): its initializer checks what the decoder checks, then the
// body encoder and decoder. The acknowledgements (PUBACK, PUBREC, PUBREL, PUBCOMP) carry only a
// packet identifier and are cases of `MQTTPacket`.

/// PUBLISH, either way: ours at QoS 0, the broker's at any QoS.
public struct MQTTPublish: Equatable, Sendable {
    public let topic: String
    public let payload: [UInt8]
    public let qos: MQTTQoS
    /// Ours: keep it as the topic's last known good value. The broker's: it comes from a
    /// retained message, sent because we subscribed (MQTT-3.3.1-9).
    public let retain: Bool
    /// A redelivery of a QoS 1 or 2 message (3.3.1.1); always false at QoS 0.
    public let dup: Bool
    /// Present exactly when QoS is 1 or 2 (2.3.1), never 0.
    public let packetID: UInt16?

    /// Throws for a topic that is not a valid topic name, a packet identifier missing (QoS 1, 2),
    /// present (QoS 0) or 0, DUP at QoS 0, or a packet past the Remaining Length's maximum.
    public init(topic: String, payload: [UInt8], retain: Bool = false, qos: MQTTQoS = .atMostOnce,
                packetID: UInt16? = nil, dup: Bool = false) throws(MQTTWireError) {
        try MQTTTopic.validateName(topic)
        if qos == .atMostOnce {
            guard packetID == nil else { throw .badPacketID }
            guard !dup else { throw .badFlags(MQTTPacketType.publish.rawValue << 4 | 0x8 | (retain ? 1 : 0)) }
        } else {
            guard let packetID, packetID != 0 else { throw .badPacketID }
        }
        let length = 2 + topic.utf8.count + (packetID == nil ? 0 : 2) + payload.count
        guard length <= MQTTRemainingLength.maximum else { throw .tooLarge(length) }
        self.topic = topic; self.payload = payload; self.retain = retain
        self.qos = qos; self.packetID = packetID; self.dup = dup
    }

    /// The low nibble of the fixed header: DUP, QoS, RETAIN (3.3.1).
    var flags: UInt8 {
        (dup ? 0x8 : 0) | qos.rawValue << 1 | (retain ? 0x1 : 0)
    }

    func encodeBody(_ e: inout MQTTEncoder) {
        e.appendString(topic)
        if let packetID { e.appendUInt16(packetID) }
        e.bytes += payload
    }

    /// `flags` as `MQTTPacketType(checking:)` passed them: QoS not 3, no DUP at QoS 0.
    static func decodeBody(flags: UInt8, _ d: inout MQTTDecoder) throws(MQTTWireError) -> MQTTPublish {
        let qos = try MQTTQoS(checking: (flags >> 1) & 0x3)
        let topic = try d.readString()
        var packetID: UInt16? = nil
        if qos != .atMostOnce { packetID = try d.readPacketID() }
        return try MQTTPublish(topic: topic, payload: d.readRest(), retain: flags & 0x1 != 0, qos: qos,
                               packetID: packetID, dup: flags & 0x8 != 0)
    }
}
