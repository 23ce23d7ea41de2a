import Glibc

/// An LE observer's command sequences, pure: the owner's calls and the answers in, actions out
/// (`Scanner` in BeaconLinux performs them). Passive scanning (active with `active`) with
/// duplicate filtering off, so RSSI keeps updating; legacy commands first, extended ones where
/// the controller refuses legacy scanning (SPEC §3's Command Disallowed rule holds for scanning
/// too). Every call starts a new generation: answers naming an older one are dropped, so a
/// superseded sequence goes no further and reports nothing.
///
/// Size (about 310 lines, 7 fields): one command sequence, start to stop, with its Action type and
/// each step's fallback and busy retry; split, the generation that drops a superseded sequence's
/// answers would be read across types.
public struct ScanProcedure: Sendable {
    public enum Action: Sendable, Equatable {
        /// Open the adapter's channel; answer `opened` (ENODEV: no such adapter) on a later turn.
        case openChannel(generation: Int)
        /// Bring the adapter up; answer `powered`.
        case powerUp(generation: Int)
        /// Answer `replied` with the command's return parameters or why it failed.
        case send(any HCICommand, timeoutMs: Int64, generation: Int)
        /// Forget what the channel has queued or in flight: the next command goes out now.
        case abandonCommands
        /// Call `retryDue` after `afterMs`.
        case scheduleRetry(afterMs: Int64)
        case cancelRetry
        case closeChannel
        case debug(String), info(String)
        /// The outcome of `start`, of `stop` or `pause`, of `resume`: always the last action.
        case started(HCICommandFailure?)
        case stopped(HCICommandFailure?)
        case resumed(HCICommandFailure?)

        /// Commands compare by their bytes.
        public static func == (a: Action, b: Action) -> Bool {
            switch (a, b) {
            case let (.openChannel(x), .openChannel(y)), let (.powerUp(x), .powerUp(y)): return x == y
            case let (.send(c, t, g), .send(d, u, h)): return c.packet == d.packet && t == u && g == h
            case (.abandonCommands, .abandonCommands), (.cancelRetry, .cancelRetry), (.closeChannel, .closeChannel): return true
            case let (.scheduleRetry(x), .scheduleRetry(y)): return x == y
            case let (.debug(x), .debug(y)), let (.info(x), .info(y)): return x == y
            case let (.started(x), .started(y)), let (.stopped(x), .stopped(y)), let (.resumed(x), .resumed(y)): return x == y
            default: return false
            }
        }
    }

    public static let commandTimeoutMs: Int64 = 1000
    /// How long `stop` gives the controller to confirm scanning is off.
    public static let stopTimeoutMs: Int64 = 400
    /// A sequence refused because another program's scan started in between is asked again this
    /// many times, this far apart (about a fifth of a second in all).
    public static let busyRetries = 20
    public static let busyRetryMs: Int64 = 10

    /// What an enable sequence's outcome leads to.
    private enum Purpose: Sendable {
        case startLegacy(hasExtended: Bool), startExtended, resume
    }
    /// One family's sequence: disable, parameters, enable.
    private struct Attempt: Sendable {
        let family: ScanFamily
        let busyRetries: Int
        let purpose: Purpose
    }
    private enum Phase: Sendable { case off, parameters, on }
    /// What the current generation waits for.
    private enum Step: Sendable {
        case idle, opening, poweringUp, readingFeatures
        case enabling(Attempt, Phase)
        case waitingToRetry(Attempt)
        case stopping
    }

    /// The family scanning was enabled with; nil before a start succeeded and after a stop.
    public private(set) var family: ScanFamily?
    public private(set) var generation = 0
    private var active = false
    /// The family whose enable command is in flight: `stop` disables it too.
    private var enabling: ScanFamily?
    /// The family `pause` took scanning off in: `resume` enables it again.
    private var paused: ScanFamily?
    private var step = Step.idle
    private var channelOpen = false

    public init() {}

    /// Opens the adapter, brings it up, reads its LE features, then disables scanning, sets the
    /// parameters and enables scanning; ends with `started`. Whatever ran before is closed.
    public mutating func start(active: Bool) -> [Action] {
        let actions = close()
        self.active = active
        step = .opening
        channelOpen = true
        return actions + [.openChannel(generation: generation)]
    }

    /// The adapter's channel opened (nil) or not (why).
    public mutating func opened(_ error: Errno?, generation g: Int) -> [Action] {
        guard g == generation, case .opening = step else { return [] }
        if let error {
            channelOpen = false
            return finishStart(.io(error))
        }
        step = .poweringUp
        return [.powerUp(generation: generation)]
    }

    /// The power-up's error, nil when the adapter is up (EALREADY: it was).
    public mutating func powered(_ error: Errno?, generation g: Int) -> [Action] {
        guard g == generation, case .poweringUp = step else { return [] }
        if let error, error != .alreadyInProgress { return finishStart(.io(error)) }
        step = .readingFeatures
        return [send(LEReadLocalSupportedFeatures())]
    }

    /// A command's return parameters (status success) or why it failed.
    public mutating func replied(_ reply: Result<any HCIReply, HCICommandFailure>, generation g: Int) -> [Action] {
        guard g == generation else { return [] }
        switch step {
        case .readingFeatures:
            let features: UInt64
            switch reply {
            case .success(let r as LEFeaturesReply): features = r.bits
            case .success: return finishStart(.shortReply(.leReadLocalFeatures))
            case .failure(let f): return finishStart(f)
            }
            let hasExtended = ControllerInfo(hciVersion: 0, manufacturer: 0, leFeatures: features).hasExtendedAdvertising
            // Command Disallowed from a controller without extended commands is another
            // program's scan starting in between (not the legacy/extended mixing rule): ask again.
            return enable(Attempt(family: .legacy, busyRetries: hasExtended ? 1 : Self.busyRetries,
                                  purpose: .startLegacy(hasExtended: hasExtended)))
        case .enabling(let attempt, let phase):
            return advance(attempt, phase, reply)
        case .stopping:
            var actions: [Action] = []
            let f = failure(reply, tolerating: [.commandDisallowed], &actions)
            step = .idle
            return actions + [.stopped(f)]
        case .idle, .opening, .poweringUp, .waitingToRetry:
            return []
        }
    }

    /// The time `scheduleRetry` asked for has come.
    public mutating func retryDue() -> [Action] {
        guard case .waitingToRetry(let attempt) = step else { return [] }
        return enable(attempt)
    }

    /// Disables scanning in the family that was enabled (or is being enabled), with `timeoutMs`,
    /// so the controller is left idle; a start in progress goes no further. Ends with `stopped`:
    /// nil when scanning is off (or never was on).
    public mutating func stop(timeoutMs: Int64 = ScanProcedure.stopTimeoutMs) -> [Action] {
        var actions = supersede()
        let target = family ?? enabling
        family = nil
        enabling = nil
        // Whatever is queued or in flight is dropped: the disable goes to the controller now.
        if channelOpen { actions.append(.abandonCommands) }
        guard let target else { return actions + [.stopped(nil)] }
        step = .stopping
        return actions + [send(Self.off(target), timeoutMs: timeoutMs)]
    }

    /// Takes scanning off for a while, the adapter kept open (see `resume`); as `stop`.
    public mutating func pause() -> [Action] {
        paused = family ?? enabling ?? paused
        return stop()
    }

    /// Scanning on again after `pause`, in the same family with the same parameters; ends with
    /// `resumed` (EBADF: nothing was paused).
    public mutating func resume() -> [Action] {
        let actions = supersede()
        guard let family = paused else { return actions + [.resumed(.io(Errno(EBADF)))] }
        return actions + enable(Attempt(family: family, busyRetries: Self.busyRetries, purpose: .resume))
    }

    /// Forgets everything and lets the adapter go.
    public mutating func close() -> [Action] {
        var actions = supersede()
        paused = nil
        family = nil
        enabling = nil
        if channelOpen {
            channelOpen = false
            actions.append(.closeChannel)
        }
        return actions
    }

    // MARK: the sequences

    /// A new generation: the current sequence's answers and retry are dropped.
    private mutating func supersede() -> [Action] {
        generation += 1
        defer { step = .idle }
        if case .waitingToRetry = step { return [.cancelRetry] }
        return []
    }

    private mutating func enable(_ attempt: Attempt) -> [Action] {
        step = .enabling(attempt, .off)
        return [send(Self.off(attempt.family))]
    }

    /// Disabling first (parameters cannot change while scanning; disabled already is no failure),
    /// then the parameters, then enabling with duplicates reported.
    private mutating func advance(_ attempt: Attempt, _ phase: Phase, _ reply: Result<any HCIReply, HCICommandFailure>) -> [Action] {
        var actions: [Action] = []
        switch phase {
        case .off:
            if let f = failure(reply, tolerating: [.commandDisallowed], &actions) { return actions + finished(attempt, f) }
            step = .enabling(attempt, .parameters)
            return actions + [send(Self.parameters(attempt.family, active: active))]
        case .parameters:
            let f = failure(reply, tolerating: [], &actions)
            if let retry = retryIfBusy(attempt, f) { return actions + retry }
            if let f { return actions + finished(attempt, f) }
            enabling = attempt.family
            step = .enabling(attempt, .on)
            return actions + [send(Self.on(attempt.family))]
        case .on:
            let f = failure(reply, tolerating: [], &actions)
            enabling = nil
            if let retry = retryIfBusy(attempt, f) { return actions + retry }
            if f == nil { family = attempt.family }
            return actions + finished(attempt, f)
        }
    }

    /// Parameters or enable refused with Command Disallowed means another program enabled
    /// scanning between our commands (an observer starting or stopping): after `busyRetryMs`,
    /// the whole sequence again, at most `busyRetries` more times.
    private mutating func retryIfBusy(_ attempt: Attempt, _ f: HCICommandFailure?) -> [Action]? {
        guard case .status(let op, .commandDisallowed)? = f, attempt.busyRetries > 0 else { return nil }
        step = .waitingToRetry(Attempt(family: attempt.family, busyRetries: attempt.busyRetries - 1, purpose: attempt.purpose))
        return [.debug("\(op) refused while another scan changes; trying again (\(attempt.busyRetries) left)"),
                .scheduleRetry(afterMs: Self.busyRetryMs)]
    }

    /// An enable sequence ended: the legacy one refused falls back to extended commands.
    private mutating func finished(_ attempt: Attempt, _ f: HCICommandFailure?) -> [Action] {
        switch attempt.purpose {
        case .startLegacy(let hasExtended):
            let extended = Attempt(family: .extended, busyRetries: Self.busyRetries, purpose: .startExtended)
            switch f {
            case nil:
                return finishStart(nil)
            case .status(let op, let st)? where st == .commandDisallowed || (hasExtended && st == .unknownCommand):
                return [.info("legacy scan commands refused (\(op): \(st)); using extended scan commands")] + enable(extended)
            case let f? where hasExtended:
                return [.info("legacy scanning failed (\(f)); trying extended scan commands")] + enable(extended)
            case let f?:
                return finishStart(f)
            }
        case .startExtended:
            return finishStart(f)
        case .resume:
            step = .idle
            if f == nil { paused = nil }
            return [.resumed(f)]
        }
    }

    /// A start that failed lets the adapter go.
    private mutating func finishStart(_ f: HCICommandFailure?) -> [Action] {
        step = .idle
        guard let f else { return [.started(nil)] }
        return close() + [.started(f)]
    }

    /// nil on success or on a status in `tolerating` (e.g. Command Disallowed to "disable" when
    /// already disabled: not a failure there), the failure otherwise; both logged at debug level.
    private func failure(_ reply: Result<any HCIReply, HCICommandFailure>, tolerating: [HCIStatus],
                         _ actions: inout [Action]) -> HCICommandFailure? {
        switch reply {
        case .success:
            return nil
        case .failure(.status(let op, let st)) where tolerating.contains(st):
            actions.append(.debug("\(op): \(st), not a failure here"))
            return nil
        case .failure(let f):
            actions.append(.debug("\(f)"))
            return f
        }
    }

    private func send(_ command: any HCICommand, timeoutMs: Int64 = ScanProcedure.commandTimeoutMs) -> Action {
        .send(command, timeoutMs: timeoutMs, generation: generation)
    }

    private static func off(_ family: ScanFamily) -> any HCICommand {
        switch family {
        case .legacy: LESetScanEnable(false)
        case .extended: LESetExtendedScanEnable(false)
        }
    }

    private static func parameters(_ family: ScanFamily, active: Bool) -> any HCICommand {
        switch family {
        case .legacy: LESetScanParameters(active: active)
        case .extended: LESetExtendedScanParameters(active: active)
        }
    }

    private static func on(_ family: ScanFamily) -> any HCICommand {
        switch family {
        case .legacy: LESetScanEnable(true, filterDuplicates: false)
        case .extended: LESetExtendedScanEnable(true, filterDuplicates: false)
        }
    }
}
