/// The recovery half of the on-air policy: failures, the escalation ladder's steps, interference.
extension OnAirPolicy {
    mutating func failed(_ failure: ArmFailure, now: Int64) -> [PolicyAction] {
        if case .rejected = failure, !centrals.isEmpty { return refusedWhileConnected() }
        consecutiveFailures += 1
        let fault: AdapterFault
        let cause: RearmCause
        switch failure {
        case .missing: (fault, cause) = (.missing, .removed)
        case .blocked: (fault, cause) = (.blocked, .rfkill)
        case .down: (fault, cause) = (.down, .down)
        case .timeout: (fault, cause) = (.hung, .hung)
        case .busy: (fault, cause) = (.busy, .busy)
        case .rejected: (fault, cause) = (.failing, .failing)
        }
        var actions = upkeep.stopped()
        if phase != .fault(fault) {
            var text = fault.rawValue
            if case .rejected(let why) = failure { text += ": \(why)" }
            let retry = fault == .busy ? "asking again every few seconds (stop the other program, e.g. btmgmt or a user-channel tool)" : "retrying"
            actions.append(.warning("\(text); beacon off air, \(retry)"))
        }
        phase = .fault(fault)
        if fault == .missing { actions.append(.closeAdapter) }
        // A specific failure names the cause better than the event that led to the attempt.
        if case .rejected = failure, pendingCause != nil {} else { pendingCause = cause }
        pendingScope = .full
        if let climbed = ladder.failed(fault) {
            actions.append(.warning(climbed.warning))
            if climbed.step == .powerCycled { pendingScope = .powerCycle }
            if climbed.step == .restartRequested { actions.append(.requestRestart) }
        }
        rearmScheduled = true
        let cap = fault == .busy ? Self.busyBackoffCapMs : Self.backoffCapMs
        // A time-out already waited the command's deadline (over 2 s): ask again at once, so a
        // controller that answers again is back on air as soon as the kernel lets a command through.
        let delay = failure == .timeout ? Self.settleMs : Self.backoff(failures: consecutiveFailures, capMs: cap)
        return actions + [.schedule(.rearm, afterMs: delay)]
    }

    mutating func interference(_ what: Interference, now: Int64) -> [PolicyAction] {
        guard phase == .advertising, armInFlight == nil else {
            // Whatever was in flight or pending, the next arm redoes the parameters too.
            pendingScope = max(pendingScope ?? .parameters, .parameters)
            return []
        }
        // A persistent interferer is re-armed against once per cap interval, quietly.
        let (storm, notices) = history.interfered(what, at: now)
        pendingQuiet = storm
        return notices + rearm(cause: what.rearmCause, scope: .parameters, afterMs: storm ? Self.backoffCapMs : Self.settleMs, now: now)
    }

    mutating func rearm(cause: RearmCause?, scope: ArmScope, afterMs: Int64, now: Int64,
                        force: Bool = false) -> [PolicyAction] {
        if let cause, pendingCause == nil || force { pendingCause = cause }
        pendingScope = max(pendingScope ?? scope, scope)
        if case .fault = phase {} else if phase != .arming { phase = .arming }
        if rearmScheduled && !force { return [] }
        rearmScheduled = true
        return [.schedule(.rearm, afterMs: afterMs)]
    }
}
