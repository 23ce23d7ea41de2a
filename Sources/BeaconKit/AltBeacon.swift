/// The identity a beacon transmits (SPEC §2 `[beacon]`, §3).
public struct BeaconIdentity: Equatable, Sendable {
    /// ID1: 16 bytes.
    public var uuid: [UInt8]
    /// ID2, sent big-endian.
    public var major: UInt16
    /// ID3, sent big-endian.
    public var minor: UInt16
    /// REFERENCE RSSI: dBm measured at 1 m.
    public var power: Int8
    /// MFG ID, sent little-endian. 0x0118 is Radius Networks.
    public var companyID: UInt16
    /// MFG RESERVED byte.
    public var reserved: UInt8

    public static let defaultPower: Int8 = -59
    public static let defaultCompanyID: UInt16 = 0x0118
    /// What the config, `calibrate` and Home Assistant's number entities take, here once.
    public static let majorMinorRange: ClosedRange<Int64> = 0...65535
    public static let powerRange: ClosedRange<Int64> = -127...0

    public init(uuid: [UInt8], major: UInt16, minor: UInt16,
                power: Int8 = BeaconIdentity.defaultPower,
                companyID: UInt16 = BeaconIdentity.defaultCompanyID,
                reserved: UInt8 = 0) {
        self.uuid = uuid
        self.major = major
        self.minor = minor
        self.power = power
        self.companyID = companyID
        self.reserved = reserved
    }

    /// Canonical lowercase 8-4-4-4-12 form.
    public var uuidString: String { formatUUID(uuid) }
}

/// The AltBeacon advertisement (github.com/AltBeacon/spec): a flags AD and a 27-byte
/// manufacturer-specific AD, 31 bytes in all — the whole legacy advertising payload.
public enum AltBeacon {
    public static let beaconCode: UInt16 = 0xBEAC
    public static let payloadLength = 31
    /// LE General Discoverable, BR/EDR not supported.
    public static let flags: UInt8 = 0x06

    /// The AD structures exactly as sent, without the HCI length byte or zero padding.
    public static func advertisingData(_ id: BeaconIdentity) -> [UInt8] {
        var out: [UInt8] = [0x02, 0x01, flags, 0x1b, 0xff]
        out.reserveCapacity(payloadLength)
        out.append(UInt8(truncatingIfNeeded: id.companyID))
        out.append(UInt8(truncatingIfNeeded: id.companyID >> 8))
        out.append(UInt8(beaconCode >> 8))
        out.append(UInt8(truncatingIfNeeded: beaconCode))
        out.append(contentsOf: id.uuid.prefix(16))
        // A malformed identity must still never produce a misaligned frame.
        if id.uuid.count < 16 { out.append(contentsOf: [UInt8](repeating: 0, count: 16 - id.uuid.count)) }
        out.append(UInt8(truncatingIfNeeded: id.major >> 8))
        out.append(UInt8(truncatingIfNeeded: id.major))
        out.append(UInt8(truncatingIfNeeded: id.minor >> 8))
        out.append(UInt8(truncatingIfNeeded: id.minor))
        out.append(UInt8(bitPattern: id.power))
        out.append(id.reserved)
        return out
    }

    /// Reads an AltBeacon from the manufacturer-specific AD's data (company ID onwards).
    /// Any company ID is accepted; the beacon code must be 0xBEAC and the length exactly 26.
    public static func decodeManufacturerData(_ data: ArraySlice<UInt8>) -> BeaconIdentity? {
        guard data.count == 26 else { return nil }
        let b = Array(data)
        guard UInt16(b[2]) << 8 | UInt16(b[3]) == beaconCode else { return nil }
        return BeaconIdentity(
            uuid: Array(b[4..<20]),
            major: UInt16(b[20]) << 8 | UInt16(b[21]),
            minor: UInt16(b[22]) << 8 | UInt16(b[23]),
            power: Int8(bitPattern: b[24]),
            companyID: UInt16(b[0]) | UInt16(b[1]) << 8,
            reserved: b[25])
    }

    /// Finds an AltBeacon among the AD structures of an advertising report, checking every
    /// length before reading. Malformed data yields nil, never a trap.
    public static func find(inAdvertisingData data: ArraySlice<UInt8>) -> BeaconIdentity? {
        var i = data.startIndex
        while i < data.endIndex {
            let len = Int(data[i])
            if len == 0 { return nil }  // early terminator: the rest is padding
            let end = i + 1 + len
            guard end <= data.endIndex else { return nil }
            if data[i + 1] == 0xff, let id = decodeManufacturerData(data[(i + 2)..<end]) {
                return id
            }
            i = end
        }
        return nil
    }
}

private let hexDigits: [Character] = Array("0123456789abcdef")

/// Lowercase hex, no separators.
public func hexString<C: Collection>(_ bytes: C) -> String where C.Element == UInt8 {
    var s = ""
    s.reserveCapacity(bytes.count * 2)
    for b in bytes {
        s.append(hexDigits[Int(b >> 4)])
        s.append(hexDigits[Int(b & 0xf)])
    }
    return s
}

/// Lowercase hex bytes separated by spaces, as hcitool takes them.
public func spacedHex<C: Collection>(_ bytes: C) -> String where C.Element == UInt8 {
    var parts: [String] = []
    parts.reserveCapacity(bytes.count)
    for b in bytes { parts.append(hexString(CollectionOfOne(b))) }
    return parts.joined(separator: " ")
}

/// 8-4-4-4-12 lowercase.
public func formatUUID(_ bytes: [UInt8]) -> String {
    guard bytes.count == 16 else { return hexString(bytes) }
    return hexString(bytes[0..<4]) + "-" + hexString(bytes[4..<6]) + "-" + hexString(bytes[6..<8]) + "-"
        + hexString(bytes[8..<10]) + "-" + hexString(bytes[10..<16])
}
