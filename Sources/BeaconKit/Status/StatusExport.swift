/// The beacon's health for whoever looks from outside the process (SPEC §10), network-free: the
/// JSON status file that `altbeacond health` reads, and the Prometheus text file that
/// node_exporter's textfile collector serves. Pure: the daemon writes what these return.
public struct StatusExport: Equatable, Sendable {
    public var status: DaemonStatus
    public var version: String
    public var pid: Int32
    /// Wall-clock seconds (Unix time): when the daemon started, and of this snapshot.
    public var startTime: Int64
    public var updated: Int64

    public init(status: DaemonStatus, version: String, pid: Int32, startTime: Int64, updated: Int64) {
        self.status = status; self.version = version; self.pid = pid; self.startTime = startTime; self.updated = updated
    }

    /// Every frame configured, and whether it is on air now: all of them while advertising, but
    /// the GATT identity while a central is connected (it is left out then, SPEC §3).
    public var frames: [(name: String, onAir: Bool)] {
        let advertising = status.phase == .advertising
        var out = status.frames.map { ($0, advertising) }
        if status.gattServer != nil { out.append((GATTIdentity.name, advertising && status.centrals == 0)) }
        return out
    }

    // MARK: JSON status file

    /// One JSON object on one line, then a newline.
    public var json: String {
        let verdict = HealthVerdict(status)
        var members: [String] = [
            "\"version\":" + jsonString(version),
            "\"pid\":\(pid)",
            "\"started\":\(startTime)",
            "\"updated\":\(updated)",
            "\"health\":" + jsonString(verdict.word),
            "\"exit\":\(verdict.rawValue)",
            "\"state\":" + jsonString(status.stateWord),
            "\"summary\":" + jsonString(status.text),
            "\"adapter\":" + jsonString(status.adapter),
            "\"beacon\":" + jsonString(status.beacon),
            "\"mode\":" + jsonString(status.mode),
            "\"interval_ms\":\(status.intervalMs)",
        ]
        members.append("\"frames\":[" + frames.map { "{\"frame\":\(jsonString($0.name)),\"on_air\":\($0.onAir)}" }.joined(separator: ",") + "]")
        if case .fault(let f) = status.phase { members.append("\"fault\":" + jsonString(f.rawValue)) } else { members.append("\"fault\":null") }
        members.append("\"escalation\":" + jsonString(status.escalation.rawValue))
        members.append("\"ladder_failures\":\(status.ladderFailures)")
        members.append("\"rearms\":{" + RearmCause.allCases.map { "\(jsonString($0.rawValue)):\(status.rearms[$0] ?? 0)" }.joined(separator: ",") + "}")
        members.append("\"escalations\":{" + Self.ladderSteps.map { "\(jsonString($0.rawValue)):\(status.escalations[$0] ?? 0)" }.joined(separator: ",") + "}")
        members.append("\"config_refused\":\(status.refusedEdit != nil)")
        members.append("\"refused_edit\":" + (status.refusedEdit.map(jsonString) ?? "null"))
        members.append("\"gatt_server\":" + (status.gattServer.map(jsonString) ?? "null"))
        members.append("\"centrals\":\(status.centrals)")
        members.append("\"address\":" + (status.address.map(jsonString) ?? "null"))
        members += remoteMembers
        return "{" + members.joined(separator: ",") + "}\n"
    }

    static let ladderSteps: [Escalation] = [.powerCycled, .restartRequested]

    // MARK: Prometheus text format (exposition format 0.0.4)

    public var prometheus: String {
        var out = PrometheusText()
        let verdict = HealthVerdict(status)
        out.family("altbeacond_build_info", "gauge", "The running altbeacond's version.", [("version=" + PrometheusText.label(version), "1")])
        out.family("altbeacond_on_air", "gauge", "1 while every configured frame is on air (the GATT identity aside while a central is connected).",
                   [("", status.phase == .advertising ? "1" : "0")])
        out.family("altbeacond_health", "gauge", "What altbeacond health exits with: 0 on air, 1 degraded, 2 off air.", [("", "\(verdict.rawValue)")])
        out.family("altbeacond_frame_on_air", "gauge", "1 while the frame is on air.",
                   frames.map { ("frame=" + PrometheusText.label($0.name), $0.onAir ? "1" : "0") })
        out.family("altbeacond_rearms_total", "counter", "Re-arms by cause since the adapter session began.",
                   RearmCause.allCases.map { ("cause=" + PrometheusText.label($0.rawValue), "\(status.rearms[$0] ?? 0)") })
        out.family("altbeacond_escalations_total", "counter", "Steps of the escalation ladder taken since the adapter session began.",
                   Self.ladderSteps.map { ("step=" + PrometheusText.label($0.rawValue), "\(status.escalations[$0] ?? 0)") })
        out.family("altbeacond_config_refused", "gauge", "1 while the config file on disk is refused and the last good one stays on air.",
                   [("", status.refusedEdit == nil ? "0" : "1")])
        if status.gattServer != nil {
            out.family("altbeacond_gatt_centrals", "gauge", "Centrals connected to the GATT identity.", [("", "\(status.centrals)")])
        }
        out.family("altbeacond_start_time_seconds", "gauge", "When the daemon started (Unix time).", [("", "\(startTime)")])
        out.family("altbeacond_last_update_timestamp_seconds", "gauge", "When this file was written (Unix time); at least every 60 s.",
                   [("", "\(updated)")])
        return out.text
    }
}

/// What `altbeacond health` exits with, as monitoring plugins do (Nagios' convention).
public enum HealthVerdict: Int32, Sendable {
    /// Every frame on air.
    case onAir = 0
    /// On air, but something needs a look: a refused edit, a recovery in progress (re-arming, or
    /// frames waiting for a GATT central to disconnect).
    case degraded = 1
    /// Not on air: an adapter fault, or stopping.
    case offAir = 2
    /// Not known: the daemon is not running or its status file is missing, unreadable or stale.
    case unknown = 3

    public init(_ s: DaemonStatus) {
        // Off on purpose is still off air: whoever watches the fleet is told, not soothed.
        if s.advertisingOff && s.phase != .stopping { self = .offAir; return }
        switch s.phase {
        case .advertising: self = s.refusedEdit == nil && s.ladderFailures == 0 ? .onAir : .degraded
        case .starting, .arming, .fault(.connected): self = .degraded
        case .fault, .stopping: self = .offAir
        }
    }

    public var word: String {
        switch self {
        case .onAir: "on-air"
        case .degraded: "degraded"
        case .offAir: "off-air"
        case .unknown: "unknown"
        }
    }
}

extension DaemonStatus {
    /// The phase in one word for machines ("advertising", "fault", ...).
    public var stateWord: String {
        if advertisingOff && phase != .stopping { return "off" }
        return switch phase {
        case .starting: "starting"
        case .arming: "arming"
        case .advertising: "advertising"
        case .fault(.connected): "connected"
        case .fault: "fault"
        case .stopping: "stopping"
        }
    }
}
