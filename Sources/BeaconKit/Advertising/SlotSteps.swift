/// What each operation sends, as lists of steps, from the frames and what the controller holds:
/// an arm with legacy commands or with sets, an edit of contents only, a rotation's next turn, a
/// telemetry refresh, a probe. Made for each list; what follows a list is the advertiser's.
struct SlotSteps {
    let frames: AdvertisedFrames
    let controller: AdvertisingState

    typealias Step = CommandSteps.Step

    /// Frame `f`'s payload and, for a scannable one (the beacon's name, the GATT identity), its
    /// scan response into set `h` (legacy: nil): each frame's turn carries its own. A scan response
    /// the controller already holds (the frames of a rotation share the name) is not sent again.
    func frame(_ f: Int, _ h: UInt8?, resend: Bool = true) -> [Step] {
        var list: [Step] = [.send(.data(handle: h, frame: f), .init())]
        let response = frames.configured[f].scanResponse
        if !response.isEmpty && (resend || controller.slot(h)?.scanResponse != response) {
            list.append(.send(.scanResponse(handle: h, frame: f), .init()))
        }
        return list
    }

    /// Legacy advertising carrying frame `first` (the rotation starts there), sent from `random`
    /// (nil: the public address).
    func legacyArm(first: Int, random: BluetoothAddress?) -> [Step] {
        var list: [Step] = [.send(.disable(handle: nil), .init(tolerating: [.commandDisallowed]))]
        // Allowed only while advertising is off, hence after the disable.
        if let random { list.append(.send(.legacyRandomAddress(random), .init())) }
        list += [.send(.parameters(handle: nil, frame: first, configured: true), .init()), .mark(.firstTurn(first))]
        return list + frame(first, nil) + [.mark(.legacyArmed), .send(.enable(handle: nil), .init(linkAware: true))]
    }

    /// A set per slot of `p`, each with its first frame, sent from `random` (nil: the public address).
    func extendedArm(_ p: AirPlan, random: BluetoothAddress?) -> [Step] {
        var list: [Step] = [.mark(.firstTurn(0))]
        for s in 0..<p.slotCount {
            guard let h = p.handle(ofSlot: s) else { continue }
            list += [.mark(.armedHandle(h)),
                     .send(.disable(handle: h), .init(tolerating: [.commandDisallowed, .unknownAdvertisingIdentifier])),
                     .send(.parameters(handle: h, frame: p.frames(inSlot: s).lowerBound, configured: true), .init())]
            // A set's random address: after its parameters (which create the set).
            if let random { list.append(.send(.fixed(LESetAdvertisingSetRandomAddress(handle: h, random)), .init())) }
            list += frame(p.frames(inSlot: s).lowerBound, h)
            list.append(.send(.enable(handle: h), .init(linkAware: true)))
        }
        return list
    }

    /// An edit of the frames' contents only: the bytes of each slot of `plan` whose frame on air
    /// (at `rotation`'s turn) changed; nothing for one that did not.
    func changedSlots(_ plan: AirPlan, rotation: FrameRotation, now: Int64) -> [Step] {
        (0..<plan.slotCount).flatMap { s -> [Step] in
            let f = rotation.frame(in: plan.frames(inSlot: s)), h = plan.handle(ofSlot: s)
            let response = frames.configured[f].scanResponse
            if controller.slot(h)?.data == frames.payload(ofFrame: f, now: now),
               response.isEmpty || controller.slot(h)?.scanResponse == response { return [] }
            return frame(f, h, resend: false)
        }
    }

    /// The rotating slot `h` from frame `from` to `to`.
    func turn(_ h: UInt8?, from: Int, to: Int) -> [Step] {
        guard frames.pdu(ofFrame: from) != frames.pdu(ofFrame: to) else { return frame(to, h, resend: false) }
        // To or from the GATT identity's turn: the PDU type changes, which only parameters set
        // while advertising is off can do (and a set's scan response only once it is scannable).
        let quiet = CommandSteps.Handling(tolerating: [.commandDisallowed])
        return [.send(.disable(handle: h), quiet), .send(.parameters(handle: h, frame: to, configured: false), .init())]
            + frame(to, h) + [.send(.enable(handle: h), quiet)]
    }

    /// Fresh telemetry into each slot of `plan` that always carries the same frame refreshed on air.
    func refresh(_ plan: AirPlan) -> [Step] {
        frames.standingRefreshedSlots(plan).flatMap { frame($0, plan.handle(ofSlot: $0), resend: false) }
    }

    /// The health probe: each slot's data and enable sent again, its scan response too when
    /// `withScanResponse` (the name, or the GATT identity's, answers scan requests again).
    func probe(_ plan: AirPlan, withScanResponse: Bool) -> [Step] {
        var list: [Step] = []
        for s in 0..<plan.slotCount {
            let h = plan.handle(ofSlot: s)
            guard let slot = controller.slot(h) else { continue }
            list.append(.send(.slotData(handle: h), .init()))
            if withScanResponse && slot.scannable && !slot.scanResponse.isEmpty {
                list.append(.send(.slotScanResponse(handle: h), .init()))
            }
            // An enable when already enabled may be answered Command Disallowed: not a failure.
            list.append(.send(.enable(handle: h), .init(tolerating: [.commandDisallowed])))
        }
        return list
    }
}
