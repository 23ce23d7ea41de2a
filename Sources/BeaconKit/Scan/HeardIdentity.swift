/// A device advertising the GATT identity's service (SPEC §3), as `scan` lists it: type
/// `gatt-identity`, one row per address (the identifier is only readable over GATT), with the
/// local name when one was heard. A `BeaconFrame` so that it is a sighting and a table row like
/// any other frame; scan-only, so it is not in `BeaconFrames.types` (the identity goes on air
/// from `[gatt_identity]`, not from the frame list), and `Sighting.listed` decodes it.
public struct HeardGATTIdentity: BeaconFrame, Equatable {
    public static var traits: FrameTraits { GATTIdentity.frameTraits }
    /// The device's Complete or Shortened Local Name (its scan response carries it), as sent.
    public var localName: [UInt8]?

    public init(localName: [UInt8]?) { self.localName = localName }

    /// What the identity advertises: flags and the service UUID (the name is in the scan response).
    public func advertisingData(_: Telemetry) -> [UInt8] {
        GATTIdentity(identifier: "", name: "").advertisingData
    }

    /// `name`: JSON null (`null` for people) until a name was heard.
    public var fields: [FrameField] {
        guard let n = localName else { return [FrameField("name", "null", number: true)] }
        return [FrameField("name", jsonText(n), text: escapedText(n))]
    }

    /// The payload lists the identity's service; a name in the same payload is kept.
    public static func decode(_ data: ArraySlice<UInt8>) -> HeardGATTIdentity? {
        GATTIdentity.isAdvertised(in: data) ? HeardGATTIdentity(localName: localName(in: data)) : nil
    }

    /// The Complete Local Name (0x09), else the Shortened one (0x08), in a payload.
    public static func localName(in data: ArraySlice<UInt8>) -> [UInt8]? {
        let ads = adStructures(data)
        return (ads.first { $0.type == 0x09 } ?? ads.first { $0.type == 0x08 }).map { Array($0.data) }
    }
}

extension Proximity {
    /// The iOS library's own ranging of the identity by RSSI (SPEC §3): immediate above -72 dBm,
    /// near above -90, else far; unknown when the controller reports no RSSI (127).
    public init(identityRSSI rssi: Int8) {
        self = rssi == 127 ? .unknown : rssi > -72 ? .immediate : rssi > -90 ? .near : .far
    }
}

/// The local names heard, by address. The identity's name comes in its scan response, a report of
/// its own, so the row of an address listed before its name was heard gets it afterwards.
/// Bounded: past `capacity` addresses, names unheard for 8.5 s go, then all if none did.
public struct LocalNames: Sendable {
    public static let capacity = 256
    /// The last name heard from each address, and the last one that answered the GATT identity's
    /// advertisement.
    private var names: [String: (name: [UInt8], atMs: Int64, identity: [UInt8]?)] = [:]

    public init() {}

    public subscript(address: String) -> [UInt8]? { names[address]?.name }
    /// The GATT identity's name at `address`.
    public func identityName(_ address: String) -> [UInt8]? { names[address]?.identity }
    public var count: Int { names.count }

    /// Whether an address's last advertisement was the GATT identity's: a beacon names its other
    /// frames too (issue 32, `[beacon] name`), in scan responses to them, which are not the
    /// identity's name. Unknown (no advertisement yet): taken for the identity's.
    private var identityLast: [String: Bool] = [:]

    mutating func advertised(identity: Bool, address: String) {
        if identityLast[address] == nil, identityLast.count >= Self.capacity { identityLast.removeAll() }
        identityLast[address] = identity
    }

    func namesIdentity(address: String) -> Bool { identityLast[address] ?? true }

    mutating func record(_ name: [UInt8], address: String, atMs: Int64, identity: Bool = true) {
        if names[address] == nil, names.count >= Self.capacity {
            names = names.filter { atMs - $0.value.atMs < BeaconTable.dropAfterMs }
            if names.count >= Self.capacity { names.removeAll() }
        }
        names[address] = (name, atMs, identity ? name : names[address]?.identity)
    }
}

extension Sighting {
    /// What `scan` lists of one report: its beacon frames (`all(in:atMs:)`), a device advertising
    /// the GATT identity with the name last heard from its address, and for a report that only
    /// names a listed identity (its scan response) that row again, named, at this report's RSSI.
    public static func listed(in report: AdvertisingReport, atMs: Int64, names: inout LocalNames,
                              table: BeaconTable) -> [Sighting] {
        var out = all(in: report, atMs: atMs)
        let address = report.addressString
        let identity = HeardGATTIdentity.decode(report.data[...])
        if identity != nil || !out.isEmpty { names.advertised(identity: identity != nil, address: address) }
        // A name from a scan response belongs to the advertisement it answered: the identity's
        // only when that was the identity's.
        let heard = HeardGATTIdentity.localName(in: report.data[...])
        let forIdentity = identity != nil || names.namesIdentity(address: address)
        if let heard { names.record(heard, address: address, atMs: atMs, identity: forIdentity) }
        if let identity {
            let named = HeardGATTIdentity(localName: identity.localName ?? names.identityName(address))
            out.append(Sighting(frame: named, rssi: report.rssi, address: address, atMs: atMs))
        } else if let heard, forIdentity, let row = table.identityRow(address: address),
                  (row.latest.frame as? HeardGATTIdentity)?.localName != heard {
            out.append(Sighting(frame: HeardGATTIdentity(localName: heard), rssi: report.rssi, address: address, atMs: atMs))
        }
        return out
    }
}

extension BeaconTable {
    /// The `gatt-identity` row of an address, if listed.
    func identityRow(address: String) -> Row? {
        rows[Sighting(frame: HeardGATTIdentity(localName: nil), rssi: 0, address: address, atMs: 0).key]
    }
}

/// Octets from the air for people (the one sanitizer for them): printable ASCII as is, except the
/// backslash; every other octet (a control, non-ASCII) as `\xNN`. A space too, so that a plain
/// line stays one `key=value` word, unless the text goes between quotes (`inQuotes`), where `"`
/// is escaped instead.
public func escapedText(_ bytes: [UInt8], inQuotes: Bool = false) -> String {
    var s = ""
    for b in bytes {
        let plain = b > 0x20 || (inQuotes && b == 0x20)
        if plain, b < 0x7f, b != 0x5c, !(inQuotes && b == 0x22) {
            s.unicodeScalars.append(Unicode.Scalar(b))
        } else {
            s += "\\x" + hexString(CollectionOfOne(b))
        }
    }
    return s
}

/// Octets from the air for JSON: the text itself when it is valid UTF-8 (jsonString escapes the
/// controls), else `escapedText`.
public func jsonText(_ bytes: [UInt8]) -> String {
    let s = String(decoding: bytes, as: UTF8.self)
    return Array(s.utf8) == bytes ? s : escapedText(bytes)
}
