import BeaconKit
import BeaconLinux

/// Changes from afar: `RemoteChanges` (BeaconLinux) runs them; the daemon reloads, restarts,
/// identifies and shows the outcome.
extension Daemon: RemoteChangesHost {
    var isStopping: Bool { stopping }
    var canRestart: Bool { notifier.isEnabled }
    func configWritten() { reload() }
    func restartAsked() { stop(exitCode: ExitCode.restartAsked, status: "restarting, as asked from afar") }
    func identify(_ on: Bool) { sessions.identifying = on }
    func reported(_ change: RemoteChangeReport) { sessions.change = change }
}
