/// What the daemon is doing, as one value: computed once per change from the adapter session's
/// policy and the last edit, and handed to every `StatusOutput` (the LEDs, systemd's STATUS=, and
/// whatever a later output adds). Pure and Equatable, so "did anything change?" is one comparison.
///
/// Size: 19 stored fields, each a figure the outputs show (status.json, STATUS=, the metrics, the
/// LEDs; docs/monitoring.md); a record, not a machine: split, "did anything change?" would no
/// longer be one comparison.
public struct DaemonStatus: Equatable, Sendable {
    /// The policy's phase, one type for both.
    public typealias Phase = PolicyPhase

    public var phase: Phase
    public var escalation: Escalation
    /// Failed re-arms counted by the escalation ladder.
    public var ladderFailures: Int
    /// Re-arms per cause, since start, in `RearmCause.allCases` order (causes never seen: 0).
    public var rearms: [RearmCause: Int]
    /// Steps of the escalation ladder taken (power cycles, restarts asked for), since start.
    public var escalations: [Escalation: Int] = [:]
    /// The headline of the last refused edit (nil: the file on disk is what is on air).
    public var refusedEdit: String?
    public var adapter: String
    /// The beacon as the log names it ("UUID major 1 minor 2 power -59 + ibeacon").
    public var beacon: String
    /// "legacy", "extended, sets 3 2 1", ... ("" before the first arm).
    public var mode: String
    /// The interval the controller took (it may have refused the configured one), ms.
    public var intervalMs: Int
    /// `bluetooth.interval_ms` as configured (issue 38: shown beside the one on air); nil in old tests.
    public var configuredIntervalMs: Int?
    /// The frames configured, by name.
    public var frames: [String]
    /// Who serves the GATT identity ("bluetoothd (D-Bus)", "altbeacond (own ATT server)"); nil
    /// without `[gatt_identity]`.
    public var gattServer: String?
    /// Centrals connected to the GATT identity now.
    public var centrals: Int
    /// The configured identity (the status file's uuid, major, minor, power); nil in old tests.
    public var identity: BeaconIdentity?
    /// `beacon.advertising = false`: off air on purpose, nothing armed.
    public var advertisingOff = false
    /// The status LED shows the identify pattern (a change from afar asked for it).
    public var identifying = false
    /// The changes asked from afar and what became of them.
    public var changes = RemoteChangeHistory()
    /// The adapter's address on air (AA:BB:CC:DD:EE:FF), nil when unknown (issue 48).
    public var address: String?

    public init(phase: Phase, escalation: Escalation = .retrying, ladderFailures: Int = 0, rearms: [RearmCause: Int] = [:],
                refusedEdit: String? = nil, adapter: String, beacon: String, mode: String = "", intervalMs: Int = 0,
                frames: [String] = [], gattServer: String? = nil, centrals: Int = 0) {
        self.phase = phase
        self.escalation = escalation
        self.ladderFailures = ladderFailures
        self.rearms = rearms
        self.refusedEdit = refusedEdit
        self.adapter = adapter
        self.beacon = beacon
        self.mode = mode
        self.intervalMs = intervalMs
        self.frames = frames
        self.gattServer = gattServer
        self.centrals = centrals
    }

    /// What the LEDs show (SPEC §4).
    public var health: BeaconHealth {
        if identifying && phase != .stopping { return .identifying }
        if advertisingOff && phase != .stopping { return .advertisingOff }
        return switch phase {
        case .starting, .arming: .starting
        case .advertising: refusedEdit == nil ? .advertising : .advertisingWithRefusedEdit
        // Expected, not a fault: the frames come back at the disconnection (at most 30 s).
        case .fault(.connected): .starting
        case .fault: .adapterFault
        case .stopping: .stopped
        }
    }

    /// systemd's STATUS= line (SPEC §5: the beacon and its state, each escalation step).
    public var text: String {
        let on = "\(beacon) on \(adapter)"
        var s: String
        switch phase {
        case _ where advertisingOff && phase != .stopping: s = "advertising off (beacon.advertising = false): \(on)"
        case .starting, .arming: s = "arming \(on)"
        case .advertising: s = "advertising \(on)"
        case .fault(.connected):
            s = "\(on): \(AdapterFault.connected.rawValue)"
        case .fault(let f):
            s = "\(f.rawValue) (\(adapter)); beacon off air, "
            let failed = ladderFailures > 0 ? " (\(ladderFailures) failed re-arms)" : ""
            switch escalation {
            case .retrying: s += "retrying" + failed
            case .powerCycled: s += "took the adapter down and up, retrying" + failed
            case .restartRequested: s += "restarting the service" + failed
            }
        case .stopping: s = "stopping"
        }
        if let g = gattServer {
            s += "; GATT identity served by \(g)"
            if centrals > 0 { s += ", \(centrals) central\(centrals == 1 ? "" : "s") connected" }
        }
        if refusedEdit != nil { s += "; last config edit refused, see log" }
        let rearms = RearmCause.summary(self.rearms)
        if !rearms.isEmpty { s += "; re-arms: \(rearms)" }
        return s
    }
}

/// A change asked from afar (issue 32) and its outcome, for the status file and the log.
public struct RemoteChangeReport: Equatable, Sendable {
    /// "set power -40", "identify".
    public var request: String
    /// "mqtt altbeacond/all/beacon/set/power".
    public var origin: String
    public var applied: Bool
    /// Why it was refused: `check`'s message (FILE:LINE:COL ...); "" when applied.
    public var message: String
    /// Unix seconds.
    public var time: Int64

    public init(request: String, origin: String, applied: Bool, message: String, time: Int64) {
        self.request = request; self.origin = origin; self.applied = applied; self.message = message; self.time = time
    }

    /// How many recent changes the status file keeps (`changes`): more than one batch of
    /// settings makes at once (a setting of each kind), few enough for a small file.
    public static let kept = 16
}

/// Something that shows the daemon's status: called once per change, on the loop, never blocking.
public protocol StatusOutput: AnyObject {
    func show(_ status: DaemonStatus)
}

/// "UUID major 1 minor 2 power -59".
public func describe(_ b: BeaconIdentity) -> String {
    "\(b.uuidString) major \(b.major) minor \(b.minor) power \(b.power)"
}

/// The AltBeacon identity, then the other frames by name.
public func describe(_ c: BeaconConfig) -> String {
    let altbeacon = c.frames.contains { $0.frame is AltBeaconFrame }
    let others = c.airFrames().filter { !($0.frame is AltBeaconFrame) }.map(\.name)
    if !altbeacon { return others.joined(separator: " + ") }
    return describe(c.beacon) + (others.isEmpty ? "" : " + " + others.joined(separator: " + "))
}
