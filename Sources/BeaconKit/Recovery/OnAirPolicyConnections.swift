/// The GATT identity's connections (SPEC §3). The iOS library connects, reads one characteristic
/// and disconnects within a second. One central at a time: while it is connected, the identity's
/// connectable advertising is left out and the other frames are re-armed non-connectable (a
/// legacy controller stops all advertising at a connection); at the disconnection it comes back.
/// One is enough for a read that short, and it keeps every controller's schedule simple: a
/// BCM43438 (Pi 3, Zero W) beside one peripheral link still keeps the non-connectable frames
/// going. A central that holds on is disconnected after `connectionLimitMs`. None of this is a
/// fault: no re-arm is counted and the ladder never moves.
extension OnAirPolicy {
    public static let connectionLimitMs: Int64 = 30_000
    /// A Disconnect that brought no Disconnection Complete is sent again this much later.
    public static let disconnectRetryMs: Int64 = 5_000

    /// The config the controller gets: without the GATT identity while a central is connected.
    public var airConfig: BeaconConfig {
        guard !connections.isEmpty, config.gattIdentity != nil else { return config }
        var c = config
        c.gattIdentity = nil
        return c
    }

    mutating func centralConnected(_ h: UInt16, now: Int64) -> [PolicyAction] {
        guard connections[h] == nil else { return [] }
        let first = connections.isEmpty
        connections[h] = now
        var actions = [PolicyAction.notice("central connected (handle \(h)); disconnected after \(Self.connectionLimitMs / 1000) s if it stays")]
        actions += connectionLimitTimer(now: now)
        if first && config.gattIdentity != nil { actions += airChanged() }
        return actions
    }

    mutating func centralDisconnected(_ h: UInt16, now: Int64) -> [PolicyAction] {
        guard connections.removeValue(forKey: h) != nil else { return [] }
        var actions = [PolicyAction.notice("central disconnected (handle \(h))")] + connectionLimitTimer(now: now)
        if connections.isEmpty && config.gattIdentity != nil { actions += airChanged() }
        return actions
    }

    /// What is on air changes without a fault: re-armed now (or by the arm in flight, or the
    /// retry of a fault), quietly, counted nowhere.
    mutating func airChanged() -> [PolicyAction] {
        pendingScope = max(pendingScope ?? .parameters, .parameters)
        let waiting = phase == .fault(.connected)
        guard waiting || (phase == .advertising && armInFlight == nil) else { return [] }
        if !waiting { pendingQuiet = true }
        phase = .arming
        return arm()
    }

    mutating func connectionLimitReached(now: Int64) -> [PolicyAction] {
        var actions: [PolicyAction] = []
        for (h, since) in connections.sorted(by: { $0.key < $1.key }) where now - since >= Self.connectionLimitMs {
            actions.append(.notice("central still connected after \(Self.connectionLimitMs / 1000) s (handle \(h)); disconnecting it"))
            actions.append(.disconnect(handle: h))
            // Asked again later if the link outlives the Disconnect.
            connections[h] = now - Self.connectionLimitMs + Self.disconnectRetryMs
        }
        return actions + connectionLimitTimer(now: now)
    }

    func connectionLimitTimer(now: Int64) -> [PolicyAction] {
        guard let oldest = connections.values.min() else { return [.cancel(.connectionLimit)] }
        return [.schedule(.connectionLimit, afterMs: max(0, oldest + Self.connectionLimitMs - now))]
    }

    /// An arm refused while a central is connected: the controller will not advertise beside the
    /// link. Not a failing controller: the frames wait for the disconnection.
    mutating func refusedWhileConnected() -> [PolicyAction] {
        var actions: [PolicyAction] = [.cancel(.probe), .cancel(.rotate), .cancel(.payloadRefresh)]
        if phase != .fault(.connected) { actions.append(.notice(AdapterFault.connected.rawValue)) }
        phase = .fault(.connected)
        ladder.offAir()
        pendingScope = max(pendingScope ?? .parameters, .parameters)
        return actions
    }
}
