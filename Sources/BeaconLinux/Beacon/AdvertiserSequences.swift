import BeaconKit

/// The advertiser's command sequences, written as steps that each go on when the controller
/// answered: every completion of an older sequence (`gen` no longer current) is dropped.
extension Advertiser {
    typealias StepDone = (HCICommandFailure?) -> Void
    typealias Step = (@escaping StepDone) -> Void

    /// Runs `command`; a status in `tolerating` counts as success (e.g. Command Disallowed to
    /// "disable" when already disabled).
    func run(_ command: any HCICommand, _ c: HCICommandChannel, _ gen: Int, tolerating: [HCIStatus] = []) -> Step {
        { [unowned self] next in
            execute(command, c, gen) { [log] r in next(r.failure(tolerating: tolerating, log: log)) }
        }
    }

    func execute(_ command: any HCICommand, _ c: HCICommandChannel, _ gen: Int,
                 _ done: @escaping (Result<[UInt8], HCICommandFailure>) -> Void) {
        c.send(command, timeoutMs: commandTimeoutMs) { [unowned self] r in
            if gen == generation { done(r) }
        }
    }

    /// `execute`, with the command's reply decoded.
    func execute<C: HCICommand>(_ command: C, _ c: HCICommandChannel, _ gen: Int,
                                _ done: @escaping (Result<C.Reply, HCICommandFailure>) -> Void) {
        c.send(command, timeoutMs: commandTimeoutMs, reply: { [unowned self] r in
            if gen == generation { done(r) }
        })
    }

    /// The steps in order; stops at the first failure.
    func chain(_ steps: [Step], _ done: @escaping StepDone) {
        guard let first = steps.first else { return done(nil) }
        first { [unowned self] f in
            if let f { return done(f) }
            chain(Array(steps.dropFirst()), done)
        }
    }

    /// Frame `f`'s bytes as they go on air now (a TLM frame with fresh telemetry).
    func payload(ofFrame f: Int) -> [UInt8] {
        let frame = frames[f].frame
        return frame.advertisingData(frame.carriesTelemetry ? telemetry(counter.count(at: loop.now)) : .zero)
    }

    /// Sends frame `f`'s payload to slot `s`.
    func send(frame f: Int, slot s: Int, _ plan: AirPlan, _ c: HCICommandChannel, _ gen: Int, _ done: @escaping StepDone) {
        let data = payload(ofFrame: f)
        let h = plan.handle(ofSlot: s)
        let command: any HCICommand = h.map { LESetExtendedAdvertisingData(handle: $0, data: data) } ?? LESetAdvertisingData(data: data)
        var steps = [run(command, c, gen)]
        let response = frames[f].frame.scanResponseData
        if frames[f].frame.isConnectable {
            steps.append(run(h.map { LESetExtendedScanResponseData(handle: $0, data: response) } ?? LESetScanResponseData(data: response), c, gen))
        }
        chain(steps) { [unowned self] e in
            if e == nil {
                while slotData.count <= s { slotData.append([]) }
                slotData[s] = data
            }
            done(e)
        }
    }

    /// True when frame `f` goes on air connectable (ADV_IND: the GATT identity).
    func isConnectable(frame f: Int) -> Bool { f < frames.count && frames[f].frame.isConnectable }

    /// After an edit that changed frames' contents only: re-sends just the slots whose bytes changed.
    func updateChangedSlots(_ plan: AirPlan, _ c: HCICommandChannel, _ gen: Int, _ done: @escaping StepDone) {
        var steps: [Step] = []
        for s in 0..<plan.slotCount {
            let r = plan.frames(inSlot: s)
            let f = r.count > 1 ? r.lowerBound + turn % r.count : r.lowerBound
            let data = payload(ofFrame: f)
            if s < slotData.count, slotData[s] == data { continue }
            steps.append { [unowned self] next in send(frame: f, slot: s, plan, c, gen, next) }
        }
        chain(steps, done)
    }

    /// Extended commands where they bring something (a TX power, frames on air at once), else
    /// legacy ones; each falls back on the other when the controller refuses it (SPEC §3).
    func configure(_ config: BeaconConfig, _ c: HCICommandChannel, _ info: ControllerInfo, _ gen: Int, _ done: @escaping Done) {
        var wantsExtended = info.hasExtendedAdvertising && (frames.count > 1 || (keepsFamily && lastPlan?.handles != nil))
        if config.bluetooth.txPowerDbm != nil {
            if info.hasExtendedAdvertising {
                wantsExtended = true
            } else if !warnedTxPower {
                warnedTxPower = true
                log.warning("tx_power_dbm is ignored: \(config.bluetooth.adapter) has no LE extended advertising (\(info.versionName))")
            }
        }
        let handles = AirPlan.handles(frames: frames.count, supportedSets: info.advertisingSets)
        let extended = AirPlan(handles: handles, frameCount: frames.count)
        let legacy = AirPlan(handles: nil, frameCount: frames.count)
        let adapter = "hci\(index)"
        let armLegacyNow: () -> Void = { [unowned self] in
            armLegacy(config, c, legacy, gen) { [unowned self] f in
                switch f {
                case .none:
                    done(onAir(legacy))
                case .some(.status(_, .commandDisallowed)) where info.hasExtendedAdvertising && !wantsExtended:
                    // The host has used extended advertising: legacy commands are now refused (SPEC §3).
                    log.info("legacy advertising commands refused on \(adapter); using extended commands with a legacy PDU")
                    armExtended(config, c, extended, gen) { [unowned self] f in done(f.map(ArmFailure.init) ?? onAir(extended)) }
                case .some(let f):
                    plan = nil
                    done(ArmFailure(f))
                }
            }
        }
        leavePrevious(for: wantsExtended ? extended : legacy, c, gen) { [unowned self] in
            guard wantsExtended else { return armLegacyNow() }
            armExtended(config, c, extended, gen) { [unowned self] f in
                switch f {
                case .none: done(onAir(extended))
                case .some(.status(_, .commandDisallowed)):
                    // Controllers may refuse extended commands once legacy ones were used, until reset.
                    log.warning("\(adapter) refuses extended advertising now; advertising with legacy commands\(frames.count > 1 ? ", the frames in turn" : ""), until the adapter restarts")
                    armLegacyNow()
                case .some(let f):
                    plan = nil
                    done(ArmFailure(f))
                }
            }
        }
    }

    /// Records the plan on air; returns nil (no failure).
    private func onAir(_ p: AirPlan) -> ArmFailure? {
        plan = p
        lastPlan = p
        let now = loop.now
        for s in 0..<p.slotCount { counter.enabled(slot: s, intervalMs: effectiveIntervalMs, at: now) }
        return nil
    }

    /// Switching between legacy commands and sets, or to fewer or other sets: every set we
    /// configured on this controller and the new plan does not use is disabled and removed (not
    /// only those of the last plan: a failed arm forgets its plan, the sets stay), and legacy
    /// advertising is disabled when sets take over; else the old frames stay on air beside the new.
    private func leavePrevious(for next: AirPlan, _ c: HCICommandChannel, _ gen: Int, _ done: @escaping () -> Void) {
        let quiet: [HCIStatus] = [.commandDisallowed, .unknownAdvertisingIdentifier, .unknownCommand]
        var steps: [Step] = []
        for h in armedHandles.subtracting(next.handles ?? []).sorted(by: >) {
            // Asked twice when refused (a transient Controller Busy must not leave the frame on air).
            steps.append(twice(run(LESetExtendedAdvertisingEnable(false, handle: h), c, gen, tolerating: quiet)))
            // Forgotten only once the controller says it is gone: a set whose disable or
            // removal failed stays ours to take down (at the next arm, a stop, a move).
            steps.append(then(twice(run(LERemoveAdvertisingSet(handle: h), c, gen, tolerating: [.unknownAdvertisingIdentifier]))) { [unowned self] in
                armedHandles.remove(h)
            })
        }
        if legacyArmed && next.handles != nil {
            steps.append(then(twice(run(LESetAdvertiseEnable(false), c, gen, tolerating: [.commandDisallowed]))) { [unowned self] in
                legacyArmed = false
            })
        }
        guard !steps.isEmpty else { return done() }
        plan = nil
        // Best effort: whatever the controller says, go on with the new setup.
        chain(steps.map { step in { next in step { _ in next(nil) } } }) { _ in done() }
    }

    private func armLegacy(_ config: BeaconConfig, _ c: HCICommandChannel, _ plan: AirPlan, _ gen: Int, _ done: @escaping StepDone) {
        let random = chooseOwnAddress()
        chain([
            run(LESetAdvertiseEnable(false), c, gen, tolerating: [.commandDisallowed]),
            // Allowed only while advertising is off, hence after the disable.
            random.map { setRandomAddress($0, c, gen) } ?? { next in next(nil) },
            setInterval(config, c, gen) { [unowned self] in
                LESetAdvertisingParameters(intervalMs: $0, connectable: isConnectable(frame: 0), ownAddress: ownAddress)
            },
            { [unowned self] next in slotData = []; turn = 0; send(frame: 0, slot: 0, plan, c, gen, next) },
            // Some controllers answer Command Disallowed when already enabled: not a failure.
            { [unowned self] next in legacyArmed = true; next(nil) },
            { [unowned self] next in run(LESetAdvertiseEnable(true), c, gen, tolerating: enableTolerance)(next) },
        ], done)
    }

    /// The static random address this arm sends from (nil: the public one), noted in `ownAddress`.
    private func chooseOwnAddress() -> BluetoothAddress? {
        let random = controller.advertisingAddress
        ownAddress = random == nil ? .public : .random
        return random
    }

    /// LE Set Random Address for legacy advertising. The controller also refuses it while it scans
    /// or initiates (another program's scan, `altbeacond monitor` on the same adapter): the frames
    /// then go out from the public address rather than not at all, said once; each arm asks again.
    private func setRandomAddress(_ address: BluetoothAddress, _ c: HCICommandChannel, _ gen: Int) -> Step {
        { [unowned self] next in
            run(LESetRandomAddress(address), c, gen)({ [unowned self] f in
                guard case .status(_, let st)? = f else { return next(f) }
                ownAddress = .public
                if !warnedRandomAddress {
                    warnedRandomAddress = true
                    log.warning("hci\(index) refused its static random address \(address) (\(st)): it is scanning or connecting for another program; advertising from its public address until it allows it")
                }
                next(nil)
            })
        }
    }

    private func armExtended(_ config: BeaconConfig, _ c: HCICommandChannel, _ plan: AirPlan, _ gen: Int, _ done: @escaping StepDone) {
        let quiet: [HCIStatus] = [.commandDisallowed, .unknownAdvertisingIdentifier]
        let tx = config.bluetooth.txPowerDbm
        txPowerDbm = tx
        let random = chooseOwnAddress()
        var steps: [Step] = [{ [unowned self] next in slotData = []; turn = 0; next(nil) }]
        for s in 0..<plan.slotCount {
            guard let h = plan.handle(ofSlot: s) else { continue }
            steps += [
                { [unowned self] next in armedHandles.insert(h); next(nil) },
                run(LESetExtendedAdvertisingEnable(false, handle: h), c, gen, tolerating: quiet),
                setInterval(config, c, gen) { [unowned self] in
                    LESetExtendedAdvertisingParameters(handle: h, intervalMs: $0, txPowerDbm: tx,
                                                       connectable: isConnectable(frame: plan.frames(inSlot: s).lowerBound),
                                                       ownAddress: ownAddress)
                },
                // A set's random address: after its parameters (which create the set).
                random.map { run(LESetAdvertisingSetRandomAddress(handle: h, $0), c, gen) } ?? { next in next(nil) },
                { [unowned self] next in send(frame: plan.frames(inSlot: s).lowerBound, slot: s, plan, c, gen, next) },
                { [unowned self] next in run(LESetExtendedAdvertisingEnable(true, handle: h), c, gen, tolerating: enableTolerance)(next) },
            ]
        }
        chain(steps, done)
    }

    /// What an arm's enable may be answered without failing: Command Disallowed means "already
    /// enabled" on some controllers, but not while a central is connected. The parameters were
    /// just accepted, which they are only while advertising is off, so it is a refusal to
    /// advertise beside the link: the policy then waits for the disconnection (phase connected)
    /// instead of believing the frames are on air.
    var enableTolerance: [HCIStatus] { links.isEmpty ? [.commandDisallowed] : [] }

    /// Sets parameters at the configured interval; Bluetooth 4.x controllers refuse
    /// non-connectable intervals under 100 ms, so fall back to 100 ms and say so.
    private func setInterval(_ config: BeaconConfig, _ c: HCICommandChannel, _ gen: Int,
                             _ make: @escaping (UInt16) -> any HCICommand) -> Step {
        { [unowned self] next in
            let wanted = config.bluetooth.intervalMs
            run(make(wanted), c, gen)({ [unowned self] f in
                if case .status(_, let st)? = f, wanted < AdvertisingInterval.legacyNonConnectableMinimumMs,
                   [.invalidParameters, .unsupportedFeature, HCIStatus(rawValue: 0x1e), HCIStatus(rawValue: 0x20)].contains(st) {
                    let fallback = AdvertisingInterval.legacyNonConnectableMinimumMs
                    if effectiveIntervalMs != fallback {
                        log.warning("\(config.bluetooth.adapter) refused a \(wanted) ms interval (\(st)); advertising every \(fallback) ms instead")
                    }
                    effectiveIntervalMs = fallback
                    return run(make(fallback), c, gen)(next)
                }
                if f == nil { effectiveIntervalMs = wanted }
                next(f)
            })
        }
    }
}

extension Advertiser {
    /// Runs `step` again when it failed (not when it timed out: that already waited long).
    func twice(_ step: @escaping Step) -> Step {
        { next in step { f in
            guard let f, case .status = f else { return next(f) }
            step(next)
        } }
    }

    /// Does `action` only when the step succeeded, then passes its outcome on.
    func then(_ step: @escaping Step, _ action: @escaping () -> Void) -> Step {
        { next in step { f in
            if f == nil { action() }
            next(f)
        } }
    }
}
