/// What the monitor knows of the beacon daemon on its own machine, from its status file: whether
/// its device is announced (once the file was read), its version (the device's `sw_version`), its
/// frames' identities (`SharedBeaconDevice.local`) and its Bluetooth address; the last ones read,
/// kept while the daemon is away so that its discovery does not change.
struct LocalBeaconKnown: Equatable, Sendable {
    var announced = false
    var version: String?
    var shared: SharedBeaconDevice = .none
    var address: String?

    /// The status file as judged now (nil: none): what it says of a running daemon is noted.
    mutating func note(_ health: HealthCheck.Result?) {
        if let v = health?.status?["version"]?.string { version = v }
        if let h = health, h.verdict != .unknown, h.status != nil {
            shared = SharedBeaconDevice.local(h.status)
            address = MonitorExport.localBeaconAddress(h.status)
        }
    }

    /// Notes `health`; true when the device's discovery must go (again): its status file first
    /// appeared, or its version, frames' identities or address changed.
    mutating func noteAnnouncing(_ health: HealthCheck.Result?) -> Bool {
        let before = self
        note(health)
        guard (health != nil && !announced) || (announced && before != self) else { return false }
        announced = true
        return true
    }
}

/// The "Change" events (issue 38): each change of the status file as one event, once: not again
/// at the next session, not for a change made before the monitor first looked (a restarted
/// monitor would say it twice), and every one a batch made, by its number since the daemon
/// started (issue 48: the file may hold several by the time it is read).
struct LocalChangeEvents: Sendable {
    typealias Event = (n: Int64?, time: Int64, payload: String)
    /// The last event sent without a number (an older daemon's).
    private var lastPayload: String?
    /// The last number sent, and the daemon's start it counts from.
    private var lastNumber: (started: Int64, n: Int64)?
    private var firstLookS: Int64?

    /// The monitor looked at `nowS`: a change before the first look is not new. Returns the first.
    @discardableResult
    mutating func look(nowS: Int64) -> Int64 {
        let first = firstLookS ?? nowS
        firstLookS = first
        return first
    }

    /// Of `events` in the status file read at `nowS` (of a daemon started at `started`), those not sent yet.
    mutating func new(_ events: [Event], started: Int64, nowS: Int64) -> [Event] {
        let first = look(nowS: nowS)
        return events.filter { e in
            if let n = e.n {
                // a new daemon numbers from 1 again
                if let last = lastNumber, last.started == started, n <= last.n { return false }
                lastNumber = (started, n)
            } else {
                guard e.payload != lastPayload else { return false }
                lastPayload = e.payload
            }
            return e.time >= first
        }
    }
}

/// The machine as the local beacon's state shows it: the SoC temperature moves on only by a
/// whole degree or more (`stepMilliC`): a Pi's wanders by tenths all day, and each new value in
/// the state is a recorder row in Home Assistant (issue 48's many-monitors benchmark: ≤ 1,000 a day).
struct ShownMachine: Sendable {
    static let stepMilliC: Int64 = 1000
    /// As the caller last read it.
    var latest = LocalMachine()
    private var socShownMilliC: Int64?

    mutating func shown() -> LocalMachine {
        var m = latest
        if let t = m.socTemperatureMilliC {
            if let shown = socShownMilliC, abs(t - shown) < Self.stepMilliC { m.socTemperatureMilliC = shown } else { socShownMilliC = t }
        }
        return m
    }
}
