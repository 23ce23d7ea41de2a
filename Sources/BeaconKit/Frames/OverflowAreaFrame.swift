/// Apple's "overflow area" (SPEC §3): the manufacturer data (company 0x004C, type 0x01) iOS sends
/// for the CoreBluetooth services of apps in the background, 128 bits, one per hashed service
/// UUID. Radius Networks' OverflowAreaBeaconRef app detects beacons in the background through it:
/// its transmitter writes a matching byte and four payload bytes (major, minor) at one of two
/// positions and always sets bit 0; its detector accepts either position. 24 bytes with the flags.
///
/// The daemon sends position 0: byte 0 = 0x01, byte 1 = the matching byte, bytes 2-5 major and
/// minor big-endian, the rest 00. Decoding does not know the matching byte the receiver looks for,
/// so it tells the positions apart by which one is in use: position 1 when bytes 1-5 are all zero
/// and byte 9 is not; otherwise position 0. Bit 0 must be set (the reference app always sets it;
/// most other iPhones' overflow areas do not have it).
public struct OverflowAreaFrame: ExpectableFrame, ConfigurableFrame, Equatable {
    /// Major and minor first: the matching byte may be left out of `[expect.NAME]` (0xAA).
    /// It carries no power: its iBeacon's distance and calibration apply.
    public static let traits = FrameTraits(
        name: "overflow-area", model: "Apple overflow area",
        switchedBy: FrameSwitch(setting: "overflow", displayName: "Overflow area frame", table: "overflow"),
        configKeys: ["major", "minor", "matching_byte"], identifyingKeys: ["major", "minor", "matching_byte"])
    public static let defaultMatchingByte: UInt8 = 0xaa
    /// Apple's manufacturer data type for the overflow area.
    static let appleType: UInt8 = 0x01
    static let areaLength = 16
    /// Where each position's matching byte sits in the area; the payload follows it.
    static let matchingByteIndex = [1, 9]

    public var major: UInt16
    public var minor: UInt16
    public var matchingByte: UInt8
    /// 0 (the matching byte at byte 1 of the area: what the daemon sends) or 1 (at byte 9).
    public private(set) var position: Int

    /// `position` is 0 or 1; anything else is taken as 0.
    public init(major: UInt16, minor: UInt16, matchingByte: UInt8 = OverflowAreaFrame.defaultMatchingByte, position: Int = 0) {
        self.major = major; self.minor = minor; self.matchingByte = matchingByte
        self.position = position == 1 ? 1 : 0
    }

    /// The 16 bytes of the overflow area.
    public var overflowArea: [UInt8] {
        var area = [UInt8](repeating: 0, count: Self.areaLength)
        area[0] = 0x01
        let at = Self.matchingByteIndex[position]
        area[at] = matchingByte
        area[at + 1] = UInt8(truncatingIfNeeded: major >> 8)
        area[at + 2] = UInt8(truncatingIfNeeded: major)
        area[at + 3] = UInt8(truncatingIfNeeded: minor >> 8)
        area[at + 4] = UInt8(truncatingIfNeeded: minor)
        return area
    }

    public func advertisingData(_: Telemetry) -> [UInt8] {
        var out: [UInt8] = flagsAD
        out += [0x14, 0xff, 0x4c, 0x00, Self.appleType]
        out += overflowArea
        return out
    }

    public var fields: [FrameField] {
        [.byte("matching_byte", matchingByte), .number("major", major), .number("minor", minor), .number("position", position)]
    }

    public static func decode(_ data: ArraySlice<UInt8>) -> OverflowAreaFrame? {
        for ad in adStructures(data) where ad.type == 0xff && ad.data.count == 3 + areaLength {
            let d = ad.data, s = d.startIndex
            guard d[s] == 0x4c, d[s + 1] == 0x00, d[s + 2] == appleType else { continue }
            let a = s + 3   // the area's byte 0
            guard d[a] & 0x01 == 0x01 else { continue }
            let firstEmpty = d[(a + 1)...(a + 5)].allSatisfy { $0 == 0 }
            let position = firstEmpty && d[a + matchingByteIndex[1]] != 0 ? 1 : 0
            let at = a + matchingByteIndex[position]
            return OverflowAreaFrame(major: readBE16(d, at + 1 - s), minor: readBE16(d, at + 3 - s),
                                     matchingByte: d[at], position: position)
        }
        return nil
    }

    static func expected(_ config: inout ConfigValidator, _ table: TOMLTable, name: String) -> OverflowAreaFrame? {
        let major = config.integer(table, name, "major", BeaconIdentity.majorMinorRange, required: true)
        let minor = config.integer(table, name, "minor", BeaconIdentity.majorMinorRange, required: true)
        let matching = config.integer(table, name, "matching_byte", 0...255) ?? Int64(defaultMatchingByte)
        guard let major, let minor else { return nil }
        return OverflowAreaFrame(major: UInt16(truncatingIfNeeded: major), minor: UInt16(truncatingIfNeeded: minor),
                                 matchingByte: UInt8(truncatingIfNeeded: matching))
    }

    /// `[overflow]`: major and minor default to the iBeacon frame's (the reference app sends both
    /// with the same numbers, and it is read even when switched off: switching one frame must not
    /// change another), else to `[beacon]`'s. A refused value is reported and the frame built with
    /// the default (the config is refused anyway).
    static func configured(_ config: inout ConfigValidator, _ t: TOMLTable, _ context: FrameConfigContext) -> OverflowAreaFrame? {
        let ibeacon = context.read.lazy.compactMap { $0 as? IBeaconFrame }.first
        let major = config.integer(t, "overflow", "major", BeaconIdentity.majorMinorRange) ?? Int64(ibeacon?.major ?? context.beacon.major)
        let minor = config.integer(t, "overflow", "minor", BeaconIdentity.majorMinorRange) ?? Int64(ibeacon?.minor ?? context.beacon.minor)
        let matching = config.integer(t, "overflow", "matching_byte", 0...255) ?? Int64(defaultMatchingByte)
        return OverflowAreaFrame(major: UInt16(truncatingIfNeeded: major), minor: UInt16(truncatingIfNeeded: minor),
                                 matchingByte: UInt8(truncatingIfNeeded: matching))
    }
}
