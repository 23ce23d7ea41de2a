/// What keeps the frames on air once armed: the rotation of frames that share a slot, fresh
/// telemetry, the health probe, taking everything off air at the end, and the links of centrals
/// connected to the GATT identity.
extension AdvertiserProcedure {
    /// Starts `op` now, or after the operation in flight (a rotation behind a probe: the
    /// controller answers one command at a time anyway).
    mutating func begin(_ op: Operation, _ now: Int64) -> [AdvertiserAction] {
        guard work.operation == nil else {
            work.waiting.append(op)
            return []
        }
        work.operation = op
        work.stage = .upkeep
        work.steps = []
        switch op {
        case .rotate:
            guard let plan, plan.rotates, channelOpen else { return finishUpkeep(nil, now) }
            let s = plan.slotCount - 1, r = plan.frames(inSlot: s), h = plan.handle(ofSlot: s)
            let from = r.lowerBound + rotation.turn
            rotation.turn = (rotation.turn + 1) % r.count
            let to = r.lowerBound + rotation.turn
            guard pdu(ofFrame: from) != pdu(ofFrame: to) else {
                work.steps = frameSteps(to, h, resend: false)
                break
            }
            // To or from the GATT identity's turn: the PDU type changes, which only parameters set
            // while advertising is off can do (and a set's scan response only once it is scannable).
            let quiet = Handling(tolerating: [.commandDisallowed])
            work.steps = [.send(.disable(handle: h), quiet), .send(.parameters(handle: h, frame: to, configured: false), Handling())]
                + frameSteps(to, h) + [.send(.enable(handle: h), quiet)]
        case .refreshPayloads:
            guard let plan, channelOpen else { return finishUpkeep(nil, now) }
            work.steps = standingRefreshedSlots.flatMap { frameSteps($0, plan.handle(ofSlot: $0), resend: false) }
        case .probe:
            guard channelOpen, let plan else { return finishUpkeep(.missing, now) }
            // The scan response only every `scanResponseProbeEvery`-th probe: another program's
            // write of it is seen on the HCI monitor and repaired at once; this is the slow net
            // for one the monitor missed, and a command fewer per probe (a wakeup every 5 s).
            rotation.probesSinceScanResponse = (rotation.probesSinceScanResponse + 1) % Self.scanResponseProbeEvery
            let withScanResponse = rotation.probesSinceScanResponse == 0
            for s in 0..<plan.slotCount {
                let h = plan.handle(ofSlot: s)
                guard let slot = controller.slot(h) else { continue }
                work.steps.append(.send(.slotData(handle: h), Handling()))
                // The name (or the GATT identity's) answers scan requests again too.
                if withScanResponse && slot.scannable && !slot.scanResponse.isEmpty {
                    work.steps.append(.send(.slotScanResponse(handle: h), Handling()))
                }
                // An enable when already enabled may be answered Command Disallowed: not a failure.
                work.steps.append(.send(.enable(handle: h), Handling(tolerating: [.commandDisallowed])))
            }
        case .arm, .takeDown:
            break
        }
        return next(now)
    }

    mutating func finishUpkeep(_ failure: ArmFailure?, _ now: Int64) -> [AdvertiserAction] {
        let op = work.operation
        work.operation = nil
        work.stage = .idle
        work.steps = []
        var a: [AdvertiserAction]
        switch op {
        case .rotate?: a = [.event(.rotated(failure))]
        case .refreshPayloads?: a = [.event(.payloadsRefreshed(failure))]
        case .probe?: a = [.event(.probed(failure))]
        default: a = []
        }
        if !work.waiting.isEmpty { a += begin(work.waiting.removeFirst(), now) }
        return a
    }

    mutating func finishTakeDown(confirmed: Bool, now: Int64) -> [AdvertiserAction] {
        guard case .takeDown(let deadlineMs)? = work.operation else { return [] }
        var a: [AdvertiserAction] = []
        if !confirmed && deadlineMs > 0 {
            a.append(.log(.warning, "\(adapter): the controller did not confirm advertising off within \(deadlineMs) ms"))
        }
        return a + close(now: now) + [.event(.tookDown(confirmed: confirmed))]
    }

    /// An event from the controller other than a command's completion.
    public mutating func controllerEvent(_ e: HCIEvent) -> [AdvertiserAction] {
        switch e {
        case .hardwareError(let code):
            return [.event(.hardwareError(code))]
        case .leConnectionComplete(.success, let h, true, let peer, let random):
            // Ours only while connectable advertising of ours is on (the GATT identity's turn):
            // another program's GATT server on this adapter keeps its centrals.
            guard connectableOnAir else {
                return [.log(.debug, "\(adapter): a central connected to another program's advertising (handle \(h)); not ours")]
            }
            links[h] = (peer, random)
            // The controller ended the connectable set (legacy: all advertising) at the connection;
            // the policy re-arms without it.
            if controller.legacy.connectable { controller.legacy.enabled = false }
            for (handle, set) in controller.sets where set.connectable { controller.sets[handle]?.enabled = false }
            return [.event(.centralConnected(h))]
        case .disconnectionComplete(.success, let h, _):
            guard links.removeValue(forKey: h) != nil else { return [] }
            return [.event(.centralDisconnected(h))]
        default:
            return []
        }
    }

    /// Connectable advertising of ours is enabled, as far as we know.
    var connectableOnAir: Bool {
        (controller.legacy.enabled && controller.legacy.connectable) || controller.sets.values.contains { $0.enabled && $0.connectable }
    }
}
