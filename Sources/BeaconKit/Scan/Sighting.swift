/// One AltBeacon heard once: what the advert said plus how loud it was and who sent it.
public struct Sighting: Equatable, Sendable {
    public var beacon: BeaconIdentity
    public var rssi: Int8
    /// `AA:BB:CC:DD:EE:FF`, most significant first.
    public var address: String
    /// Monotonic milliseconds when it was read.
    public var atMs: Int64

    public init(beacon: BeaconIdentity, rssi: Int8, address: String, atMs: Int64) {
        self.beacon = beacon; self.rssi = rssi; self.address = address; self.atMs = atMs
    }

    /// The AltBeacon in an advertising report, if there is one (length-checked; iBeacon,
    /// Eddystone, other and malformed data give nil).
    public init?(report: AdvertisingReport, atMs: Int64) {
        guard let id = AltBeacon.find(inAdvertisingData: report.data[...]) else { return nil }
        self.init(beacon: id, rssi: report.rssi, address: report.addressString, atMs: atMs)
    }

    /// HCI reports 127 when the controller cannot measure RSSI (BlueZ's emulator always does).
    public var rssiAvailable: Bool { rssi != 127 }
    /// The RSSI as shown: a number, or "n/a".
    public var rssiText: String { rssiAvailable ? "\(rssi)" : "n/a" }

    public var distanceMeters: Double? { DistanceEstimate.meters(rssi: Int(rssi), power: Int(beacon.power)) }
    public var proximity: Proximity { Proximity(distanceMeters: distanceMeters) }

    /// One JSON object on one line (no trailing newline). Every value is a number or a string
    /// made of hex digits, colons and letters, so nothing needs escaping.
    public var jsonLine: String {
        var s = "{\"uuid\":\"\(beacon.uuidString)\",\"major\":\(beacon.major),\"minor\":\(beacon.minor)"
        s += ",\"rssi\":\(rssiAvailable ? "\(rssi)" : "null"),\"power\":\(beacon.power),\"company_id\":\(beacon.companyID)"
        s += ",\"reserved\":\(beacon.reserved),\"address\":\"\(address)\""
        if let d = distanceMeters { s += ",\"distance_m\":\(DistanceEstimate.format(d))" }
        s += ",\"proximity\":\"\(proximity.rawValue)\"}"
        return s
    }
}

/// What identifies a row: the beacon's three IDs, as beacon apps group them.
public struct BeaconKey: Hashable, Comparable, Sendable {
    public var uuid: String
    public var major: UInt16
    public var minor: UInt16
    public init(_ b: BeaconIdentity) { uuid = b.uuidString; major = b.major; minor = b.minor }
    public static func < (a: BeaconKey, b: BeaconKey) -> Bool {
        (a.uuid, a.major, a.minor) < (b.uuid, b.major, b.minor)
    }
}
