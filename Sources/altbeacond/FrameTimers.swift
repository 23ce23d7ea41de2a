import BeaconKit
import BeaconLinux

/// The frames' own timers (SPEC §3): a slot with several frames switches every `rotation_ms`,
/// and a TLM frame on a set of its own gets fresh telemetry every `telemetryRefreshMs`. Both run
/// only while advertising; a failed command is a fault like a failed probe.
extension Daemon {
    static let telemetryRefreshMs: Int64 = 10_000

    func scheduleFrameTimers() {
        if advertiser.rotates {
            if !loop.isScheduled("rotate") { scheduleRotation() }
        } else {
            loop.cancel("rotate")
        }
        if advertiser.hasStandingTelemetry {
            if !loop.isScheduled("telemetry") { scheduleTelemetryRefresh() }
        } else {
            loop.cancel("telemetry")
        }
    }

    func scheduleRotation() {
        loop.schedule("rotate", afterMs: Int64(config.bluetooth.rotationMs)) { [unowned self] in
            guard supervisor.phase == .advertising, advertiser.rotates else { return }
            advertiser.rotate { [unowned self] f in
                if let f { handle(.probed(f)) } else { scheduleRotation() }
            }
        }
    }

    private func scheduleTelemetryRefresh() {
        loop.schedule("telemetry", afterMs: Self.telemetryRefreshMs) { [unowned self] in
            guard supervisor.phase == .advertising, advertiser.hasStandingTelemetry else { return }
            advertiser.refreshTelemetry { [unowned self] f in
                if let f { handle(.probed(f)) } else { scheduleTelemetryRefresh() }
            }
        }
    }
}
