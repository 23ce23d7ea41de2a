/// The identity the iOS "AltBeacon" library (CharruaLab, formerly Instrument's Vicinity) finds a
/// beacon by (SPEC §3): not the 0xBEAC format at all. Its central scans for one fixed 128-bit
/// service UUID, connects, discovers that service and its characteristics, reads the first
/// characteristic (the identifier, UTF-8, compared as a string) and disconnects.
///
/// Not a `BeaconFrame`: it is connectable advertising (ADV_IND) with a scan response and a GATT
/// server behind it, not one more non-connectable payload in the frame list. The `[gatt_identity]`
/// table configures it; this type holds the bytes the radio and the GATT database need. Pure.
public struct GATTIdentity: Equatable, Sendable {
    /// Its name in `check` (`advertising-data[gatt-identity]`, `scan-response[gatt-identity]`).
    public static let name = "gatt-identity"
    public static let defaultName = "AltBeacon"
    /// As a frame, sent (`IdentityAdvertisement`) or heard (`HeardGATTIdentity`): connectable,
    /// no ID (one scan row per address) and no power, so ranged by RSSI as the iOS library does.
    public static let frameTraits = FrameTraits(name: name, switchedBy: nil, isConnectable: true, rangedByRSSI: true)
    /// The identifier: 1-64 printable ASCII characters.
    public static let identifierLengths: ClosedRange<Int> = 1...64
    /// The complete local name: at most 29 bytes, what a 31-byte scan response holds after its
    /// length and type bytes.
    public static let nameLengths: ClosedRange<Int> = 1...29

    /// The service the library scans for, 8C422626-0C6E-4B86-8EC7-9147B233D97E, in on-air
    /// (little-endian) order, as AD structures and ATT carry 128-bit UUIDs.
    public static let serviceUUID: [UInt8] = [
        0x7e, 0xd9, 0x33, 0xb2, 0x47, 0x91, 0xc7, 0x8e, 0x86, 0x4b, 0x6e, 0x0c, 0x26, 0x26, 0x42, 0x8c,
    ]
    /// Its one characteristic, A05F9DF4-9D54-4600-9224-983B75B9D154 (property Read: the
    /// identifier), in on-air (little-endian) order.
    public static let characteristicUUID: [UInt8] = [
        0x54, 0xd1, 0xb9, 0x75, 0x3b, 0x98, 0x24, 0x92, 0x00, 0x46, 0x54, 0x9d, 0xf4, 0x9d, 0x5f, 0xa0,
    ]

    /// What the characteristic's value says; 1-64 printable ASCII characters when configured.
    public var identifier: String
    /// The complete local name in the scan response; 1-29 bytes of UTF-8 when configured.
    public var name: String

    public init(identifier: String, name: String = GATTIdentity.defaultName) {
        self.identifier = identifier; self.name = name
    }

    /// The default identifier: the beacon UUID as the library's own beacons send it, uppercase
    /// 8-4-4-4-12 with hyphens.
    public static func defaultIdentifier(uuid: [UInt8]) -> String {
        asciiUppercase(formatUUID(uuid))
    }

    /// The characteristic's value: the identifier as UTF-8.
    public var identifierValue: [UInt8] { Array(identifier.utf8) }
    /// GAP's Device Name and the scan response's local name: the name as UTF-8.
    public var nameValue: [UInt8] { Array(name.utf8) }

    /// Flags, then the Complete List of 128-bit Service UUIDs with the service: 21 bytes.
    public var advertisingData: [UInt8] {
        var out: [UInt8] = flagsAD
        out += [0x11, 0x07]
        out += Self.serviceUUID
        return out
    }

    /// The Complete Local Name AD: `<n+1> 09 <name>`. A name over 29 bytes (never from the
    /// config) is cut there, so the response stays within 31 bytes.
    public var scanResponse: [UInt8] {
        let n = Array(nameValue.prefix(Self.nameLengths.upperBound))
        var out: [UInt8] = [UInt8(n.count + 1), 0x09]
        out += n
        return out
    }

    /// True when an advertising payload lists the service (a Complete or Incomplete List of
    /// 128-bit Service UUIDs holding it). Every length checked.
    public static func isAdvertised(in data: ArraySlice<UInt8>) -> Bool {
        for ad in adStructures(data) where ad.type == 0x06 || ad.type == 0x07 {
            var i = ad.data.startIndex
            while i + 16 <= ad.data.endIndex {
                if ad.data[i..<(i + 16)].elementsEqual(serviceUUID) { return true }
                i += 16
            }
        }
        return false
    }

    /// A UUID from on-air (little-endian) order to the uppercase 8-4-4-4-12 people write.
    public static func uuidString(onAir bytes: [UInt8]) -> String {
        asciiUppercase(formatUUID(bytes.reversed()))
    }
}

/// ASCII letters up, everything else as is (hex text only; no locale, no Foundation).
func asciiUppercase(_ s: String) -> String {
    String(decoding: s.utf8.map { $0 >= 0x61 && $0 <= 0x7a ? $0 - 0x20 : $0 }, as: UTF8.self)
}
