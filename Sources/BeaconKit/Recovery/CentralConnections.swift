/// The centrals connected to the GATT identity (SPEC §3), by connection handle, and since when.
/// The iOS library connects, reads one characteristic and disconnects within a second. One
/// central at a time: while one is connected, the identity's connectable advertising is left out
/// and the other frames are re-armed non-connectable (a legacy controller stops all advertising
/// at a connection); at the disconnection it comes back. One is enough for a read that short, and
/// it keeps every controller's schedule simple: a BCM43438 (Pi 3, Zero W) beside one peripheral
/// link still keeps the non-connectable frames going. A central that holds on is disconnected
/// after `limitMs`, and asked again every `disconnectRetryMs` while its link outlives the
/// Disconnect. None of this is a fault: no re-arm is counted and the ladder never moves.
public struct CentralConnections: Sendable {
    private(set) var since: [UInt16: Int64] = [:]

    public static let limitMs: Int64 = 30_000
    /// A Disconnect that brought no Disconnection Complete is sent again this much later.
    public static let disconnectRetryMs: Int64 = 5_000

    var isEmpty: Bool { since.isEmpty }

    /// Central `h` connected at `now`: the notice and the limit's timer, and whether the identity
    /// goes off air (the first central); nil when that link is known already.
    mutating func connected(_ h: UInt16, at now: Int64) -> (actions: [PolicyAction], airChanges: Bool)? {
        guard since[h] == nil else { return nil }
        since[h] = now
        return ([.notice("central connected (handle \(h)); disconnected after \(Self.limitMs / 1000) s if it stays"), limitTimer(at: now)],
                since.count == 1)
    }

    /// Central `h` disconnected at `now`: the notice and the limit's timer, and whether the
    /// identity comes back on air (the last central); nil when that link was not known.
    mutating func disconnected(_ h: UInt16, at now: Int64) -> (actions: [PolicyAction], airChanges: Bool)? {
        guard since.removeValue(forKey: h) != nil else { return nil }
        return ([.notice("central disconnected (handle \(h))"), limitTimer(at: now)], since.isEmpty)
    }

    /// The adapter went away or down: its links with it.
    mutating func removeAll() { since = [:] }

    /// The limit's timer fired at `now`: each link held `limitMs` is disconnected, lowest handle
    /// first, and the timer set again.
    mutating func limitReached(at now: Int64) -> [PolicyAction] {
        // In handle order as they are found (a handful at most): a sort would add 2 KB of
        // specialised code to the static binary.
        var overdue: [UInt16] = []
        for (h, t) in since where now - t >= Self.limitMs {
            overdue.insert(h, at: overdue.firstIndex { $0 > h } ?? overdue.count)
        }
        var actions: [PolicyAction] = []
        for h in overdue {
            actions.append(.notice("central still connected after \(Self.limitMs / 1000) s (handle \(h)); disconnecting it"))
            actions.append(.disconnect(handle: h))
            // Asked again later if the link outlives the Disconnect.
            since[h] = now - Self.limitMs + Self.disconnectRetryMs
        }
        return actions + [limitTimer(at: now)]
    }

    /// The limit's timer: set for when the oldest link reaches it, cancelled with none.
    func limitTimer(at now: Int64) -> PolicyAction {
        guard let oldest = since.values.min() else { return .cancel(.connectionLimit) }
        return .schedule(.connectionLimit, afterMs: max(0, oldest + Self.limitMs - now))
    }
}
