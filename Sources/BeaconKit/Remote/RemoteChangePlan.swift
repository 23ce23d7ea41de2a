// Issue 38: the settings held for one write of config.toml, judged against the file's text as it
// is now. Pure: the runner reads the file, hands its bytes here, and writes `edited` (if any).

/// A setting asked from afar and not yet written: the newest value asked for it wins.
public struct HeldSetting: Equatable, Sendable {
    public var setting: RemoteSetting
    /// The value as received ("-40", "ON").
    public var value: String
    public var origin: String
    /// How many requests for this setting it stands for (the older ones superseded by it).
    public var requests: Int

    public init(setting: RemoteSetting, value: String, origin: String, requests: Int = 1) {
        self.setting = setting; self.value = value; self.origin = origin; self.requests = requests
    }

    public var summary: String { RemoteRequest(.set(setting, value), origin: origin).summary }
}

/// What became of one held setting.
public enum SettingOutcome: Equatable, Sendable {
    /// The file changes: written with the others of the plan.
    case changes
    /// The file already says so (the same value, or the default where the key is absent):
    /// nothing to write for it.
    case alreadySo
    /// Refused: `check`'s message (FILE:LINE:COL ...) or why the edit cannot be made.
    case refused(String)
}

public struct RemoteChangePlan: Equatable, Sendable {
    public var outcomes: [(HeldSetting, SettingOutcome)]
    /// The new file, when any setting changes it; nil: nothing to write.
    public var edited: [UInt8]?

    public static func == (a: RemoteChangePlan, b: RemoteChangePlan) -> Bool {
        a.edited == b.edited && a.outcomes.count == b.outcomes.count
            && zip(a.outcomes, b.outcomes).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
    }

    /// Every setting refused for one reason (config.toml could not be read).
    public static func refusing(_ settings: [HeldSetting], _ message: String) -> RemoteChangePlan {
        RemoteChangePlan(outcomes: settings.map { ($0, .refused(message)) }, edited: nil)
    }

    /// Each setting in turn, on the text the ones before it left: edited as a person would edit
    /// it (`ConfigTextEdit`), then loaded exactly as the daemon loads the file. A setting whose
    /// result the daemon would refuse is refused alone; one that leaves the loaded config as it
    /// was (`advertising = true` where the key is absent) adds nothing to the text.
    public static func make(_ settings: [HeldSetting], config source: [UInt8], path: String) -> RemoteChangePlan {
        var text = source
        var current: BeaconConfig?
        switch ConfigFile.parse(source, path: path) {
        case .success(let c): current = c
        case .failure: current = nil   // each edit below is refused with the file's own diagnostic
        }
        var outcomes: [(HeldSetting, SettingOutcome)] = []
        for held in settings {
            let outcome: SettingOutcome
            switch judge(held, text: text, current: current, path: path) {
            case .refused(let message): outcome = .refused(message)
            case .alreadySo: outcome = .alreadySo
            case .changes(let edited, let config):
                text = edited
                current = config
                outcome = .changes
            }
            outcomes.append((held, outcome))
        }
        return RemoteChangePlan(outcomes: outcomes, edited: text == source ? nil : text)
    }

    private enum Judgement {
        case changes([UInt8], BeaconConfig)
        case alreadySo
        case refused(String)
    }

    /// The edited text and its config, or that the config would not change, or why not.
    private static func judge(_ held: HeldSetting, text: [UInt8], current: BeaconConfig?, path: String) -> Judgement {
        let literal: String
        switch held.setting.literal(held.value) {
        case .failure(let e): return .refused(e.description)
        case .success(let l): literal = l
        }
        let (table, key, _) = held.setting.configKey
        let edited: [UInt8]
        switch ConfigTextEdit.setting(table: table, key: key, literal: literal, in: text) {
        case .failure(.doesNotParse):
            // The file on disk is refused already: say where, as `check` would.
            if case .failure(let d) = ConfigFile.parse(text, path: path) { return .refused(d.description) }
            return .refused("\(path): \(ConfigTextEditError.doesNotParse)")
        case .failure(let e): return .refused("\(path): \(e)")
        case .success(let b): edited = b
        }
        switch ConfigFile.parse(edited, path: path) {
        case .failure(let d): return .refused(d.description)
        case .success(let config):
            if let current, config == current { return .alreadySo }
            return .changes(edited, config)
        }
    }
}
