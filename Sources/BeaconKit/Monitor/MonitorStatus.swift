/// What the monitor knows at one moment, handed to its outputs (the log, systemd's STATUS=, the
/// metrics file, MQTT): the expected beacons and the scan. A value: outputs never ask the
/// session anything else.
public struct MonitorStatus: Sendable {
    public var adapter: String
    public var tracker: BeaconTracker
    public var scanning: Bool
    /// Why the monitor is not scanning (said in STATUS=); nil while scanning or before the first try.
    public var scanProblem: String?

    public init(adapter: String, tracker: BeaconTracker, scanning: Bool, scanProblem: String?) {
        self.adapter = adapter; self.tracker = tracker; self.scanning = scanning; self.scanProblem = scanProblem
    }

    /// systemd's STATUS=: "scanning on hci1; 1 of 2 expected beacons heard (silent: b)".
    public var text: String {
        let states = tracker.states
        let heard = states.filter(\.heard).count
        let scan = scanning ? "scanning on \(adapter)" : (scanProblem ?? "not scanning")
        return "\(scan); \(heard) of \(states.count) expected beacons heard"
            + (tracker.allHeard ? "" : " (silent: \(states.filter { !$0.heard }.map(\.name).joined(separator: ", ")))")
    }
}

/// The MQTT output's own figures, for the metrics file (absent without `[mqtt]`).
public struct MonitorMQTTFigures: Sendable, Equatable {
    /// The broker accepted the session and it is up.
    public var connected: Bool
    /// Messages left out while the broker took no more bytes (`MQTTOutbox`).
    public var droppedTotal: Int
    /// Another monitor was heard publishing as our node (`MonitorNodeClash`).
    public var nodeClash: Bool

    public init(connected: Bool, droppedTotal: Int, nodeClash: Bool) {
        self.connected = connected; self.droppedTotal = droppedTotal; self.nodeClash = nodeClash
    }
}
