/// One beacon frame heard once: what the advert said plus how loud it was and who sent it.
/// An advert holding two frames (rare) gives two sightings.
public struct Sighting: Equatable, Sendable {
    /// The decoded frame: AltBeacon, iBeacon, Overflow Area, Eddystone-UID, -URL or -TLM
    /// (`BeaconFrames.types`), or a device advertising the GATT identity (`HeardGATTIdentity`).
    public var frame: any BeaconFrame
    public var rssi: Int8
    /// `AA:BB:CC:DD:EE:FF`, most significant first.
    public var address: String
    /// Monotonic milliseconds when it was read.
    public var atMs: Int64

    public init(frame: any BeaconFrame, rssi: Int8, address: String, atMs: Int64) {
        self.frame = frame; self.rssi = rssi; self.address = address; self.atMs = atMs
    }

    /// An AltBeacon sighting.
    public init(beacon: BeaconIdentity, rssi: Int8, address: String, atMs: Int64) {
        self.init(frame: AltBeaconFrame(beacon), rssi: rssi, address: address, atMs: atMs)
    }

    /// Every beacon frame in an advertising report, one sighting each, in `BeaconFrames.types`
    /// order (length-checked: other adverts and malformed data give none).
    public static func all(in report: AdvertisingReport, atMs: Int64) -> [Sighting] {
        BeaconFrames.decode(report.data[...]).map {
            Sighting(frame: $0, rssi: report.rssi, address: report.addressString, atMs: atMs)
        }
    }

    /// The frame's name: `altbeacon`, `ibeacon`, `overflow-area`, `eddystone-uid`, `eddystone-url`, `eddystone-tlm`.
    public var type: String { frame.name }
    /// The AltBeacon identity, for AltBeacon sightings.
    public var beacon: BeaconIdentity? { (frame as? AltBeaconFrame)?.identity }

    /// HCI reports 127 when the controller cannot measure RSSI (BlueZ's emulator always does).
    public var rssiAvailable: Bool { rssi != 127 }
    /// The RSSI as shown: a number, or "n/a".
    public var rssiText: String { rssiAvailable ? "\(rssi)" : "n/a" }

    /// The signal expected at 1 m, in dBm, where the frame says (`BeaconFrame.powerAt1m`);
    /// nil: no distance.
    public var powerAt1m: Int? { frame.powerAt1m }

    public var distanceMeters: Double? { powerAt1m.flatMap { DistanceEstimate.meters(rssi: Int(rssi), power: $0) } }
    /// From the distance; for a frame ranged by RSSI (the GATT identity, which carries no
    /// power), as the iOS library ranges it.
    public var proximity: Proximity {
        Swift.type(of: frame).traits.rangedByRSSI ? Proximity(identityRSSI: rssi) : Proximity(distanceMeters: distanceMeters)
    }

    /// What identifies the row in the table.
    public var key: BeaconKey { BeaconKey(self) }

    /// The frame's fields that identify it (AltBeacon and iBeacon: uuid, major, minor), in
    /// display order; empty for frames identified by the sender's address (TLM).
    public var identifyingFields: [FrameField] { frame.identifyingFields }

    /// The other fields (AltBeacon: power, company_id, reserved), in display order.
    public var otherFields: [FrameField] { frame.otherFields }

    /// One JSON object on one line (no trailing newline): `type`, the identifying fields,
    /// `rssi`, the other fields, `address`, `distance_m` (where known), `proximity`. For an
    /// AltBeacon that is `type` then the keys scan has always printed, in the same order.
    /// Strings are escaped: a decoded Eddystone URL comes from any nearby device.
    public var jsonLine: String {
        var s = "{\"type\":" + jsonString(type)
        for f in identifyingFields { s += "," + jsonMember(f) }
        s += ",\"rssi\":" + (rssiAvailable ? "\(rssi)" : "null")
        for f in otherFields { s += "," + jsonMember(f) }
        s += ",\"address\":" + jsonString(address)
        if let d = distanceMeters { s += ",\"distance_m\":\(DistanceEstimate.format(d))" }
        s += ",\"proximity\":" + jsonString(proximity.rawValue) + "}"
        return s
    }

    /// Two sightings of the same frame, RSSI, sender and time. Frames compare by name, fields
    /// and the bytes they would send.
    public static func == (a: Sighting, b: Sighting) -> Bool {
        sameFrame(a.frame, b.frame) && a.rssi == b.rssi && a.address == b.address && a.atMs == b.atMs
    }
}

func sameFrame(_ a: any BeaconFrame, _ b: any BeaconFrame) -> Bool {
    a.name == b.name && a.fields == b.fields && a.advertisingData(.zero) == b.advertisingData(.zero)
}

/// `"key":value`, a number field unquoted.
func jsonMember(_ f: FrameField) -> String {
    jsonString(f.key) + ":" + (f.isNumber ? f.value : jsonString(f.value))
}

/// What identifies a row: the frame type, then the frame's IDs as beacon apps group them
/// (`FrameTraits.identifyingKeys`), or the sender's address for a frame without IDs (TLM, the
/// GATT identity). The frames of one beacon are separate rows.
public struct BeaconKey: Hashable, Comparable, Sendable {
    /// One ID: numbers sort as numbers (minor 10 after minor 9).
    public enum Part: Hashable, Comparable, Sendable {
        case number(Int64)
        case text(String)
    }

    public var type: String
    public var parts: [Part]

    public init(_ s: Sighting) {
        type = s.type
        let ids = s.identifyingFields
        parts = ids.isEmpty ? [.text(s.address)] : ids.map { f in
            f.isNumber ? Int64(f.value).map(Part.number) ?? .text(f.value) : .text(f.value)
        }
    }

    /// Frame types in `BeaconFrames.types` order, then their IDs.
    public static func < (a: BeaconKey, b: BeaconKey) -> Bool {
        let names = BeaconFrames.names
        let (ia, ib) = (names.firstIndex(of: a.type) ?? names.count, names.firstIndex(of: b.type) ?? names.count)
        if ia != ib { return ia < ib }
        if a.type != b.type { return a.type < b.type }
        return a.parts.lexicographicallyPrecedes(b.parts)
    }
}
