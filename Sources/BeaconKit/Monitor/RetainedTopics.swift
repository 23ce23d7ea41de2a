/// The monitor's retained topics on the broker: what each got in this session (so that changes
/// alone go between refreshes), every one published with a payload and not cleared since, in
/// this session and, as the caller remembered them (`MonitorAnnounced`), in earlier ones (issue
/// 38), and what an earlier run announced that this one no longer publishes.
struct RetainedTopics: Sendable {
    /// What each retained topic last got in this session.
    private var published: [String: String] = [:]
    /// Announced and not cleared: what is no longer configured is cleared from it.
    private(set) var announced: Set<String>
    /// What the caller was last told to remember.
    private var remembered: Set<String>
    /// State topics announced before and not published at this session's start: cleared at
    /// the next refresh, never in the burst that removes their entities (an empty state
    /// reaching an entity HA is still removing is an error in its log).
    private var staleStates: [String] = []

    init(announced: [String]) {
        self.announced = Set(announced)
        remembered = self.announced
    }

    /// The monitor's own state topics (`altbeacond/...`), as opposed to discovery.
    static func isStateTopic(_ t: String) -> Bool { t.utf8.starts(with: "altbeacond/".utf8) }

    /// A new session: the broker keeps what was retained, this session has published nothing yet.
    /// Returns what was announced before it, for `stale(before:)` once the session's first burst went.
    mutating func newSession() -> Set<String> {
        published = [:]
        return announced
    }

    /// What was announced `before` the session and not published in its first burst: its
    /// discovery topics, to clear now; its state topics wait for the next refresh (`staleStatesDue`).
    mutating func stale(before: Set<String>) -> [String] {
        let stale = before.filter { published[$0] == nil }.sorted()
        staleStates = stale.filter(Self.isStateTopic)
        return stale.filter { !Self.isStateTopic($0) }
    }

    /// The refresh: the stale state topics still not published, to clear now (once).
    mutating func staleStatesDue() -> [String] {
        defer { staleStates = [] }
        return staleStates.filter { published[$0] == nil }
    }

    /// `payload` to `topic`, unless it already has it in this session (or `force`); "" clears it.
    mutating func publish(_ topic: String, _ payload: String, force: Bool = false) -> [MonitorPublisher.Action] {
        guard force || published[topic] != payload else { return [] }
        guard let p = try? MQTTPublish(topic: topic, payload: Array(payload.utf8), retain: true) else { return [.cannotPublish(topic: topic)] }
        published[topic] = payload
        if payload.isEmpty { announced.remove(topic) } else { announced.insert(topic) }
        return [.publish(p)]
    }

    /// `.remember` when the announced set changed since last said.
    mutating func rememberIfChanged() -> [MonitorPublisher.Action] {
        guard announced != remembered else { return [] }
        remembered = announced
        return [.remember(announced.sorted())]
    }
}
