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
        steps.replace(with: [])
        switch op {
        case .rotate:
            guard let plan = ours.plan, plan.rotates, channelOpen else { return finishUpkeep(nil, now) }
            let s = plan.slotCount - 1
            let (from, to) = rotation.advance(in: plan.frames(inSlot: s))
            steps.list = slotSteps.turn(plan.handle(ofSlot: s), from: from, to: to)
        case .refreshPayloads:
            guard let plan = ours.plan, channelOpen else { return finishUpkeep(nil, now) }
            steps.list = slotSteps.refresh(plan)
        case .probe:
            guard channelOpen, let plan = ours.plan else { return finishUpkeep(.missing, now) }
            steps.list = slotSteps.probe(plan, withScanResponse: rotation.probeResendsScanResponses())
        case .arm, .takeDown:
            break
        }
        return next(now)
    }

    mutating func finishUpkeep(_ failure: ArmFailure?, _ now: Int64) -> [AdvertiserAction] {
        let op = work.operation
        work.operation = nil
        work.stage = .idle
        steps.replace(with: [])
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
            guard links.connected(handle: h, peer: peer, random: random, ours: controller.connectableEnabled) else {
                return [.log(.debug, "\(adapter): a central connected to another program's advertising (handle \(h)); not ours")]
            }
            // The controller ended the connectable set (legacy: all advertising) at the
            // connection; the policy re-arms without it.
            controller.connectableEnded()
            return [.event(.centralConnected(h))]
        case .disconnectionComplete(.success, let h, _):
            return links.disconnected(handle: h) ? [.event(.centralDisconnected(h))] : []
        default:
            return []
        }
    }
}
