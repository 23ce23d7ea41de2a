/// Learning the controller before an arm: the adapter brought up (taken down first for a power
/// cycle, so the kernel re-runs the controller's setup), its version, LE features and number of
/// advertising sets read, and once per session the sets a previous process left cleared. Each
/// answer asks for the next thing or ends with what the controller can do, or why not.
struct ControllerBringUp {
    enum Stage: Equatable {
        case poweringDown, poweringUp, readingVersion
        case readingFeatures(LocalVersionReply)
        case readingSets(ControllerInfo)
        case clearingPrevious(ControllerInfo)
    }

    /// Where it is; nil when not bringing up.
    private(set) var stage: Stage?
    /// Sets of a previous process were cleared (once per session, at its first arm).
    private(set) var clearedPrevious = false

    enum Next {
        case power(up: Bool)
        case send([CommandSteps.Step])
        /// What the controller can do; `clearedSets`: every set on it was just cleared.
        case ready(ControllerInfo, clearedSets: Bool)
        case failed(ArmFailure)
    }

    mutating func start(powerCycle: Bool) -> Next {
        stage = powerCycle ? .poweringDown : .poweringUp
        return .power(up: !powerCycle)
    }

    mutating func stop() { stage = nil }

    /// HCIDEVDOWN or HCIDEVUP returned `error` (nil: done). A bring-up already in progress (of an
    /// abandoned arm) counts as done; a failed take-down does not stop the bring-up.
    mutating func powered(_ error: Errno?) -> Next? {
        switch stage {
        case .poweringDown?:
            stage = .poweringUp
            return .power(up: true)
        case .poweringUp?:
            if let error, error != .alreadyInProgress { return end(.failed(ArmFailure(error, bringingUp: true))) }
            stage = .readingVersion
            return .send([.send(.fixed(ReadLocalVersion()), .init())])
        default:
            return nil
        }
    }

    /// The commands asked for ended: `failure` (nil: all done), `reply`: the last one's, decoded.
    mutating func stepsEnded(_ failure: HCICommandFailure?, reply: (any HCIReply)?) -> Next? {
        switch stage {
        case .readingVersion?:
            if let failure { return end(.failed(ArmFailure(failure))) }
            guard let v = reply as? LocalVersionReply else { return end(.failed(ArmFailure(.shortReply(.readLocalVersion)))) }
            stage = .readingFeatures(v)
            return .send([.send(.fixed(LEReadLocalSupportedFeatures()), .init())])
        case .readingFeatures(let v)?:
            if let failure { return end(.failed(ArmFailure(failure))) }
            guard let f = reply as? LEFeaturesReply else { return end(.failed(ArmFailure(.shortReply(.leReadLocalFeatures)))) }
            let i = ControllerInfo(hciVersion: v.hciVersion, manufacturer: v.manufacturer, leFeatures: f.bits)
            guard i.hasExtendedAdvertising else { return end(.ready(i, clearedSets: false)) }
            stage = .readingSets(i)
            return .send([.send(.fixed(LEReadNumberOfSupportedAdvertisingSets()), .init())])
        case .readingSets(var i)?:
            // The only reply a failure or a short one may miss: the count is for the status and the
            // log, and the sets are tried whatever it says.
            if failure == nil, let sets = reply as? AdvertisingSetCountReply { i.advertisingSets = sets.count }
            // Once per session, before the first arm: sets a previous process left (SIGKILL, a
            // watchdog abort, a config with more frames) are cleared, so none stays beside ours.
            guard !clearedPrevious else { return end(.ready(i, clearedSets: false)) }
            stage = .clearingPrevious(i)
            let quiet = CommandSteps.Handling(tolerating: [.commandDisallowed, .unknownCommand, .unknownAdvertisingIdentifier])
            return .send([.send(.fixed(LEDisableAllExtendedAdvertising()), quiet), .send(.fixed(LEClearAdvertisingSets()), quiet)])
        case .clearingPrevious(let i)?:
            // Not cleared: the next arm asks again; this one goes on.
            if failure == nil { clearedPrevious = true }
            return end(.ready(i, clearedSets: failure == nil))
        default:
            return nil
        }
    }

    private mutating func end(_ next: Next) -> Next {
        stage = nil
        return next
    }
}
