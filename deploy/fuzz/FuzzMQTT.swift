// The MQTT half of the decoders harness (deploy/fuzz/FuzzDecoders.swift calls it): whatever a
// broker sends the observer's MQTT client. The broker, or anything between us and it on the
// network, is untrusted: the packet reader and every packet decoder (BeaconKit/MQTT), and the
// topic filter matcher over names from the broker. Invariants: the stream read whole and in two
// pieces gives the same packets and the same error; a decoded packet encodes and decodes back to
// itself, and its bytes read back through a reader; a packet read under a maximum is within it;
// a valid topic name matches itself as a filter, and "#" unless it starts with '$'.

func checkMQTT(_ bytes: [UInt8]) {
    // One whole packet.
    if let p = try? MQTTPacket.decode(bytes) { checkMQTTPacket(p) }
    // As a stream from the broker: whole, and in two pieces.
    let whole = readMQTT([bytes[...]], maximum: MQTTPacketReader.defaultMaximumPacketSize)
    let half = bytes.count / 2
    let split = readMQTT([bytes[..<half], bytes[half...]], maximum: MQTTPacketReader.defaultMaximumPacketSize)
    if whole.packets != split.packets { trapMQTT("split stream decoded differently") }
    if whole.error != split.error { trapMQTT("split stream failed differently: \(String(describing: whole.error)) \(String(describing: split.error))") }
    for p in whole.packets { checkMQTTPacket(p) }
    // Under a small maximum: the same packets as far as it gets, each within it.
    let small = readMQTT([bytes[...]], maximum: 32)
    if small.packets.count > whole.packets.count || Array(whole.packets.prefix(small.packets.count)) != small.packets {
        trapMQTT("a smaller maximum decoded differently")
    }
    if small.packets.count < whole.packets.count, small.error == nil { trapMQTT("a packet over the maximum was not refused") }
    // The bytes as topics from the broker: a filter and a name, one a line.
    let text = String(decoding: bytes.prefix(512), as: UTF8.self)
    let lines = text.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
    checkMQTTTopic(lines[0])
    if lines.count > 1 {
        checkMQTTTopic(lines[1])
        let filterValid = (try? MQTTTopic.validateFilter(lines[0])) != nil
        let nameValid = (try? MQTTTopic.validateName(lines[1])) != nil
        if MQTTTopic.matches(filter: lines[0], topic: lines[1]), !(filterValid && nameValid) {
            trapMQTT("an invalid filter or name matched: \(lines)")
        }
    }
}

/// The packets a reader gives for `chunks` appended one after the other, and the error that
/// ended them, if one did.
private func readMQTT(_ chunks: [ArraySlice<UInt8>], maximum: Int) -> (packets: [MQTTPacket], error: MQTTWireError?) {
    var reader = MQTTPacketReader(maximumPacketSize: maximum)
    var packets: [MQTTPacket] = []
    for chunk in chunks {
        reader.append(chunk)
        do {
            while let p = try reader.next() {
                if p.encoded().count > maximum { trapMQTT("a packet over the maximum: \(p)") }
                packets.append(p)
            }
        } catch {
            if reader.bufferedCount != 0 { trapMQTT("a failed reader keeps bytes") }
            return (packets, reader.failure)
        }
    }
    return (packets, nil)
}

private func checkMQTTPacket(_ p: MQTTPacket) {
    let bytes = p.encoded()
    guard let back = try? MQTTPacket.decode(bytes), back == p else { trapMQTT("a decoded packet does not survive encoding: \(p)") }
    let length = try? MQTTPacket.frameLength(bytes[...])
    guard length == bytes.count else { trapMQTT("frame length of \(p)") }
    var reader = MQTTPacketReader(maximumPacketSize: MQTTPacket.maximumSize)
    guard let again = try? reader.feed(bytes), again == [p], reader.bufferedCount == 0 else {
        trapMQTT("an encoded packet does not read back: \(p)")
    }
    switch p {
    case .publish(let publish):
        checkMQTTTopic(publish.topic)
        if (try? MQTTTopic.validateName(publish.topic)) == nil { trapMQTT("a PUBLISH with an invalid topic: \(publish.topic)") }
        if (publish.qos == .atMostOnce) != (publish.packetID == nil) { trapMQTT("a PUBLISH's packet identifier and QoS disagree") }
    case .subscribe(let s):
        for sub in s.subscriptions where (try? MQTTTopic.validateFilter(sub.topicFilter)) == nil {
            trapMQTT("a SUBSCRIBE with an invalid filter: \(sub.topicFilter)")
        }
    case .connect(let c):
        if let will = c.will { checkMQTTTopic(will.topic) }
    default:
        break
    }
}

/// A topic name matches itself as a filter, and "#" unless it starts with '$'; an invalid one
/// matches nothing.
private func checkMQTTTopic(_ topic: String) {
    let valid = (try? MQTTTopic.validateName(topic)) != nil
    if MQTTTopic.matches(filter: topic, topic: topic) != valid { trapMQTT("a topic name and itself: \(topic)") }
    if MQTTTopic.matches(filter: "#", topic: topic) != (valid && topic.utf8.first != UInt8(ascii: "$")) {
        trapMQTT("'#' and \(topic)")
    }
    if MQTTTopic.matches(filter: "+", topic: topic), !valid || topic.utf8.contains(UInt8(ascii: "/")) {
        trapMQTT("'+' and \(topic)")
    }
}

private func trapMQTT(_ message: String) -> Never {
    print("fuzz invariant broken: \(message)")
    fatalError(message)
}
