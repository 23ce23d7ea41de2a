// Issue 39: the monitor's side of a card's firmware update. It hears the fleet's release (one
// retained topic) and Home Assistant's Install (the update entity's command topic), and decides,
// per message, whether to ask the root-side updater for the release (`UpdateRequest`) or why
// not. No I/O here: BeaconLinux's FirmwareUpdateInput reads the state file and writes the request.

/// What this card can do about its own firmware, from the files beside the monitor.
public enum FirmwareCapability: Equatable, Sendable {
    /// An A/B image: the updater's state file is readable. Updates offered.
    case ab(UpdaterState)
    /// An image flashed before A/B updates (`/usr/lib/altbeacon-image`, no updater): one reflash gets them.
    case needsReflash
    /// A package install: apt updates it.
    case package
}

public struct FirmwareUpdate: Sendable {
    public enum Decision: Equatable, Sendable {
        /// Hand this request to the updater; then `requestWritten` or `requestFailed`.
        case request(UpdateRequest)
        /// Not asked, and why: said once in the log and shown in Home Assistant (`note`).
        case refuse(String)
        /// Nothing to ask, and why: said once in the log.
        case ignore(String)
        /// Nothing to say.
        case nothing
    }

    /// The payload of Home Assistant's Install (`payload_install`).
    public static let installPayload = "install"
    public static let defaultReleaseTopic = "altbeacond/fleet/release"

    public private(set) var node: String
    public private(set) var releaseTopic: String
    public private(set) var control: MQTTControl
    /// The broker authenticates who publishes (`MQTTSettings.authenticatesPublishers`).
    public private(set) var authenticated: Bool
    /// The monitor's own version: the installed one where no updater says (the same binary).
    public let monitorVersion: String
    public var capability: FirmwareCapability = .package
    /// The fleet's release, as last heard; nil before one or after one that was not valid.
    public private(set) var release: FleetRelease?
    /// Why the last message on the release topic was no release.
    public private(set) var releaseProblem: String?
    /// The monitor's last word about a request (asked, refused, not written) and when (unix
    /// seconds): the outcome shown while it is newer than the updater's.
    public private(set) var note: (text: String, time: Int64)?
    /// What was asked in this run, and the updater's outcome then: the same version and URL are
    /// asked again only once that outcome changed.
    private var asked: (version: String, url: String, outcomeKey: String)?
    /// Issue 49: the fleet's reports of rollbacks (`FleetRollout`), by node.
    public private(set) var rollbacks = RollbackReports()
    /// Issue 49: downloads of the fleet's release that failed one after another (the updater's
    /// outcomes, each counted once by its key), for the back-off before asking again.
    private var downloadFailures: (count: Int, lastKey: String) = (0, "")

    public init(node: String, releaseTopic: String = FirmwareUpdate.defaultReleaseTopic, control: MQTTControl, authenticated: Bool,
                monitorVersion: String) {
        self.node = node; self.releaseTopic = releaseTopic; self.control = control; self.authenticated = authenticated
        self.monitorVersion = monitorVersion
    }

    /// `altbeacond/<node>/update`: the update entity's state (retained JSON).
    public static func stateTopic(node: String) -> String { "altbeacond/\(node)/update" }
    /// `altbeacond/<node>/update/detail`: what the card knows beyond HA's update schema (the
    /// outcome, phase, slot, whether Install can work): the update entity's attributes and the
    /// Update outcome sensor's state (retained JSON).
    public static func detailTopic(node: String) -> String { stateTopic(node: node) + "/detail" }
    /// `altbeacond/<node>/update/set`: Home Assistant's Install.
    public static func commandTopic(node: String) -> String { stateTopic(node: node) + "/set" }

    /// `[mqtt]` or the node edited: the same run (what was asked stays asked); a new release
    /// topic's release is the one it brings.
    public mutating func reconfigure(node: String, releaseTopic: String, control: MQTTControl, authenticated: Bool) {
        if releaseTopic != self.releaseTopic { release = nil; releaseProblem = nil }
        self.node = node; self.releaseTopic = releaseTopic; self.control = control; self.authenticated = authenticated
    }

    /// Home Assistant's Install can work: an A/B card whose monitor takes changes from an
    /// authenticated broker. Only then does the entity get a command topic.
    public var installAvailable: Bool {
        guard case .ab = capability else { return false }
        return control != .off && authenticated
    }

    public var updater: UpdaterState? { if case .ab(let s) = capability { s } else { nil } }

    /// The booted slot's version, else the monitor's own.
    public var installedVersion: String { updater?.installedVersion ?? monitorVersion }

    /// The release topic, always (the latest version is shown whatever the card can do); the
    /// command topic with `[mqtt] control` on.
    public var filters: [String] {
        [releaseTopic, FleetRollout.reportFilter(releaseTopic: releaseTopic)] + (control != .off ? [Self.commandTopic(node: node)] : [])
    }

    /// QoS 1: the broker's retained release and an Install are not lost to a dropped packet.
    public func subscribe(packetID: UInt16) -> MQTTSubscribe? {
        try? MQTTSubscribe(packetID: packetID, subscriptions: filters.map { MQTTSubscription($0, qos: .atLeastOnce) })
    }

    public func handles(_ topic: String) -> Bool {
        filters.contains(topic) || FleetRollout.reportNode(topic: topic, releaseTopic: releaseTopic) != nil
    }

    /// `<release_topic>/rolled-back/<node>`, this card's report while its updater says it rolled
    /// the fleet's version back, retained; nil otherwise (nothing published).
    public var rollbackReport: (topic: String, payload: String)? {
        guard let s = updater, s.outcome == .rolledBack, let v = s.outcomeVersion, FleetRelease.isVersion(v) else { return nil }
        return (FleetRollout.reportTopic(releaseTopic: releaseTopic, node: node), FleetRollout.report(version: v, time: s.time ?? 0))
    }

    /// A message on one of `filters`.
    public mutating func received(topic: String, payload: [UInt8], retained: Bool, nowS: Int64) -> Decision {
        if topic == releaseTopic { return releaseReceived(payload, nowS: nowS) }
        if let reporter = FleetRollout.reportNode(topic: topic, releaseTopic: releaseTopic) {
            rollbacks.received(node: reporter, payload: payload)
            return .nothing
        }
        guard control != .off, topic == Self.commandTopic(node: node) else { return .ignore("\(topic): not an update topic") }
        // A retained Install would install again at every connection.
        if retained { return .ignore("\(topic): a retained Install (pressed once, not at every connection)") }
        guard payload.elementsEqual(Self.installPayload.utf8) else {
            return .ignore("\(topic): \"\(String(decoding: payload.prefix(64), as: UTF8.self))\" is not \"\(Self.installPayload)\"")
        }
        return decide(.homeAssistant, nowS: nowS)
    }

    /// The state file read again (or the card's capability found): a fleet install the card
    /// could not take before may be taken now.
    public mutating func updaterChanged(nowS: Int64) -> Decision {
        guard release?.install == true else { return .nothing }
        return decide(.fleet, nowS: nowS)
    }

    /// Called at each refresh: the fleet's release asked again once the back-off after a failed
    /// download is over.
    public mutating func retryDue(nowS: Int64) -> Decision {
        guard let r = release, r.install, let s = updater, s.outcome == .downloadFailed, s.outcomeVersion == r.version,
              nowS >= (s.time ?? 0) + retryDelayS() else { return .nothing }
        return decide(.fleet, nowS: nowS)
    }

    /// The wait after the n-th failed download in a row: 5 minutes, doubling, at most 6 hours.
    public static func retryDelayS(failures n: Int) -> Int64 { min(300 << Int64(min(max(n - 1, 0), 10)), 6 * 3600) }

    private mutating func retryDelayS() -> Int64 {
        if let s = updater, s.outcome == .downloadFailed, s.outcomeKey != downloadFailures.lastKey {
            downloadFailures = (downloadFailures.count + 1, s.outcomeKey)
        } else if let s = updater, s.outcome != .downloadFailed, s.outcome != nil, s.outcome != UpdaterState.Outcome.none {
            downloadFailures = (0, "")
        }
        return Self.retryDelayS(failures: downloadFailures.count)
    }

    private mutating func releaseReceived(_ payload: [UInt8], nowS: Int64) -> Decision {
        // An empty message is how a retained one is cleared: no release offered now.
        guard !payload.isEmpty else {
            release = nil; releaseProblem = nil
            return .ignore("\(releaseTopic): the release was withdrawn (an empty message)")
        }
        switch FleetRelease.parse(payload) {
        case .failure(let e):
            release = nil; releaseProblem = e.description
            return .ignore("\(releaseTopic): \(e)")
        case .success(let r):
            release = r; releaseProblem = nil
            return r.install ? decide(.fleet, nowS: nowS) : .nothing
        }
    }

    /// Whether to ask for the release now, for Home Assistant's Install or the fleet's `install`.
    private mutating func decide(_ origin: UpdateRequest.Origin, nowS: Int64) -> Decision {
        let fleet = origin == .fleet
        let which = release.map { (fleet ? "the fleet's " : "") + $0.version } ?? "an update"
        if fleet, let r = release, r.version == installedVersion { return .nothing }
        guard case .ab(let state) = capability else {
            return refuse(which + ": " + (capability == .needsReflash ? Self.reflashWords : Self.packageWords), nowS: nowS)
        }
        guard control != .off else { return refuse("\(which): [mqtt] control is off on this card", nowS: nowS) }
        if fleet && control != .fleet {
            return refuse("\(which): [mqtt] control is \"\(control.rawValue)\"; installs asked by the release topic need \"fleet\"", nowS: nowS)
        }
        guard authenticated else {
            return refuse("\(which): the broker does not authenticate who publishes (no mqtt.username and password_file, "
                          + "no client certificate)", nowS: nowS)
        }
        guard let r = release else {
            return refuse("no release is known: nothing valid on \(releaseTopic)" + (releaseProblem.map { " (\($0))" } ?? ""), nowS: nowS)
        }
        guard r.version != installedVersion else { return refuse("\(r.version) is installed already", nowS: nowS) }
        // Issue 49: a validly signed older release (a replay of one with a known hole) is not an
        // update; the owner says so in the message for a deliberate downgrade. Root checks the
        // bundle's own version again.
        if ReleaseVersion.isOlder(r.version, than: installedVersion) && !r.downgrade {
            return refuse("\(r.version) is older than the installed \(installedVersion): a downgrade needs \"downgrade\": true "
                          + "in the release message", nowS: nowS)
        }
        // The fleet's release waits for the updater to be idle again (its state file's next change
        // decides again), said nowhere: it may well be this very release being installed.
        guard state.isIdle else {
            return fleet ? .nothing : refuse("\(which): an update is under way (\(state.phaseWord ?? "busy"))", nowS: nowS)
        }
        // The fleet never tries again what failed here: a rolled-back release would otherwise
        // boot, fail and roll back forever. A person's Install does.
        if fleet, state.outcomeVersion == r.version, let o = state.outcome, o == .refused || o == .rolledBack || o == .failed {
            return refuse("\(which): \(o == .rolledBack ? "rolled back" : o.rawValue) on this card before; Install in Home Assistant "
                          + "tries it again", nowS: nowS)
        }
        // The fleet's brake and waves (issue 49), after this card's own history: a card that
        // rolled the release back says so first.
        if fleet {
            if let why = rollbacks.halted(r) { return refuse(why, nowS: nowS) }
            guard FleetRollout.inWave(node: node, release: r) else {
                return .ignore("\(r.version): rolled out to \(r.rollout) % of the fleet; this card's wave "
                               + "(\(FleetRollout.bucket(node: node, version: r.version))) waits for a wider rollout")
            }
        }
        // A failed download is not a refusal (issue 49): asked again after a back-off. An
        // interrupted install (a power cut) is asked again at once, once per interruption.
        if fleet, state.outcome == .downloadFailed, state.outcomeVersion == r.version {
            let due = (state.time ?? 0) + retryDelayS()
            if nowS < due { return .ignore("\(r.version): the download failed; asked again in \(due - nowS) s") }
        }
        if let a = asked, a.version == r.version, a.url == r.url, a.outcomeKey == state.outcomeKey {
            return .ignore("\(r.version) was asked of the updater already; waiting for its outcome")
        }
        return .request(UpdateRequest(release: r, origin: origin, time: nowS))
    }

    static let packageWords = "this card is a package install, updated with apt (sudo apt upgrade)"
    static let reflashWords = "this card's image predates A/B updates: reflash it once to get them"

    /// A refusal, kept as the note (not renewed while it says the same: its time stays).
    private mutating func refuse(_ why: String, nowS: Int64) -> Decision {
        let text = "refused by the monitor: " + why
        if note?.text != text { note = (text, nowS) }
        return .refuse(why)
    }

    /// The request is in the updater's directory.
    public mutating func requestWritten(_ r: UpdateRequest) {
        asked = (r.release.version, r.release.url, updater?.outcomeKey ?? "")
        note = ("asked the updater for \(r.release.version) (\(r.origin == .fleet ? "the fleet's release" : "Home Assistant"))", r.time)
    }

    /// The request could not be written (`why`: the error).
    public mutating func requestFailed(_ r: UpdateRequest, why: String) {
        note = ("not asked: cannot hand \(r.release.version) to the updater (\(why))", r.time)
    }

    /// The last outcome in words: the updater's, or the monitor's own note when newer; nil
    /// when there is neither.
    public var outcomeText: String? {
        let u = updater
        if let note, !(u?.outcomeText != nil && (u?.time ?? 0) >= note.time) { return note.text }
        return u?.outcomeText
    }
}
