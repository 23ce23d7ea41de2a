/// One kind of beacon advertisement (SPEC §3). Each frame type is one file: a value type that
/// encodes itself as the AD structures sent on air, decodes itself from what a scanner heard,
/// lists its fields for `check` and `scan`, says how loud it is, and names what every frame of
/// its type shares (`traits`: its name, how a heard one is identified, calibrated and ranged).
/// Frames the monitor can expect are also `ExpectableFrame`s, frames carrying telemetry
/// `TelemetryFrame`s. Everything else (the advertiser, the interference classifier, `check`,
/// `scan`, `calibrate`, the monitor) uses frames only through these protocols and the registry,
/// `BeaconFrames.types`.
public protocol BeaconFrame: Sendable {
    /// What every frame of the type shares (`FrameTraits`).
    static var traits: FrameTraits { get }
    /// The AD structures exactly as sent, flags first, at most 31 bytes (a whole legacy payload).
    /// Frames that carry telemetry read it from `telemetry`; the others ignore it.
    func advertisingData(_ telemetry: Telemetry) -> [UInt8]
    /// Decoded fields, in display order: ("uuid", "2f234454-..."), ("major", "1"), ...
    var fields: [FrameField] { get }
    /// The frame in a received advertising payload, or nil when it holds no such frame. Checks
    /// every length before reading: any nearby device can send these bytes.
    static func decode(_ data: ArraySlice<UInt8>) -> Self?
    /// The scan response a connectable frame answers scan requests with; empty for the others.
    var scanResponseData: [UInt8] { get }
    /// The signal it says a receiver measures 1 m away, in dBm, for distance and `calibrate`:
    /// AltBeacon's REFERENCE RSSI and iBeacon's measured power are at 1 m, Eddystone's TX power
    /// at 0 m less the first metre's loss; nil when it carries no power.
    var powerAt1m: Int? { get }
}

/// A frame the monitor can expect (`[expect.NAME]`): one with `traits.identifyingKeys`.
protocol ExpectableFrame: BeaconFrame {
    /// The frame an `[expect.NAME]` table of this type describes (`table`, named `name` in
    /// messages), read from its `traits.identifyingKeys` with `config`'s typed readers; nil, with the
    /// problems reported, when refused.
    static func expected(_ config: inout ConfigValidator, _ table: TOMLTable, name: String) -> Self?
}

/// A frame the config file describes, in its switch's table (`traits.switchedBy.table`).
protocol ConfigurableFrame: BeaconFrame {
    /// The frame `table` describes, read with `config`'s typed readers whether or not it is
    /// switched on; nil when the table describes none (a key it needs is absent) or a value is
    /// refused (reported). A key two frame types read is reported once (`ConfigValidator.report`).
    static func configured(_ config: inout ConfigValidator, _ table: TOMLTable, _ context: FrameConfigContext) -> Self?
}

/// A frame that carries the beacon's telemetry readings (TLM); its bytes change while on air too
/// (`FrameTraits.refreshedOnAir`), as any such frame's may without being this.
protocol TelemetryFrame: BeaconFrame {
    /// What a heard frame said; nil for a frame the daemon sends (it encodes `Telemetry`).
    var received: Telemetry? { get }
}

extension BeaconFrame {
    /// Its name in `check` (`advertising-data[<name>]`), `scan`'s type column and JSON, the
    /// monitor's `type =`, and the log.
    public static var name: String { traits.name }
    public var name: String { Self.traits.name }
    /// Connectable and scannable (ADV_IND) rather than ADV_NONCONN_IND: only the GATT identity.
    public var isConnectable: Bool { Self.traits.isConnectable }
    public var scanResponseData: [UInt8] { [] }
    public var powerAt1m: Int? { nil }

    /// True when its bytes change while on air (`FrameTraits.refreshedOnAir`): the advertiser
    /// refreshes its payload from `Telemetry`, the monitor does not cache its payloads.
    public var isRefreshedOnAir: Bool { Self.traits.refreshedOnAir }
    /// True when it carries the beacon's telemetry readings (a `TelemetryFrame`: Eddystone-TLM):
    /// the board is read for it, and a heard one is a reading of its sender's.
    public var carriesTelemetry: Bool { self is any TelemetryFrame }
    /// The fields that identify it (`FrameTraits.identifyingKeys`), in display order.
    public var identifyingFields: [FrameField] { fields(identifying: true) }
    /// The other fields (AltBeacon: power, company_id, reserved), in display order.
    public var otherFields: [FrameField] { fields(identifying: false) }

    func fields(identifying: Bool) -> [FrameField] {
        let keys = Self.traits.identifyingKeys
        return fields.filter { keys.contains($0.key) == identifying }
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
/// What the board says of itself for a TLM frame, read by the runner and handed to the
/// advertiser's procedure (which reads nothing itself): the time since boot and the SoC
/// temperature when it was read, on the loop's clock.
public struct BoardReading: Equatable, Sendable {
    /// Time since the board booted (the beacon's power-up), in 0.1 s units, at `readAtMs`.
    public var uptimeDeciseconds: UInt32
    /// °C as signed 8.8 fixed point; nil when there is no readable thermal zone.
    public var temperature: Int16?
    /// The loop's clock (ms) when it was read: the uptime at a later moment is this one plus the
    /// time since.
    public var readAtMs: Int64

    public init(uptimeDeciseconds: UInt32, temperature: Int16?, readAtMs: Int64) {
        self.uptimeDeciseconds = uptimeDeciseconds; self.temperature = temperature; self.readAtMs = readAtMs
    }

    /// The TLM frame's telemetry at `now`, with the advertiser's count.
    public func telemetry(advertisingCount: UInt32, now: Int64) -> Telemetry {
        let since = UInt32(clamping: max(0, now - readAtMs) / 100)
        let (sum, over) = uptimeDeciseconds.addingReportingOverflow(since)
        return Telemetry(uptimeDeciseconds: over ? .max : sum, advertisingCount: advertisingCount, temperature: temperature)
    }
}

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
    /// The beacon's name (`BeaconName`) a non-connectable frame answers scan requests with;
    /// empty: none (ADV_NONCONN_IND). A connectable frame keeps its own (`frame.scanResponseData`).
    public let nameResponse: [UInt8]
    public init(_ frame: any BeaconFrame, nameResponse: [UInt8] = []) {
        self.frame = frame
        self.nameResponse = frame.isConnectable ? [] : nameResponse
    }
    public var name: String { frame.name }
    /// What the frame answers scan requests with; empty: it is not scannable.
    public var scanResponse: [UInt8] { frame.isConnectable ? frame.scanResponseData : nameResponse }
    /// The legacy PDU it goes out as.
    public var pdu: LegacyPDU { frame.isConnectable ? .connectable : nameResponse.isEmpty ? .nonConnectable : .scannable }
    public static func == (a: ConfiguredFrame, b: ConfiguredFrame) -> Bool {
        a.name == b.name && a.frame.advertisingData(.zero) == b.frame.advertisingData(.zero)
            && a.scanResponse == b.scanResponse
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

/// What a frame type's config reader may take from the rest of the config: the `[beacon]`
/// identity (every frame's defaults) and the frames read before it (Overflow's numbers default to
/// the iBeacon frame's).
struct FrameConfigContext {
    let beacon: BeaconIdentity
    /// Every frame read so far, on air or switched off, in `BeaconFrames.types` order.
    var read: [any BeaconFrame] = []
    /// The frames that go on air, so far.
    var onAir: [ConfiguredFrame] = []
}
