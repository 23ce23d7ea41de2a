import BeaconKit

/// What keeps the frames on air once armed: the rotation of frames that share a slot, fresh
/// telemetry, the health probe, and taking everything off air at the end.
extension Advertiser {
    /// The next frame of the rotating slot (every `rotation_ms`).
    public func rotate(_ done: @escaping Done) {
        let done = later(done)
        // A probe in flight is no reason to skip a turn: the channel queues the switch behind it.
        guard let plan, plan.rotates, let c = channel else { return done(nil) }
        let s = plan.slotCount - 1, r = plan.frames(inSlot: s)
        let from = r.lowerBound + turn
        turn = (turn + 1) % r.count
        let to = r.lowerBound + turn
        guard isConnectable(frame: from) != isConnectable(frame: to) else {
            return send(frame: to, slot: s, plan, c, generation) { f in done(f.map(ArmFailure.init)) }
        }
        // To or from the GATT identity's turn: the PDU type changes, which only parameters set
        // while advertising is off can do.
        let gen = generation, connectable = isConnectable(frame: to), ms = effectiveIntervalMs
        let quiet: [HCIStatus] = [.commandDisallowed]
        let h = plan.handle(ofSlot: s)
        let steps: [Step] = [
            run(h.map { LESetExtendedAdvertisingEnable(false, handle: $0) } ?? LESetAdvertiseEnable(false), c, gen, tolerating: quiet),
            run(h.map { LESetExtendedAdvertisingParameters(handle: $0, intervalMs: ms, txPowerDbm: txPowerDbm, connectable: connectable, ownAddress: ownAddress) }
                ?? LESetAdvertisingParameters(intervalMs: ms, connectable: connectable, ownAddress: ownAddress), c, gen),
            { [unowned self] next in send(frame: to, slot: s, plan, c, gen, next) },
            run(h.map { LESetExtendedAdvertisingEnable(true, handle: $0) } ?? LESetAdvertiseEnable(true), c, gen, tolerating: quiet),
        ]
        chain(steps) { f in done(f.map(ArmFailure.init)) }
    }

    /// Re-sends the frames with telemetry that have a slot of their own (fresh uptime and count).
    public func refreshTelemetry(_ done: @escaping Done) {
        let done = later(done)
        guard let plan, let c = channel else { return done(nil) }
        let gen = generation
        chain(standingTelemetrySlots.map { s in { [unowned self] next in send(frame: s, slot: s, plan, c, gen, next) } }) { f in
            done(f.map(ArmFailure.init))
        }
    }

    /// The health probe (SPEC §5): proves advertising is on, not only that the controller
    /// answers, by sending the same data and enable again (an enable when already enabled may be
    /// answered Command Disallowed: not a failure).
    public func probe(_ done: @escaping Done) {
        let done = later(done)
        guard let c = channel, let plan else { return done(.missing) }
        let gen = generation
        var steps: [Step] = []
        for s in 0..<plan.slotCount where s < slotData.count {
            // The slot's data as it is when the step runs: a frame switch queued meanwhile wins.
            let h = plan.handle(ofSlot: s)
            steps.append { [unowned self] next in
                let data = slotData[s]
                let command: any HCICommand = h.map { LESetExtendedAdvertisingData(handle: $0, data: data) } ?? LESetAdvertisingData(data: data)
                run(command, c, gen)(next)
            }
            if let h {
                steps.append(run(LESetExtendedAdvertisingEnable(true, handle: h), c, gen, tolerating: [.commandDisallowed]))
            } else {
                steps.append(run(LESetAdvertiseEnable(true), c, gen, tolerating: [.commandDisallowed]))
            }
        }
        chain(steps) { f in done(f.map(ArmFailure.init)) }
    }

    /// Takes every frame off air and closes the channel: each set of ours (whatever the last plan
    /// said) is disabled and removed, legacy advertising disabled, each command with
    /// `commandTimeoutMs`; the whole within `deadlineMs`. Whatever was in flight is given up first,
    /// so a command a hung controller never answers cannot hold the sequence. `done` runs once,
    /// on a later turn, when the controller answered everything or the deadline passed.
    public func takeDown(commandTimeoutMs perCommand: Int64, deadlineMs: Int64, disconnecting links: [UInt16] = [],
                         _ done: @escaping (_ confirmed: Bool) -> Void) {
        abandon()
        guard let c = channel, !c.isClosed else {
            close()
            return loop.post { done(true) }
        }
        let handles = armedHandles.union(lastPlan?.handles ?? []).sorted(by: >)
        // Centrals connected to the GATT identity go too (through the kernel, see
        // ControllerAccess.disconnect): nothing of ours stays reachable.
        for h in links.sorted() {
            guard let l = self.links[h] else { continue }
            beforeDisconnect?(l.address)
            try? controller.disconnect(address: l.address, random: l.random)
        }
        var commands: [any HCICommand] = []
        for h in handles {
            commands.append(LESetExtendedAdvertisingEnable(false, handle: h))
            commands.append(LERemoveAdvertisingSet(handle: h))
        }
        if handles.isEmpty || legacyArmed { commands.append(LESetAdvertiseEnable(false)) }
        let overall = loop.makeTimer()
        var finished = false
        var failures = 0
        // Weak: a session abandoned for a successor may be gone before the deadline fires.
        let finish: (Bool) -> Void = { [weak self] confirmed in
            guard let self, !finished else { return }
            finished = true
            overall.cancel()
            if !confirmed && deadlineMs > 0 { log.warning("hci\(index): the controller did not confirm advertising off within \(deadlineMs) ms") }
            close()
            done(confirmed)
        }
        overall.schedule(afterMs: deadlineMs) { finish(false) }
        var left = commands.count
        for command in commands {
            c.send(command, timeoutMs: perCommand) { [unowned self] r in
                guard !finished else { return }
                switch r {
                case .success: break
                case .failure(.status(_, let st)) where [.commandDisallowed, .unknownAdvertisingIdentifier, .unknownCommand].contains(st): break
                case .failure(let f):
                    failures += 1
                    log.warning("hci\(index): could not take advertising off air: \(f)")
                }
                left -= 1
                if left == 0 { finish(failures == 0) }
            }
        }
    }
}
