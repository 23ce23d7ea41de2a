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
    /// Ranged by RSSI as the iOS AltBeacon library does, not from a distance: a frame that
    /// carries no power but is meant to be ranged (the GATT identity).
    let rangedByRSSI: Bool
    /// Why `[expect.NAME]` refuses the type, when it has no `identifyingKeys`.
    let notExpectable: String

    init(name: String, isConnectable: Bool = false, identifyingKeys: [String] = [],
         calibrationLine: (@Sendable (_ rssiAt1m: Int) -> String)? = nil, countingKeys: [String] = [],
         rangedByRSSI: Bool = false, notExpectable: String = "it carries no ID") {
        self.name = name; self.isConnectable = isConnectable
        self.identifyingKeys = identifyingKeys; self.calibrationLine = calibrationLine
        self.countingKeys = countingKeys
        self.rangedByRSSI = rangedByRSSI; self.notExpectable = notExpectable
    }
}

/// A line `calibrate` prints: `key = value` with the value kept within the key's range, and
/// where it goes.
func configLine(_ key: String, _ value: Int, _ range: ClosedRange<Int>, _ comment: String) -> String {
    "\(key) = \(min(range.upperBound, max(range.lowerBound, value)))   # \(comment)"
}
