/// The arm: open, bring up, read what the controller can do, clear what a previous process left,
/// then extended commands where they bring something (a TX power, frames on air at once), else
/// legacy ones; each falls back on the other when the controller refuses it (SPEC §3).
extension AdvertiserProcedure {
    /// The channel `.openChannel` asked for is open (nil) or could not be opened.
    public mutating func channelOpened(_ error: Errno?, now: Int64) -> [AdvertiserAction] {
        guard case .opening = work.stage else { return [] }
        if let error { return finishArm(.failure(ArmFailure(error)), now) }
        channelOpen = true
        guard case .arm(_, _, let scope, _)? = work.operation else { return [] }
        return prepare(powerCycle: scope == .powerCycle)
    }

    /// The channel broke (the controller went away under it): the command in flight fails by itself.
    public mutating func channelLost(now: Int64) -> [AdvertiserAction] {
        channelOpen = false
        offAir(now)
        return []
    }

    /// HCIDEVUP/HCIDEVDOWN returned `error` (nil: done); `randomAddress`: the static random
    /// address to send from now (the address repair may have chosen one during the bring-up).
    public mutating func powered(_ error: Errno?, randomAddress: BluetoothAddress?, now: Int64) -> [AdvertiserAction] {
        switch work.stage {
        case .poweringDown:
            var a: [AdvertiserAction] = []
            if let error { a.append(.log(.warning, "\(adapter) down: \(error)")) }
            // A controller taken down forgets its sets and advertising.
            ours.controllerForgot()
            controller.forget()
            work.stage = .poweringUp
            return a + [.power(up: true)]
        case .poweringUp:
            if let error, error != .alreadyInProgress { return finishArm(.failure(ArmFailure(error, bringingUp: true)), now) }
            if error == nil { controller.forget() }   // the kernel's setup reset it
            frames.randomAddress = randomAddress
            work.stage = .readingVersion
            steps.list = [.send(.fixed(ReadLocalVersion()), .init())]
            return [.event(.broughtUp)] + next(now)
        default:
            return []
        }
    }

    mutating func prepare(powerCycle: Bool) -> [AdvertiserAction] {
        guard powerCycle else {
            work.stage = .poweringUp
            return [.power(up: true)]
        }
        work.stage = .poweringDown
        return [.log(.notice, "taking \(adapter) down and up: the kernel re-runs the controller's setup"), .power(up: false)]
    }

    /// A stage's list ended: `failure` (nil: every step done), `reply`: the last command's, decoded.
    mutating func stageEnded(_ failure: HCICommandFailure?, reply: (any HCIReply)?, _ now: Int64) -> [AdvertiserAction] {
        switch work.stage {
        case .idle, .opening, .poweringDown, .poweringUp:
            return []
        case .readingVersion:
            if let failure { return finishArm(.failure(ArmFailure(failure)), now) }
            guard let v = reply as? LocalVersionReply else { return finishArm(.failure(ArmFailure(.shortReply(.readLocalVersion))), now) }
            work.stage = .readingFeatures(v)
            steps.list = [.send(.fixed(LEReadLocalSupportedFeatures()), .init())]
            return next(now)
        case .readingFeatures(let v):
            if let failure { return finishArm(.failure(ArmFailure(failure)), now) }
            guard let f = reply as? LEFeaturesReply else { return finishArm(.failure(ArmFailure(.shortReply(.leReadLocalFeatures))), now) }
            let i = ControllerInfo(hciVersion: v.hciVersion, manufacturer: v.manufacturer, leFeatures: f.bits)
            guard i.hasExtendedAdvertising else {
                info = i
                return configureNow(now)
            }
            work.stage = .readingSets(i)
            steps.list = [.send(.fixed(LEReadNumberOfSupportedAdvertisingSets()), .init())]
            return next(now)
        case .readingSets(var i):
            // The only reply a failure or a short one may miss: the count is for the status and the
            // log, and the sets are tried whatever it says.
            if failure == nil, let sets = reply as? AdvertisingSetCountReply { i.advertisingSets = sets.count }
            info = i
            // Once per session, before the first arm: sets a previous process left (SIGKILL, a
            // watchdog abort, a config with more frames) are cleared, so none stays beside ours.
            guard !ours.clearedPrevious else { return configureNow(now) }
            let quiet = CommandSteps.Handling(tolerating: [.commandDisallowed, .unknownCommand, .unknownAdvertisingIdentifier])
            work.stage = .clearingPrevious
            steps.list = [.send(.fixed(LEDisableAllExtendedAdvertising()), quiet), .send(.fixed(LEClearAdvertisingSets()), quiet)]
            return next(now)
        case .clearingPrevious:
            if failure == nil {
                ours.clearedPrevious = true
                ours.handles = []
            }
            return configureNow(now)
        case .updatingSlots:
            guard failure != nil, let info else { return finishArm(.success(summary), now) }
            return configure(info, now)
        case .leaving(let toExtended):
            guard let info else { return finishArm(.failure(.missing), now) }
            return toExtended ? armExtended(now, fallback: true) : armLegacy(now, fallback: info.hasExtendedAdvertising)
        case .extended(let p, let fallback):
            guard let failure else { return finishArm(onAir(p, now), now) }
            if case .status(_, .commandDisallowed) = failure, fallback {
                // Controllers may refuse extended commands once legacy ones were used, until reset.
                let turns = frames.configured.count > 1 ? ", the frames in turn" : ""
                return [.log(.warning, "\(adapter) refuses extended advertising now; advertising with legacy commands\(turns), until the adapter restarts")]
                    + armLegacy(now, fallback: false)
            }
            return finishArm(.failure(ArmFailure(failure)), now)
        case .legacy(let p, let fallback):
            guard let failure else { return finishArm(onAir(p, now), now) }
            if case .status(_, .commandDisallowed) = failure, fallback {
                // The host has used extended advertising: legacy commands are now refused (SPEC §3).
                return [.log(.info, "legacy advertising commands refused on \(adapter); using extended commands with a legacy PDU")]
                    + armExtended(now, fallback: false)
            }
            return finishArm(.failure(ArmFailure(failure)), now)
        case .upkeep:
            return finishUpkeep(failure.map(ArmFailure.init), now)
        case .takingDown(let failures, _):
            return finishTakeDown(confirmed: failures == 0, now: now)
        }
    }

    mutating func configureNow(_ now: Int64) -> [AdvertiserAction] {
        guard channelOpen, let info, case .arm(_, _, let scope, let sameFrames)? = work.operation else { return finishArm(.failure(.missing), now) }
        if scope == .data, sameFrames, let plan = ours.plan {
            work.stage = .updatingSlots
            steps.list = []
            for s in 0..<plan.slotCount {
                let r = plan.frames(inSlot: s)
                let f = rotation.frame(in: r)
                let h = plan.handle(ofSlot: s)
                if controller.slot(h)?.data == frames.payload(ofFrame: f, now: now),
                   frames.configured[f].scanResponse.isEmpty || controller.slot(h)?.scanResponse == frames.configured[f].scanResponse { continue }
                steps.list += frameSteps(f, h, resend: false)
            }
            return next(now)
        }
        return configure(info, now)
    }

    /// Chooses legacy or extended, then takes what the new plan does not use off air first.
    mutating func configure(_ info: ControllerInfo, _ now: Int64) -> [AdvertiserAction] {
        guard case .arm(_, let config, _, _)? = work.operation else { return [] }
        var a: [AdvertiserAction] = []
        let power = frames.takeTxPower(config, info)
        if let warning = power.warning { a.append(.log(.warning, warning)) }
        let wantsExtended = info.hasExtendedAdvertising
            && (power.needsSets || frames.configured.count > 1 || (frames.keepsFamily && ours.lastPlan?.handles != nil))
        work.stage = .leaving(toExtended: wantsExtended)
        steps.list = ours.leaveSteps(toSets: wantsExtended ? extendedPlan(info).handles ?? [] : nil)
        if !steps.list.isEmpty { ours.plan = nil }
        return a + next(now)
    }

    func extendedPlan(_ info: ControllerInfo) -> AirPlan {
        AirPlan(handles: AirPlan.handles(frames: frames.configured.count, supportedSets: info.advertisingSets), frameCount: frames.configured.count)
    }

    mutating func armLegacy(_ now: Int64, fallback: Bool) -> [AdvertiserAction] {
        let p = AirPlan(handles: nil, frameCount: frames.configured.count)
        let random = frames.chooseOwnAddress()
        work.stage = .legacy(p, fallback: fallback)
        steps.list = [.send(.disable(handle: nil), .init(tolerating: [.commandDisallowed]))]
        // Allowed only while advertising is off, hence after the disable.
        if let random { steps.list.append(.send(.legacyRandomAddress(random), .init())) }
        let first = rotation.legacyStart(frameCount: frames.configured.count)
        steps.list += [.send(.parameters(handle: nil, frame: first, configured: true), .init()), .mark(.firstTurn(first))]
        steps.list += frameSteps(first, nil)
        steps.list += [.mark(.legacyArmed), .send(.enable(handle: nil), .init(linkAware: true))]
        return next(now)
    }

    mutating func armExtended(_ now: Int64, fallback: Bool) -> [AdvertiserAction] {
        guard let info else { return finishArm(.failure(.missing), now) }
        let p = extendedPlan(info)
        let random = frames.chooseOwnAddress()
        work.stage = .extended(p, fallback: fallback)
        steps.list = [.mark(.firstTurn(0))]
        for s in 0..<p.slotCount {
            guard let h = p.handle(ofSlot: s) else { continue }
            let f = p.frames(inSlot: s).lowerBound
            steps.list += [.mark(.armedHandle(h)),
                      .send(.disable(handle: h), .init(tolerating: [.commandDisallowed, .unknownAdvertisingIdentifier])),
                      .send(.parameters(handle: h, frame: f, configured: true), .init())]
            // A set's random address: after its parameters (which create the set).
            if let random { steps.list.append(.send(.fixed(LESetAdvertisingSetRandomAddress(handle: h, random)), .init())) }
            steps.list += frameSteps(f, h)
            steps.list.append(.send(.enable(handle: h), .init(linkAware: true)))
        }
        return next(now)
    }

    /// Records plan `p` on air.
    mutating func onAir(_ p: AirPlan, _ now: Int64) -> Result<AirSummary, ArmFailure> {
        ours.onAir(p)
        for s in 0..<p.slotCount { frames.counter.enabled(slot: s, intervalMs: frames.effectiveIntervalMs, at: now) }
        return .success(summary)
    }

    mutating func finishArm(_ result: Result<AirSummary, ArmFailure>, _ now: Int64) -> [AdvertiserAction] {
        guard case .arm(let g, _, _, _)? = work.operation else { return [] }
        work.operation = nil
        work.stage = .idle
        steps.list = []
        if case .failure = result { offAir(now) }
        return [.event(.armed(generation: g, result))]
    }
}
