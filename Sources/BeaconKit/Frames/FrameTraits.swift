/// What every frame of a type shares, as data: one constant per frame type (`BeaconFrame.traits`)
/// rather than a protocol requirement each, which the static binary pays for per frame type. A
/// class: handing it out is one reference, not a copy of each field. Its members are BeaconKit's
/// (other modules see frames through `BeaconFrame`'s public members): no key-path descriptors.
public final class FrameTraits: Sendable {
    /// Its name in `check` (`advertising-data[<name>]`), `scan`'s type column and JSON, the
    /// monitor's `type =`, and the log.
    let name: String
    /// Connectable and scannable (ADV_IND) rather than ADV_NONCONN_IND: only the GATT identity.
    let isConnectable: Bool
    /// The keys of `fields` that identify a heard frame (its scan row, the `[expect.NAME]` keys a
    /// monitor matches it by), in the order the monitor's messages list them. Empty: the frame
    /// carries no ID and is told apart by its sender's address (TLM, the GATT identity).
    let identifyingKeys: [String]
    /// The line `calibrate` prints to paste into the config, from the RSSI measured 1 m away
    /// (dBm, rounded); nil for a frame without `powerAt1m`.
    let calibrationLine: (@Sendable (_ rssiAt1m: Int) -> String)?
    /// Fields that change on every advert of a healthy beacon (TLM's counters): not a change
    /// worth a scan line.
    let countingKeys: [String]
    /// Its bytes change while on air (a counter, an uptime, a rotating ID; issue 50): the
    /// advertiser refreshes its payload from the moment's `Telemetry` at every refresh, and the
    /// monitor never caches a payload carrying one. Apart from carrying telemetry readings
    /// (`TelemetryFrame`: Eddystone-TLM, whose heard readings the monitor shows).
    let refreshedOnAir: Bool
    /// Ranged by RSSI as the iOS AltBeacon library does, not from a distance: a frame that
    /// carries no power but is meant to be ranged (the GATT identity).
    let rangedByRSSI: Bool
    /// Why `[expect.NAME]` refuses the type, when it has no `identifyingKeys`.
    let notExpectable: String
    /// What it is, for the Home Assistant device of a beacon sending it (who made the beacon is
    /// not on air).
    let model: String
    /// The config key, remote setting and Home Assistant switch that turn it on and off; nil for
    /// the GATT identity, which its own table turns on.
    let switchedBy: FrameSwitch?
    /// The keys of its config table (`switchedBy.table`) it reads, besides its switch; the table's
    /// keys in `ConfigSchema` are these, from every frame type of the table.
    let configKeys: [String]
    /// What turns it on in a table that may turn on none ("url (URL)"): the table's "turns on no
    /// frame" message lists these.
    let configHint: String?

    init(name: String, model: String? = nil, switchedBy: FrameSwitch?, configKeys: [String] = [], configHint: String? = nil, isConnectable: Bool = false,
         identifyingKeys: [String] = [], calibrationLine: (@Sendable (_ rssiAt1m: Int) -> String)? = nil,
         countingKeys: [String] = [], refreshedOnAir: Bool = false, rangedByRSSI: Bool = false, notExpectable: String = "it carries no ID") {
        self.name = name; self.model = model ?? name; self.switchedBy = switchedBy; self.configKeys = configKeys
        self.configHint = configHint
        self.isConnectable = isConnectable
        self.identifyingKeys = identifyingKeys; self.calibrationLine = calibrationLine
        self.countingKeys = countingKeys; self.refreshedOnAir = refreshedOnAir
        self.rangedByRSSI = rangedByRSSI; self.notExpectable = notExpectable
    }
}

/// A line `calibrate` prints: `key = value` with the value kept within the key's range, and
/// where it goes.
func configLine(_ key: String, _ value: Int, _ range: ClosedRange<Int64>, _ comment: String) -> String {
    "\(key) = \(min(range.upperBound, max(range.lowerBound, Int64(value))))   # \(comment)"
}

/// A Bluetooth SIG company ID as a frame's fields show it: `0x0118`.
public func companyString(_ id: UInt16) -> String {
    "0x" + hexString([UInt8(id >> 8), UInt8(id & 0xff)])
}
