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
        return prepare(powerCycle: scope == .powerCycle, now)
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
        guard case .bringingUp = work.stage, let stage = bringUp.stage else { return [] }
        let next = bringUp.powered(error)
        var a: [AdvertiserAction] = []
        if stage == .poweringDown {
            if let error { a.append(.log(.warning, "\(adapter) down: \(error)")) }
            // A controller taken down forgets its sets and advertising.
            ours.controllerForgot()
            controller.forget()
        } else if case .send? = next {
            if error == nil { controller.forget() }   // the kernel's setup reset it
            frames.randomAddress = randomAddress
            a.append(.event(.broughtUp))
        }
        return a + bringingUp(next, now)
    }

    mutating func prepare(powerCycle: Bool, _ now: Int64) -> [AdvertiserAction] {
        work.stage = .bringingUp
        let next = bringUp.start(powerCycle: powerCycle)
        guard powerCycle else { return bringingUp(next, now) }
        return [.log(.notice, "taking \(adapter) down and up: the kernel re-runs the controller's setup")] + bringingUp(next, now)
    }

    /// What the bring-up asks for next, done; once it ends, the frames are configured.
    mutating func bringingUp(_ next: ControllerBringUp.Next?, _ now: Int64) -> [AdvertiserAction] {
        switch next {
        case nil: return []
        case .power(let up)?: return [.power(up: up)]
        case .send(let list)?:
            steps.replace(with: list)
            return self.next(now)
        case .ready(let i, let clearedSets)?:
            info = i
            if clearedSets { ours.handles = [] }
            return configureNow(now)
        case .failed(let f)?: return finishArm(.failure(f), now)
        }
    }

    /// A stage's list ended: `failure` (nil: every step done), `reply`: the last command's, decoded.
    mutating func stageEnded(_ failure: HCICommandFailure?, reply: (any HCIReply)?, _ now: Int64) -> [AdvertiserAction] {
        switch work.stage {
        case .idle, .opening:
            return []
        case .bringingUp:
            return bringingUp(bringUp.stepsEnded(failure, reply: reply), now)
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
            steps.replace(with: slotSteps.changedSlots(plan, rotation: rotation, now: now))
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
        steps.replace(with: slotSteps.legacyArm(first: rotation.legacyStart(frameCount: p.frameCount), random: random))
        return next(now)
    }

    mutating func armExtended(_ now: Int64, fallback: Bool) -> [AdvertiserAction] {
        guard let info else { return finishArm(.failure(.missing), now) }
        let p = extendedPlan(info)
        let random = frames.chooseOwnAddress()
        work.stage = .extended(p, fallback: fallback)
        steps.replace(with: slotSteps.extendedArm(p, random: random))
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
