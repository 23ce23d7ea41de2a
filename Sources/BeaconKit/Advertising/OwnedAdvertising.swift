/// What of ours the controller holds beyond its model (`AdvertisingState`): every set we
/// configured and did not remove since, legacy advertising we enabled, and how the frames share the controller (the plan on air and
/// the last arm's). What a new plan, a stop or an adapter move must take off air comes from here.
struct OwnedAdvertising {
    /// Every set handle configured on this controller and not removed since: what a new plan
    /// with fewer sets, a stop or an adapter move must take off air, whatever `plan` says.
    var handles: Set<UInt8> = []
    /// Legacy advertising may be enabled (we enabled it and did not disable it since).
    var legacy = false
    /// How the frames share the controller; nil when nothing of ours is known to be on air.
    var plan: AirPlan?
    /// The plan of the last arm, kept for the monitor and the status while re-arming.
    var lastPlan: AirPlan?

    /// "legacy", "legacy, 3 frames in turn", "extended, sets 2 1 0"; "" before the first arm.
    var mode: String {
        guard let p = plan ?? lastPlan else { return "" }
        var s = p.handles.map { "extended, set\($0.count > 1 ? "s" : "") " + $0.map { "\($0)" }.joined(separator: " ") } ?? "legacy"
        if p.rotates { s += ", \(p.frameCount - p.slotCount + 1) frames in turn" }
        return s
    }

    /// The controller forgot everything (taken down, closed).
    mutating func controllerForgot() {
        handles = []
        legacy = false
    }

    /// Plan `p` is on air.
    mutating func onAir(_ p: AirPlan) {
        plan = p
        lastPlan = p
    }

    /// The bookkeeping a step's mark asks for (the rotation's is not ours).
    mutating func note(_ m: CommandSteps.Mark) {
        switch m {
        case .legacyArmed: legacy = true
        case .legacyDisarmed: legacy = false
        case .armedHandle(let h): handles.insert(h)
        case .removedHandle(let h): handles.remove(h)
        case .firstTurn: break
        }
    }

    /// Switching between legacy commands and sets, or to fewer or other sets: every set we
    /// configured on this controller and the new plan (`handles`, nil: legacy) does not use is
    /// disabled and removed (not only those of the last plan: a failed arm forgets its plan, the
    /// sets stay), and legacy advertising is disabled when sets take over; else the old frames
    /// stay on air beside the new. Best effort: whatever the controller says, the new setup goes on.
    func leaveSteps(toSets newHandles: [UInt8]?) -> [CommandSteps.Step] {
        var list: [CommandSteps.Step] = []
        for h in handles.subtracting(newHandles ?? []).sorted(by: >) {
            list.append(.send(.disable(handle: h), .init(tolerating: [.commandDisallowed, .unknownAdvertisingIdentifier, .unknownCommand], twice: true, bestEffort: true)))
            // Forgotten only once the controller says it is gone: a set whose disable or
            // removal failed stays ours to take down (at the next arm, a stop, a move).
            list.append(.send(.fixed(LERemoveAdvertisingSet(handle: h)), .init(tolerating: [.unknownAdvertisingIdentifier], twice: true, bestEffort: true, then: .removedHandle(h))))
        }
        if legacy && newHandles != nil {
            list.append(.send(.disable(handle: nil), .init(tolerating: [.commandDisallowed], twice: true, bestEffort: true, then: .legacyDisarmed)))
        }
        return list
    }

    /// Everything of ours off air: each set (whatever the last plan said) disabled and removed,
    /// legacy advertising disabled; each refusal that means "not there" tolerated.
    func takeDownSteps() -> [CommandSteps.Step] {
        let sets = handles.union(lastPlan?.handles ?? []).sorted(by: >)
        var commands: [any HCICommand] = []
        for h in sets {
            commands.append(LESetExtendedAdvertisingEnable(false, handle: h))
            commands.append(LERemoveAdvertisingSet(handle: h))
        }
        if sets.isEmpty || legacy { commands.append(LESetAdvertiseEnable(false)) }
        return commands.map { .send(.fixed($0), .init(tolerating: [.commandDisallowed, .unknownAdvertisingIdentifier, .unknownCommand])) }
    }
}
