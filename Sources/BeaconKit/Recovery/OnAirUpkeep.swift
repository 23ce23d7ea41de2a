/// What keeps the beacon checked while it is on air: a probe every `check_interval_s`, frame
/// rotation every `rotation_ms` and telemetry refreshed every `payloadRefreshMs`, the last two
/// only when what is on air needs them. One missed answer is asked again before the controller
/// counts as hung (the kernel may be retrying).
public struct OnAirUpkeep: Sendable {
    /// What the last arm put on air.
    private(set) var air = AirSummary()
    /// Probes in a row that got no answer: one is not yet "hung".
    private(set) var missedProbes = 0

    public static let payloadRefreshMs: Int64 = 10_000
    private static let timers: [PolicyTimer] = [.probe, .rotate, .payloadRefresh]

    static func probeIntervalMs(_ config: BeaconConfig) -> Int64 { Int64(config.watchdog.checkIntervalS) * 1000 }

    /// An arm put `summary` on air: the timers it needs set, the others cancelled.
    mutating func started(_ summary: AirSummary, config: BeaconConfig) -> [PolicyAction] {
        air = summary
        missedProbes = 0
        return Self.timers.map { t in period(t, config: config).map { .schedule(t, afterMs: $0) } ?? .cancel(t) }
    }

    /// The beacon went off air: every upkeep timer cancelled.
    mutating func stopped() -> [PolicyAction] {
        missedProbes = 0
        return Self.timers.map { .cancel($0) }
    }

    /// Timer `t` ran its task: when it runs again (nothing: not needed for what is on air).
    func next(after t: PolicyTimer, config: BeaconConfig) -> [PolicyAction] {
        period(t, config: config).map { [.schedule(t, afterMs: $0)] } ?? []
    }

    /// What timer `t` has the advertiser do (nothing, for what is on air).
    func task(_ t: PolicyTimer) -> [PolicyAction] {
        switch t {
        case .probe: [.probe]
        case .rotate: air.rotates ? [.rotate] : []
        case .payloadRefresh: air.refreshesPayloads ? [.refreshPayloads] : []
        case .rearm, .armDeadline, .connectionLimit: []
        }
    }

    /// How long after it ran timer `t` runs again; nil: not an upkeep timer, or not needed for
    /// what is on air.
    private func period(_ t: PolicyTimer, config: BeaconConfig) -> Int64? {
        switch t {
        case .probe: Self.probeIntervalMs(config)
        case .rotate: air.rotates ? Int64(config.bluetooth.rotationMs) : nil
        case .payloadRefresh: air.refreshesPayloads ? Self.payloadRefreshMs : nil
        case .rearm, .armDeadline, .connectionLimit: nil
        }
    }

    /// A probe, a rotation or a refresh went unanswered: true for the first in a row, which is
    /// asked again (a probe); the next one is a hung controller.
    mutating func missed() -> Bool {
        defer { missedProbes = 1 }
        return missedProbes == 0
    }

    /// A probe was answered.
    mutating func answered() { missedProbes = 0 }
}
