/// Apple's iBeacon, the only frame iOS CoreLocation ranges: a manufacturer-specific AD with
/// company 0x004C, type 0x02, length 0x15, then UUID, major, minor (big-endian) and the
/// measured power at 1 m. 30 bytes with the flags.
public struct IBeaconFrame: ExpectableFrame, ConfigurableFrame, Equatable {
    public static let traits = FrameTraits(
        name: "ibeacon", model: "Apple iBeacon",
        switchedBy: FrameSwitch(setting: "ibeacon", displayName: "iBeacon frame", table: "ibeacon"),
        configKeys: ["uuid", "major", "minor", "power"], identifyingKeys: ["uuid", "major", "minor"],
        calibrationLine: { configLine("power", $0, BeaconIdentity.powerRange, "[ibeacon] (or [beacon] when it is the same)") })
    public static let appleCompanyID: UInt16 = 0x004c
    public var uuid: [UInt8]
    public var major: UInt16
    public var minor: UInt16
    public var power: Int8

    public init(uuid: [UInt8], major: UInt16, minor: UInt16, power: Int8) {
        self.uuid = uuid; self.major = major; self.minor = minor; self.power = power
    }

    public func advertisingData(_: Telemetry) -> [UInt8] {
        // Statement by statement: one long `+` chain takes Swift 6.0's type checker too long.
        var out: [UInt8] = flagsAD
        out += [0x1a, 0xff, 0x4c, 0x00, 0x02, 0x15]
        out += exactly(16, uuid)
        out += be16(major)
        out += be16(minor)
        out.append(UInt8(bitPattern: power))
        return out
    }

    public var fields: [FrameField] {
        [FrameField("uuid", formatUUID(uuid)), .number("major", major), .number("minor", minor), .number("power", power)]
    }

    public static func decode(_ data: ArraySlice<UInt8>) -> IBeaconFrame? {
        for ad in adStructures(data) where ad.type == 0xff && ad.data.count == 25 {
            let d = ad.data, s = d.startIndex
            guard d[s] == 0x4c, d[s + 1] == 0x00, d[s + 2] == 0x02, d[s + 3] == 0x15 else { continue }
            return IBeaconFrame(uuid: Array(d[(s + 4)..<(s + 20)]), major: readBE16(d, 20), minor: readBE16(d, 22),
                                power: Int8(bitPattern: d[s + 24]))
        }
        return nil
    }

    public var powerAt1m: Int? { Int(power) }

    /// The measured power plays no part in matching: the default stands in.
    static func expected(_ config: inout ConfigValidator, _ table: TOMLTable, name: String) -> IBeaconFrame? {
        config.expectedUUIDMajorMinor(table, name).map {
            IBeaconFrame(uuid: $0.uuid, major: $0.major, minor: $0.minor, power: BeaconIdentity.defaultPower)
        }
    }

    /// `[ibeacon]`: every key defaults to the `[beacon]` value; the table's presence turns it on.
    static func configured(_ config: inout ConfigValidator, _ t: TOMLTable, _ context: FrameConfigContext) -> IBeaconFrame? {
        let b = context.beacon
        let uuid = t.entry("uuid") == nil ? b.uuid : config.readUUID(t, table: "ibeacon", required: false)
        let major = config.integer(t, "ibeacon", "major", BeaconIdentity.majorMinorRange) ?? Int64(b.major)
        let minor = config.integer(t, "ibeacon", "minor", BeaconIdentity.majorMinorRange) ?? Int64(b.minor)
        let power = config.integer(t, "ibeacon", "power", BeaconIdentity.powerRange) ?? Int64(b.power)
        guard let uuid else { return nil }
        return IBeaconFrame(uuid: uuid, major: UInt16(truncatingIfNeeded: major), minor: UInt16(truncatingIfNeeded: minor),
                            power: Int8(truncatingIfNeeded: power))
    }
}
