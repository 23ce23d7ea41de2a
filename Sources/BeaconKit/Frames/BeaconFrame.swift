/// One kind of beacon advertisement (SPEC §3). Each frame type is one file: a value type that
/// encodes itself as the AD structures sent on air, decodes itself from what a scanner heard,
/// lists its fields for `check` and `scan`, and says how a heard one is identified, how loud it
/// says it is, and what `calibrate` and the monitor make of it. Everything else (the advertiser,
/// the interference classifier, `check`, `scan`, `calibrate`, the monitor) uses frames only
/// through this protocol and the registry, `BeaconFrames.types`.
public protocol BeaconFrame: Sendable {
    /// Its name in `check` (`advertising-data[<name>]`), `scan`'s type column and JSON, the
    /// monitor's `type =`, and the log.
    static var name: String { get }
    /// The AD structures exactly as sent, flags first, at most 31 bytes (a whole legacy payload).
    /// Frames that carry telemetry read it from `telemetry`; the others ignore it.
    func advertisingData(_ telemetry: Telemetry) -> [UInt8]
    /// Decoded fields, in display order: ("uuid", "2f234454-..."), ("major", "1"), ...
    var fields: [FrameField] { get }
    /// The frame in a received advertising payload, or nil when it holds no such frame. Checks
    /// every length before reading: any nearby device can send these bytes.
    static func decode(_ data: ArraySlice<UInt8>) -> Self?
    /// Connectable and scannable (ADV_IND) rather than ADV_NONCONN_IND: only the GATT identity.
    var isConnectable: Bool { get }
    /// The scan response a connectable frame answers scan requests with; empty for the others.
    var scanResponseData: [UInt8] { get }

    /// The keys of `fields` that identify a heard frame (its scan row, the `[expect.NAME]` keys
    /// a monitor matches it by), in the order the monitor's messages list them. Empty: the frame
    /// carries no ID and is told apart by its sender's address (TLM, the GATT identity).
    static var identifyingKeys: [String] { get }
    /// The power the frame says a receiver measures near it, for distance and `calibrate`; nil
    /// when it carries none.
    var referencePower: ReferencePower? { get }
    /// The line `calibrate` prints to paste into the config, for `rssiAt1m` (dBm, rounded)
    /// measured 1 m away; nil for a frame without a reference power.
    static func calibrationLine(rssiAt1m: Int) -> String?
    /// True when the payload changes while on air (telemetry): the advertiser refreshes it from
    /// `Telemetry`, and the monitor does not cache its payloads.
    var carriesTelemetry: Bool { get }
    /// What a heard frame says of its beacon (TLM), for the monitor: nil for the others, and for
    /// a frame the daemon sends (its telemetry comes from `Telemetry`).
    var telemetryReceived: Telemetry? { get }
    /// Fields that change on every advert of a healthy beacon (TLM's counters): a scan line
    /// reports no change for them.
    static var countingKeys: [String] { get }
    /// How near a heard frame is: from the distance, by default.
    static func proximity(rssi: Int8, distanceMeters: Double?) -> Proximity
    /// The frame a monitor's `[expect.NAME]` table of this type describes, from its
    /// `identifyingKeys`; nil, with the problems reported on `table`, when refused. Never asked
    /// of a frame without `identifyingKeys`.
    static func expected(_ table: inout ExpectationTable) -> Self?
    /// Why `[expect.NAME]` refuses this type, when it has no `identifyingKeys`.
    static var notExpectable: String { get }
}

extension BeaconFrame {
    public var name: String { Self.name }
    public var isConnectable: Bool { false }
    public var scanResponseData: [UInt8] { [] }
    public static var identifyingKeys: [String] { [] }
    public var referencePower: ReferencePower? { nil }
    public static func calibrationLine(rssiAt1m: Int) -> String? { nil }
    public var carriesTelemetry: Bool { false }
    public var telemetryReceived: Telemetry? { nil }
    public static var countingKeys: [String] { [] }
    public static func proximity(rssi: Int8, distanceMeters: Double?) -> Proximity { Proximity(distanceMeters: distanceMeters) }
    public static func expected(_ table: inout ExpectationTable) -> Self? { nil }
    public static var notExpectable: String { "\(name) frames carry no ID" }

    /// The fields that identify it (`identifyingKeys`), in display order.
    public var identifyingFields: [FrameField] {
        let keys = Self.identifyingKeys
        return keys.isEmpty ? [] : fields.filter { keys.contains($0.key) }
    }

    /// The other fields (AltBeacon: power, company_id, reserved), in display order.
    public var otherFields: [FrameField] {
        let keys = Self.identifyingKeys
        return keys.isEmpty ? fields : fields.filter { !keys.contains($0.key) }
    }
}

/// The signal a frame says a receiver gets at the distance its format names.
public enum ReferencePower: Equatable, Sendable {
    /// dBm at 1 m: AltBeacon's REFERENCE RSSI, iBeacon's measured power.
    case oneMetre(Int8)
    /// dBm at 0 m: Eddystone's TX power.
    case zeroMetres(Int8)

    /// The usual loss over the first metre (Google's own guidance for Eddystone; `power_0m`
    /// defaults from `beacon.power` by it).
    public static let firstMetreLossDb = 41

    /// The figure at 1 m. A 0 m figure less `firstMetreLossDb`: rougher, but acceptable for a
    /// distance that is a rough guide anyway.
    public var dBmAt1m: Int {
        switch self {
        case .oneMetre(let p): Int(p)
        case .zeroMetres(let p): Int(p) - Self.firstMetreLossDb
        }
    }
}

/// A field as `check` and `scan` show it. `number` fields go into JSON unquoted.
public struct FrameField: Equatable, Sendable {
    public var key: String
    /// As JSON has it (a number field's digits).
    public var value: String
    public var isNumber: Bool
    /// As people read it (`check`, scan's table and plain lines): `value`, or e.g. a byte as `0xaa`.
    public var text: String
    public init(_ key: String, _ value: String, number: Bool = false, text: String? = nil) {
        self.key = key; self.value = value; isNumber = number; self.text = text ?? value
    }
    public static func number<I: BinaryInteger>(_ key: String, _ v: I) -> FrameField { FrameField(key, "\(v)", number: true) }
    /// A byte: a number in JSON (170), `0xaa` for people.
    public static func byte(_ key: String, _ v: UInt8) -> FrameField {
        FrameField(key, "\(v)", number: true, text: "0x" + hexString(CollectionOfOne(v)))
    }
}

/// What the beacon knows about itself, for the Eddystone-TLM frame.
public struct Telemetry: Equatable, Sendable {
    /// Time since the beacon went on air, in 0.1 s units.
    public var uptimeDeciseconds: UInt32
    /// Advertising PDUs sent since then (all frames).
    public var advertisingCount: UInt32
    /// SoC temperature in °C as signed 8.8 fixed point; nil when not readable.
    public var temperature: Int16?
    /// Battery voltage in mV; 0: mains powered (a Pi has no battery).
    public var batteryMillivolts: UInt16

    public init(uptimeDeciseconds: UInt32, advertisingCount: UInt32, temperature: Int16?, batteryMillivolts: UInt16 = 0) {
        self.uptimeDeciseconds = uptimeDeciseconds; self.advertisingCount = advertisingCount
        self.temperature = temperature; self.batteryMillivolts = batteryMillivolts
    }

    public static let zero = Telemetry(uptimeDeciseconds: 0, advertisingCount: 0, temperature: nil)

    /// Millidegrees as Linux's thermal zones report them -> 8.8 fixed point (clamped).
    /// Clamped before multiplying (no overflow trap on absurd readings), and to ±0x7fff:
    /// -0x8000 is 0x8000 on air, Eddystone-TLM's "not supported".
    public static func fixed88(millidegrees: Int64) -> Int16 {
        let m = min(max(millidegrees, -128_000), 128_000)
        return Int16(clamping: max(m * 256 / 1000, -0x7fff))
    }
}

/// A frame as configured: compared by name and the bytes it would send, so two configs that put
/// the same bytes on air are the same.
public struct ConfiguredFrame: Equatable, Sendable {
    public let frame: any BeaconFrame
    public init(_ frame: any BeaconFrame) { self.frame = frame }
    public var name: String { frame.name }
    public static func == (a: ConfiguredFrame, b: ConfiguredFrame) -> Bool {
        a.name == b.name && a.frame.advertisingData(.zero) == b.frame.advertisingData(.zero)
            && a.frame.scanResponseData == b.frame.scanResponseData
    }
}

/// The AD structures of an advertising payload, each as (type, data), every length checked.
/// Stops at an early zero length (the rest is padding) or a structure running off the end.
public func adStructures(_ data: ArraySlice<UInt8>) -> [(type: UInt8, data: ArraySlice<UInt8>)] {
    var out: [(UInt8, ArraySlice<UInt8>)] = []
    var i = data.startIndex
    while i < data.endIndex {
        let len = Int(data[i])
        if len == 0 { break }
        let end = i + 1 + len
        guard end <= data.endIndex else { break }
        out.append((data[i + 1], data[(i + 2)..<end]))
        i = end
    }
    return out
}

/// `calibrate`'s `power = ...` line (a reference RSSI at 1 m, -127...0 as `beacon.power`), with
/// where it goes.
func powerLine(_ rssiAt1m: Int, comment: String) -> String {
    "power = \(min(0, max(-127, rssiAt1m)))   # \(comment)"
}

/// The flags AD every frame starts with: LE General Discoverable, BR/EDR not supported.
let flagsAD: [UInt8] = [0x02, 0x01, 0x06]

func be16(_ v: UInt16) -> [UInt8] { [UInt8(truncatingIfNeeded: v >> 8), UInt8(truncatingIfNeeded: v)] }
func be32(_ v: UInt32) -> [UInt8] { [UInt8(truncatingIfNeeded: v >> 24), UInt8(truncatingIfNeeded: v >> 16), UInt8(truncatingIfNeeded: v >> 8), UInt8(truncatingIfNeeded: v)] }
func readBE16(_ b: ArraySlice<UInt8>, _ at: Int) -> UInt16 { UInt16(b[b.startIndex + at]) << 8 | UInt16(b[b.startIndex + at + 1]) }
func readBE32(_ b: ArraySlice<UInt8>, _ at: Int) -> UInt32 {
    UInt32(readBE16(b, at)) << 16 | UInt32(readBE16(b, at + 2))
}
/// Exactly `n` bytes, zero-padded or cut: a malformed value never misaligns a frame.
func exactly(_ n: Int, _ bytes: [UInt8]) -> [UInt8] {
    bytes.count >= n ? Array(bytes.prefix(n)) : bytes + [UInt8](repeating: 0, count: n - bytes.count)
}
