/// The advertiser running its steps: each operation is a list of steps (`CommandSteps`), one
/// command in flight at a time; the reply decides whether the next one goes out, and the end of
/// a list (or a failure) goes to the stage, which picks what follows (`stageEnded`).
extension AdvertiserProcedure {
    enum Stage {
        case idle, opening
        /// `ControllerBringUp` has the stage.
        case bringingUp
        /// An edit that changed frames' contents only: just the slots whose bytes changed.
        case updatingSlots
        case leaving(toExtended: Bool)
        /// Arming with sets (legacy commands); `fallback`: on Command Disallowed, try the other.
        case extended(AirPlan, fallback: Bool)
        case legacy(AirPlan, fallback: Bool)
        case upkeep
        case takingDown(failures: Int, perCommandMs: Int64)
    }


    /// Runs the next step, or ends the stage when none is left (`reply`: the last command's).
    mutating func next(_ now: Int64, reply: (any HCIReply)? = nil) -> [AdvertiserAction] {
        let (marks, step) = steps.advance()
        for m in marks { note(m) }
        guard let (c, h) = step else { return stageEnded(nil, reply: reply, now) }
        return send(CommandSteps.Running(command: c, handling: h, intervalMs: frames.wantedIntervalMs), now)
    }

    mutating func send(_ r: CommandSteps.Running, _ now: Int64) -> [AdvertiserAction] {
        var r = r
        let command = frames.build(r.command, intervalMs: r.intervalMs, controller: controller, now: now)
        r.sent = command
        steps.running = r
        let timeout: Int64
        if case .takingDown(_, let ms) = work.stage { timeout = ms } else { timeout = steps.commandTimeoutMs }
        return [.send(command, timeoutMs: timeout)]
    }

    /// The reply to the command in flight (status success), decoded as its command's (`decodedReply`), or why not.
    public mutating func replied(_ result: Result<any HCIReply, HCICommandFailure>, now: Int64) -> [AdvertiserAction] {
        guard let (r, outcome, tolerated) = steps.settle(result, linkOpen: !links.isEmpty) else { return [] }
        var a: [AdvertiserAction] = tolerated.map { [.log(.debug, $0)] } ?? []
        switch outcome {
        case .success(let reply):
            if let sent = r.sent { controller.apply(type(of: sent).opcode, sent.parameters) }
            if case .parameters(_, _, configured: true) = r.command { frames.effectiveIntervalMs = r.intervalMs }
            if let m = r.handling.then { note(m) }
            return a + next(now, reply: reply)
        case .failure(let f):
            if case .status(_, let st) = f {
                switch frames.workaround(r, refused: st, adapter: adapter) {
                case .resend(let again, let warning)?:
                    return a + (warning.map { [.log(.warning, $0)] } ?? []) + send(again, now)
                case .skip(let warning)?:
                    return a + (warning.map { [.log(.warning, $0)] } ?? []) + next(now)
                case nil:
                    if let again = CommandSteps.again(r) { return a + send(again, now) }
                }
            }
            a.append(.log(.debug, "\(f)"))
            if case .takingDown(let failures, let ms) = work.stage {
                a.append(.log(.warning, "\(adapter): could not take advertising off air: \(f)"))
                work.stage = .takingDown(failures: failures + 1, perCommandMs: ms)
                return a + next(now)
            }
            if r.handling.bestEffort { return a + next(now) }
            steps.replace(with: [])
            return a + stageEnded(f, reply: nil, now)
        }
    }

    mutating func note(_ m: CommandSteps.Mark) {
        if case .firstTurn(let t) = m { rotation.turn = t } else { ours.note(m) }
    }

    /// The lists of steps each operation sends, from the frames and the controller as they are now.
    var slotSteps: SlotSteps { SlotSteps(frames: frames, controller: controller) }
}
