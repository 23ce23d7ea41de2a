// Topic names and topic filters (MQTT 3.1.1 section 4.7): what may be published to, what may be
// subscribed to, and whether a filter matches a name. Topics are compared byte for byte, never
// normalized (4.7.3): two Swift strings that are canonically equivalent but spelled with
// different code points are different topics.

public enum MQTTTopic {
    static let separator = UInt8(ascii: "/")
    static let singleLevel = UInt8(ascii: "+")
    static let multiLevel = UInt8(ascii: "#")

    /// Checks a topic name to publish to (or a will topic): not empty (MQTT-4.7.3-1), at most
    /// 65,535 bytes of UTF-8 (MQTT-4.7.3-3), no U+0000 (MQTT-4.7.3-2), no wildcard (MQTT-3.3.2-2).
    public static func validateName(_ topic: String) throws(MQTTWireError) {
        guard !topic.utf8.isEmpty else { throw .emptyTopic }
        try mqttCheckString(topic)
        guard !topic.utf8.contains(where: { $0 == singleLevel || $0 == multiLevel }) else { throw .wildcardInTopicName }
    }

    /// Checks a topic filter to subscribe to: as a name, except that a level may be "+" and the
    /// last level may be "#" (4.7.1.2, 4.7.1.3); a wildcard is never part of a longer level.
    public static func validateFilter(_ filter: String) throws(MQTTWireError) {
        guard !filter.utf8.isEmpty else { throw .emptyTopic }
        try mqttCheckString(filter)
        let levels = filter.utf8.split(separator: separator, omittingEmptySubsequences: false)
        for (i, level) in levels.enumerated() {
            let wild = level.contains(where: { $0 == singleLevel || $0 == multiLevel })
            guard wild else { continue }
            guard level.count == 1 else { throw .badTopicFilter }
            if level.first == multiLevel, i != levels.count - 1 { throw .badTopicFilter }
        }
    }

    /// Whether `filter` matches the topic name `topic` (4.7): "+" matches one level (which may be
    /// empty), "#" the level it stands at and every level below, including none ("a/#" matches
    /// "a"). A filter starting with a wildcard does not match a name starting with '$'
    /// (MQTT-4.7.2-1). A filter or name that is not valid matches nothing.
    public static func matches(filter: String, topic: String) -> Bool {
        do {
            try validateFilter(filter)
            try validateName(topic)
        } catch {
            return false
        }
        let f = Array(filter.utf8).split(separator: separator, omittingEmptySubsequences: false)
        let t = Array(topic.utf8).split(separator: separator, omittingEmptySubsequences: false)
        if topic.utf8.first == UInt8(ascii: "$"), let first = f.first?.first, first == singleLevel || first == multiLevel {
            return false
        }
        var i = 0
        while i < f.count {
            let level = f[i]
            if level.count == 1, level.first == multiLevel { return true }
            guard i < t.count else { return false }
            if !(level.count == 1 && level.first == singleLevel) {
                guard level.elementsEqual(t[i]) else { return false }
            }
            i += 1
        }
        return i == t.count
    }
}
