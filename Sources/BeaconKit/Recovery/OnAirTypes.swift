/// How much of the controller setup an arm must redo.
public enum ArmScope: Int, Comparable, Sendable {
    /// Advertising data only (the identity changed).
    case data = 0
    /// Disable, parameters, data, enable (the interval changed, or someone else touched advertising).
    case parameters = 1
    /// Also bring the adapter up and (re)open and re-read it (down, removed, hung).
    case full = 2
    /// Take the adapter down first (HCIDEVDOWN, then up): the kernel re-runs the controller's
    /// setup, e.g. the Pi's firmware patch. The escalation for a controller that keeps failing.
    case powerCycle = 3
    public static func < (a: ArmScope, b: ArmScope) -> Bool { a.rawValue < b.rawValue }

    /// What an edit from `old` to `new` must redo on the same adapter; nil when nothing on air
    /// changed (LEDs, the probe period). A new adapter is a new session, not a scope.
    public static func needed(from old: BeaconConfig, to new: BeaconConfig) -> ArmScope? {
        if new.bluetooth.intervalMs != old.bluetooth.intervalMs || new.bluetooth.txPowerDbm != old.bluetooth.txPowerDbm {
            return .parameters
        }
        let oldFrames = old.airFrames(), newFrames = new.airFrames()
        // Frames added or removed: the slots are laid out anew.
        if newFrames.map(\.name) != oldFrames.map(\.name) { return .parameters }
        // A name given or taken away: the PDU type changes (ADV_SCAN_IND or ADV_NONCONN_IND).
        if newFrames.map(\.pdu) != oldFrames.map(\.pdu) { return .parameters }
        // Only the frames whose bytes changed are sent again.
        if newFrames != oldFrames { return .data }
        return nil
    }
}

/// Why arming or probing the controller failed.
public enum ArmFailure: Error, Equatable, Sendable {
    case missing, blocked, down, timeout
    /// Another program holds the adapter (HCI user channel: EBUSY).
    case busy
    case rejected(String)

    /// What the failure says of the adapter, and the cause its re-arm is counted under.
    var meaning: (fault: AdapterFault, cause: RearmCause) {
        switch self {
        case .missing: (.missing, .removed)
        case .blocked: (.blocked, .rfkill)
        case .down: (.down, .down)
        case .timeout: (.hung, .hung)
        case .busy: (.busy, .busy)
        case .rejected: (.failing, .failing)
        }
    }

    /// The line for the beacon going off air with this failure.
    var offAirWarning: String {
        let fault = meaning.fault
        var text = fault.rawValue
        if case .rejected(let why) = self { text += ": \(why)" }
        let retry = fault == .busy ? "asking again every few seconds (stop the other program, e.g. btmgmt or a user-channel tool)" : "retrying"
        return "\(text); beacon off air, \(retry)"
    }
}

/// What is wrong with the adapter while the beacon is off air.
public enum AdapterFault: String, Equatable, Sendable {
    case missing = "adapter missing"
    case blocked = "adapter blocked by rfkill"
    case down = "adapter down"
    case hung = "controller not answering"
    case failing = "controller failing"
    case busy = "adapter held by another program (HCI user channel)"
    /// The controller refuses advertising while a central is connected to the GATT identity:
    /// the frames resume at the disconnection (at most `CentralConnections.limitMs` away).
    case connected = "central connected; the controller advertises again when it disconnects"
}

/// Re-arm causes, counted for STATUS=, the log and the metrics.
public enum RearmCause: String, CaseIterable, Sendable {
    case reset, down, disabled, overwritten, rfkill, removed, hung, hardwareError = "hardware-error", failing, busy

    /// "reset 2, down 1": the causes counted (non-zero), in `allCases` order, as STATUS= and the
    /// log lines print them.
    public static func summary(_ counts: [RearmCause: Int]) -> String {
        allCases.compactMap { c in counts[c].flatMap { $0 > 0 ? "\(c.rawValue) \($0)" : nil } }.joined(separator: ", ")
    }
}

/// Where the beacon is: the policy's phase, and the same type is the status's
/// (`DaemonStatus.Phase`), so the two cannot drift apart.
public enum PolicyPhase: Equatable, Sendable {
    case starting, arming, advertising, fault(AdapterFault)
    /// Taking the beacon off air before exit; the policy handles no more events.
    case stopping
}

/// Where a controller that keeps failing is on the escalation ladder (SPEC §5).
public enum Escalation: String, CaseIterable, Equatable, Sendable {
    /// Re-arming with back-off.
    case retrying
    /// The adapter was taken down and up; re-arming again.
    case powerCycled = "power-cycled"
    /// Still failing: the service asked systemd for a restart.
    case restartRequested = "restart-requested"
}

/// The policy's timers; each adapter session keeps one loop timer per case.
public enum PolicyTimer: CaseIterable, Sendable {
    case rearm, probe, rotate, payloadRefresh, armDeadline
    /// The oldest central connection reaches `CentralConnections.limitMs`.
    case connectionLimit
}

/// What an arm put on air, as the advertiser reports it.
public struct AirSummary: Equatable, Sendable {
    /// Some slot switches frames every `rotation_ms`.
    public var rotates: Bool
    /// Some frame with telemetry has a slot of its own: its data is refreshed now and then.
    public var refreshesPayloads: Bool
    public init(rotates: Bool = false, refreshesPayloads: Bool = false) {
        self.rotates = rotates
        self.refreshesPayloads = refreshesPayloads
    }
}

public enum PolicyEvent: Equatable, Sendable {
    case start
    case adapterRegistered, adapterUnregistered, adapterUp, adapterDown
    /// rfkill state changed somewhere: a blocked adapter may be usable again.
    case rfkillChanged
    /// A command to our controller seen on the HCI monitor, with what we have on air now.
    case monitored(HCIOpcode, [UInt8], ours: OnAirAdvertising)
    case hardwareError
    /// The outcome of the `.arm` of config generation `generation`.
    case armed(generation: Int, Result<AirSummary, ArmFailure>)
    /// The outcomes of `.probe`, `.rotate` and `.refreshPayloads` (nil: done).
    case probed(ArmFailure?)
    case rotated(ArmFailure?)
    case payloadsRefreshed(ArmFailure?)
    case timer(PolicyTimer)
    /// A new config was accepted for this adapter (generation: the daemon's count of applied configs).
    case configChanged(BeaconConfig, generation: Int)
    /// A central connected to (disconnected from) our connectable advertising: LE Connection
    /// Complete in the peripheral role, Disconnection Complete, or a Disconnect refused because
    /// the link was already gone.
    case centralConnected(handle: UInt16)
    case centralDisconnected(handle: UInt16)
    case stop
}

public enum PolicyAction: Equatable, Sendable {
    /// Configure the controller for `config` (of generation `generation`), redoing `scope`.
    case arm(ArmScope, BeaconConfig, generation: Int)
    /// The arm in flight is given up (deadline, adapter gone): its completion must never come.
    case abandonArm
    case probe, rotate, refreshPayloads
    case schedule(PolicyTimer, afterMs: Int64)
    case cancel(PolicyTimer)
    case closeAdapter
    /// Take every set off air (stop).
    case disableAdvertising
    /// Config generation `generation` is on air, confirmed by the controller; `announce`: worth
    /// a log line (not for a data-only edit of a beacon already on air).
    case confirmed(generation: Int, announce: Bool)
    case notice(String)
    case warning(String)
    /// The escalation's last step (SPEC §5): the service should be restarted now.
    case requestRestart
    /// End a central's connection (held past `CentralConnections.limitMs`).
    case disconnect(handle: UInt16)
}
