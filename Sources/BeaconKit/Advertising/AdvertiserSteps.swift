/// The advertiser's step engine: each operation is a list of steps, one command in flight at a
/// time; the reply decides whether the next one goes out, and the end of a list (or a failure)
/// goes to the stage, which picks what follows (`stageEnded`).
extension AdvertiserProcedure {
    enum Operation {
        case arm(generation: Int, config: BeaconConfig, scope: ArmScope, sameFrames: Bool)
        case rotate, refreshPayloads, probe
        case takeDown(deadlineMs: Int64)
    }

    enum Stage {
        case idle, opening, poweringDown, poweringUp
        case readingVersion
        case readingFeatures(LocalVersionReply)
        case readingSets(ControllerInfo)
        case clearingPrevious
        /// An edit that changed frames' contents only: just the slots whose bytes changed.
        case updatingSlots
        case leaving(toExtended: Bool)
        /// Arming with sets (legacy commands); `fallback`: on Command Disallowed, try the other.
        case extended(AirPlan, fallback: Bool)
        case legacy(AirPlan, fallback: Bool)
        case upkeep
        case takingDown(failures: Int, perCommandMs: Int64)
    }

    enum Step {
        case send(Command, Handling)
        /// Bookkeeping at this point of the list.
        case mark(Mark)
    }

    /// What a step sends, built when it runs: it may depend on what earlier steps learnt (the
    /// own address, the interval taken) and on the time (telemetry).
    enum Command {
        case fixed(any HCICommand)
        /// Parameters for set `handle` (legacy: nil) carrying `frame`; `configured`: at the
        /// config's interval, falling back to 100 ms where refused, else at the interval in use.
        case parameters(handle: UInt8?, frame: Int, configured: Bool)
        /// LE Set Random Address for legacy advertising (refused: send from the public address).
        case legacyRandomAddress(BluetoothAddress)
        case data(handle: UInt8?, frame: Int)
        case scanResponse(handle: UInt8?, frame: Int)
        /// The probe: whatever the slot carries when the step runs (a frame switch queued before wins).
        case slotData(handle: UInt8?)
        /// The probe: the scan response the slot answers with (the beacon's name, the GATT identity's).
        case slotScanResponse(handle: UInt8?)
        case enable(handle: UInt8?)
        case disable(handle: UInt8?)
    }

    struct Handling {
        /// Statuses that count as done (e.g. Command Disallowed to a disable when already disabled).
        var tolerating: [HCIStatus] = []
        /// An arm's enable: Command Disallowed is "already enabled", except beside a central's link.
        var linkAware = false
        /// Asked again once when refused (a transient Controller Busy must not leave a frame on air).
        var twice = false
        /// Any failure counts as done (the list goes on).
        var bestEffort = false
        /// The bookkeeping once the controller said done.
        var then: Mark?
    }

    enum Mark {
        /// The rotation starts at this frame of the rotating slot.
        case firstTurn(Int)
        case legacyArmed, legacyDisarmed
        case armedHandle(UInt8), removedHandle(UInt8)
    }

    struct Running {
        var command: Command
        var handling: Handling
        var retried = false
        var intervalMs: UInt16
        /// The command as built when it was (last) sent.
        var sent: (any HCICommand)? = nil
    }

    /// Runs the next step, or ends the stage when none is left (`reply`: the last command's).
    mutating func next(_ now: Int64, reply: (any HCIReply)? = nil) -> [AdvertiserAction] {
        while !work.steps.isEmpty {
            switch work.steps.removeFirst() {
            case .mark(let m): note(m)
            case .send(let c, let h): return send(Running(command: c, handling: h, intervalMs: sending.wantedIntervalMs), now)
            }
        }
        return stageEnded(nil, reply: reply, now)
    }

    mutating func send(_ r: Running, _ now: Int64) -> [AdvertiserAction] {
        var r = r
        let command = build(r.command, intervalMs: r.intervalMs, now)
        r.sent = command
        work.running = r
        let timeout: Int64
        if case .takingDown(_, let ms) = work.stage { timeout = ms } else { timeout = commandTimeoutMs }
        return [.send(command, timeoutMs: timeout)]
    }

    func build(_ c: Command, intervalMs: UInt16, _ now: Int64) -> any HCICommand {
        switch c {
        case .fixed(let command): return command
        case .parameters(let h, let f, let configured):
            let ms = configured ? intervalMs : effectiveIntervalMs
            let pdu = pdu(ofFrame: f)
            return h.map { LESetExtendedAdvertisingParameters(handle: $0, intervalMs: ms, txPowerDbm: sending.txPowerDbm, pdu: pdu, ownAddress: sending.ownAddress) }
                ?? LESetAdvertisingParameters(intervalMs: ms, pdu: pdu, ownAddress: sending.ownAddress)
        case .legacyRandomAddress(let address): return LESetRandomAddress(address)
        case .data(let h, let f):
            let data = payload(ofFrame: f, now: now)
            return h.map { LESetExtendedAdvertisingData(handle: $0, data: data) } ?? LESetAdvertisingData(data: data)
        case .scanResponse(let h, let f):
            let response = frames[f].scanResponse
            return h.map { LESetExtendedScanResponseData(handle: $0, data: response) } ?? LESetScanResponseData(data: response)
        case .slotData(let h):
            let data = controller.slot(h)?.data ?? []
            return h.map { LESetExtendedAdvertisingData(handle: $0, data: data) } ?? LESetAdvertisingData(data: data)
        case .slotScanResponse(let h):
            let response = controller.slot(h)?.scanResponse ?? []
            return h.map { LESetExtendedScanResponseData(handle: $0, data: response) } ?? LESetScanResponseData(data: response)
        case .enable(let h): return h.map { LESetExtendedAdvertisingEnable(true, handle: $0) } ?? LESetAdvertiseEnable(true)
        case .disable(let h): return h.map { LESetExtendedAdvertisingEnable(false, handle: $0) } ?? LESetAdvertiseEnable(false)
        }
    }

    /// The reply to the command in flight (status success), decoded as its command's (`decodedReply`), or why not.
    public mutating func replied(_ result: Result<any HCIReply, HCICommandFailure>, now: Int64) -> [AdvertiserAction] {
        guard var r = work.running else { return [] }
        work.running = nil
        var a: [AdvertiserAction] = []
        var failure: HCICommandFailure?
        if case .failure(let f) = result { failure = f }
        let tolerated = r.handling.linkAware ? (links.isEmpty ? [.commandDisallowed] : []) : r.handling.tolerating
        if case .status(let op, let st)? = failure, tolerated.contains(st) {
            a.append(.log(.debug, "\(op): \(st), not a failure here"))
            failure = nil
        }
        if case .status(_, let st)? = failure {
            switch r.command {
            case .parameters(_, _, configured: true)
                // ADV_SCAN_IND too: the same minimum applies to scannable undirected advertising.
                where sending.wantedIntervalMs < AdvertisingInterval.legacyNonConnectableMinimumMs && r.intervalMs == sending.wantedIntervalMs
                    && [.invalidParameters, .unsupportedFeature, HCIStatus(rawValue: 0x1e), HCIStatus(rawValue: 0x20)].contains(st):
                // Bluetooth 4.x controllers refuse non-connectable intervals under 100 ms.
                let fallback = AdvertisingInterval.legacyNonConnectableMinimumMs
                if effectiveIntervalMs != fallback {
                    a.append(.log(.warning, "\(adapter) refused a \(sending.wantedIntervalMs) ms interval (\(st)); advertising every \(fallback) ms instead"))
                }
                effectiveIntervalMs = fallback
                r.intervalMs = fallback
                return a + send(r, now)
            case .legacyRandomAddress(let address):
                // Refused while the controller scans or initiates for another program: the frames
                // go out from the public address rather than not at all; each arm asks again.
                sending.ownAddress = .public
                if !warned.randomAddress {
                    warned.randomAddress = true
                    a.append(.log(.warning, "\(adapter) refused its static random address \(address) (\(st)): it is scanning or connecting for another program; advertising from its public address until it allows it"))
                }
                return a + next(now)
            default:
                if r.handling.twice && !r.retried {
                    r.retried = true
                    return a + send(r, now)
                }
            }
        }
        if let f = failure {
            a.append(.log(.debug, "\(f)"))
            if case .takingDown(let failures, let ms) = work.stage {
                a.append(.log(.warning, "\(adapter): could not take advertising off air: \(f)"))
                work.stage = .takingDown(failures: failures + 1, perCommandMs: ms)
                return a + next(now)
            }
            if r.handling.bestEffort { return a + next(now) }
            work.steps = []
            return a + stageEnded(f, reply: nil, now)
        }
        if let sent = r.sent { controller.apply(type(of: sent).opcode, sent.parameters) }
        if case .parameters(_, _, configured: true) = r.command { effectiveIntervalMs = r.intervalMs }
        if let m = r.handling.then { note(m) }
        if case .success(let rp) = result { return a + next(now, reply: rp) }
        return a + next(now)
    }

    mutating func note(_ m: Mark) {
        switch m {
        case .firstTurn(let t): rotation.turn = t
        case .legacyArmed: armed.legacy = true
        case .legacyDisarmed: armed.legacy = false
        case .armedHandle(let h): armed.handles.insert(h)
        case .removedHandle(let h): armed.handles.remove(h)
        }
    }
}
