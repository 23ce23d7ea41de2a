import BeaconKit

/// Changes from afar: `RemoteChanges` (BeaconLinux) runs them; the daemon reloads, restarts,
/// identifies and shows the outcome.
extension Daemon: RemoteChangesHost {
    public var isStopping: Bool { stopping }
    public var canRestart: Bool { notifier.isEnabled }
    public func configWritten() { reload() }
    public func restartAsked() { stop(exitCode: ExitCode.restartAsked, status: "restarting, as asked from afar") }
    public func identify(_ on: Bool) { sessions.identifying = on }
    public func reported(_ change: RemoteChangeReport) { sessions.reported(change) }
}
