/// The GATT identity's centrals in the on-air policy (`CentralConnections` says why one at a time,
/// and for how long): the identity is left out of the air while one is connected, quietly.
extension OnAirPolicy {
    /// The config the controller gets: without the GATT identity while a central is connected.
    public var airConfig: BeaconConfig {
        guard !centrals.isEmpty, config.gattIdentity != nil else { return config }
        var c = config
        c.gattIdentity = nil
        return c
    }

    /// A central came or went (nil: a link known already, or not known): a quiet re-arm when the
    /// identity goes off or on air.
    mutating func centralsChanged(_ change: (actions: [PolicyAction], airChanges: Bool)?) -> [PolicyAction] {
        guard let change else { return [] }
        return change.actions + (change.airChanges && config.gattIdentity != nil ? airChanged() : [])
    }

    /// What is on air changes without a fault: re-armed now (or by the arm in flight, or the
    /// retry of a fault), quietly, counted nowhere.
    mutating func airChanged() -> [PolicyAction] {
        plan.redo(.parameters)
        let waiting = phase == .fault(.connected)
        guard waiting || (phase == .advertising && armInFlight == nil) else { return [] }
        if !waiting { plan.quiet = true }
        phase = .arming
        return arm()
    }

    /// An arm refused while a central is connected: the controller will not advertise beside the
    /// link. Not a failing controller: the frames wait for the disconnection.
    mutating func refusedWhileConnected() -> [PolicyAction] {
        var actions = upkeep.stopped()
        if phase != .fault(.connected) { actions.append(.notice(AdapterFault.connected.rawValue)) }
        phase = .fault(.connected)
        ladder.offAir()
        plan.redo(.parameters)
        return actions
    }
}
