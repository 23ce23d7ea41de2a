/// The recovery half of the on-air policy: failures, the escalation ladder's steps, interference.
extension OnAirPolicy {
    mutating func failed(_ failure: ArmFailure, now: Int64) -> [PolicyAction] {
        if case .rejected = failure, !centrals.isEmpty { return refusedWhileConnected() }
        let fault = failure.meaning.fault
        var actions = upkeep.stopped()
        if phase != .fault(fault) { actions.append(.warning(failure.offAirWarning)) }
        phase = .fault(fault)
        if fault == .missing { actions.append(.closeAdapter) }
        let retryMs = plan.failed(failure)
        if let climbed = ladder.failed(fault) {
            actions.append(.warning(climbed.warning))
            if climbed.step == .powerCycled { plan.redo(.powerCycle) }
            if climbed.step == .restartRequested { actions.append(.requestRestart) }
        }
        return actions + [.schedule(.rearm, afterMs: retryMs)]
    }

    mutating func interference(_ what: Interference, now: Int64) -> [PolicyAction] {
        guard phase == .advertising, armInFlight == nil else {
            // Whatever was in flight or pending, the next arm redoes the parameters too.
            plan.redo(.parameters)
            return []
        }
        // A persistent interferer is re-armed against once per cap interval, quietly.
        let (storm, notices) = history.interfered(what, at: now)
        plan.quiet = storm
        return notices + rearm(cause: what.rearmCause, scope: .parameters, afterMs: storm ? RearmPlan.backoffCapMs : RearmPlan.settleMs)
    }

    mutating func rearm(cause: RearmCause?, scope: ArmScope, afterMs: Int64, force: Bool = false) -> [PolicyAction] {
        let setTimer = plan.request(cause: cause, scope: scope, force: force)
        if case .fault = phase {} else { phase = .arming }
        return setTimer ? [.schedule(.rearm, afterMs: afterMs)] : []
    }
}
