import BeaconKit

/// What the monitor announced to Home Assistant, remembered on the state partition (issue 38;
/// BeaconKit's `MonitorAnnounced` is the format), so that a beacon removed from the config
/// while the monitor was stopped is still cleared from the broker. Written atomically and
/// durably (`StateFile`); a failure to keep it is said once per cause.
final class MonitorAnnouncedFile {
    let file: StateFile
    private let log: Logger
    /// The last failure to write said, not said again until a write works or fails otherwise.
    private var said: Errno?

    init(file: StateFile, log: Logger) {
        self.file = file; self.log = log
    }

    /// What was announced before: none when there is no file yet, or it cannot be read (said).
    func read() -> [String] {
        do throws(Errno) {
            return try file.read(limit: MonitorAnnounced.maxBytes).map(MonitorAnnounced.parse) ?? []
        } catch {
            log.warning("MQTT: cannot read what was announced before, \(file.path) (\(error)); what is no longer configured stays on the broker")
            return []
        }
    }

    /// What is announced now (the publisher asks only when it changed).
    func remember(_ topics: [String]) {
        do throws(Errno) {
            try file.write(MonitorAnnounced.text(topics))
            said = nil
        } catch {
            guard said != error else { return }
            said = error
            log.warning("MQTT: cannot keep what was announced in \(file.path) (\(error)); a beacon removed from the config may stay in Home Assistant")
        }
    }
}
