/// `altbeacond calibrate` (SPEC §10): the beacon's RSSI at 1 m as this receiver measures it, for
/// the line each frame type writes to paste into its config (`FrameTraits.calibrationLine`:
/// AltBeacon's and iBeacon's `power =`, Eddystone's `power_0m =`). Per beacon frame heard:
/// every sample, sorted, the lowest and highest tenth dropped (the middle 80 %), the rest averaged.
public struct Calibration: Sendable {
    public struct Result: Equatable, Sendable {
        public var key: BeaconKey
        /// "altbeacon 2f23... major 1 minor 2"
        public var label: String
        public var type: String
        public var samples: Int
        /// The middle 80 %'s mean, dBm.
        public var rssiAt1m: Double
        /// What to paste into the beacon's config: `power = -63` or `power_0m = -22`, and where.
        public var configLine: String
    }

    private var samples: [BeaconKey: (label: String, frameType: any BeaconFrame.Type, rssi: [Int])] = [:]
    /// Sightings without an RSSI (127: the controller does not measure it).
    public private(set) var withoutRSSI = 0
    public init() {}
    /// Under this many adverts a figure is shown with a warning.
    public static let fewSamples = 10

    public mutating func record(_ s: Sighting) {
        // TLM carries no power to calibrate; the GATT identity neither.
        guard s.powerAt1m != nil else { return }
        guard s.rssiAvailable else { withoutRSSI += 1; return }
        let key = s.key
        let label = ([s.type] + s.identifyingFields.map { "\($0.key) \($0.text)" }).joined(separator: " ")
        samples[key, default: (label, type(of: s.frame), [])].rssi.append(Int(s.rssi))
    }

    /// The mean of the middle 80 % (`n / 10` dropped from each end); nil for no samples.
    public static func middleMean(_ values: [Int]) -> Double? {
        guard !values.isEmpty else { return nil }
        let sorted = values.sorted()
        let cut = sorted.count / 10
        let middle = sorted[cut..<(sorted.count - cut)]
        return Double(middle.reduce(0, +)) / Double(middle.count)
    }

    /// One result per frame heard with RSSI, in scan's order.
    public var results: [Result] {
        samples.keys.sorted().compactMap { key in
            guard let e = samples[key], let mean = Self.middleMean(e.rssi) else { return nil }
            let rounded = Int((mean < 0 ? mean - 0.5 : mean + 0.5).rounded(.towardZero))
            let line = e.frameType.traits.calibrationLine?(rounded) ?? ""
            return Result(key: key, label: e.label, type: e.frameType.name, samples: e.rssi.count, rssiAt1m: mean, configLine: line)
        }
    }

    /// What `calibrate` prints.
    public func report(adapter: String, seconds: Int) -> String {
        var out = "altbeacond calibrate: \(seconds) s on \(adapter), the beacon 1 m from this receiver\n"
        for r in results {
            let tenth = (r.rssiAt1m * 10).rounded() / 10
            out += "\(r.label): \(r.samples) adverts, \(tenth) dBm at 1 m (middle 80 %)\n  \(r.configLine)\n"
            if r.samples < Self.fewSamples {
                out += "  (only \(r.samples) adverts: too few to trust; scan longer with --seconds)\n"
            }
        }
        out += "These figures belong to this receiver: another phone or scanner (antenna, enclosure, chipset) "
            + "measures the same beacon differently. Calibrate with the receiver the beacon is for.\n"
        return out
    }
}
