import BeaconKit

/// The status LEDs as a status output (SPEC §4). While stopping, the pattern stays as it was: the
/// lines are released only once advertising is confirmed off (`release()`).
public final class LEDStatusOutput: StatusOutput {
    public let lights: StatusLights
    public init(lights: StatusLights) { self.lights = lights }

    public func show(_ status: DaemonStatus) {
        if status.phase == .stopping { return }
        lights.show(status.health)
    }

    public func release() { lights.release() }
}

/// systemd's STATUS= (SPEC §5), sent only when the text changed.
public final class SystemdStatusOutput: StatusOutput {
    private let notifier: SystemdNotifier
    private var last = ""
    public init(notifier: SystemdNotifier) { self.notifier = notifier }

    public func show(_ status: DaemonStatus) {
        let text = status.text
        guard text != last else { return }
        last = text
        notifier.notify("STATUS=\(text)")
    }
}
