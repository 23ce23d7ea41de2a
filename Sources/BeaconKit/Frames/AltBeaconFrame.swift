/// AltBeacon (github.com/AltBeacon/spec): the `[beacon]` table, 31 bytes.
public struct AltBeaconFrame: ExpectableFrame, ConfigurableFrame, Equatable {
    public static let traits = FrameTraits(
        name: "altbeacon", model: "AltBeacon",
        switchedBy: FrameSwitch(setting: "altbeacon", displayName: "AltBeacon frame", table: "beacon", key: "altbeacon"),
        identifyingKeys: ["uuid", "major", "minor"],
        calibrationLine: { configLine("power", $0, BeaconIdentity.powerRange, "[beacon]") })
    public var identity: BeaconIdentity
    public init(_ identity: BeaconIdentity) { self.identity = identity }

    public func advertisingData(_: Telemetry) -> [UInt8] { AltBeacon.advertisingData(identity) }

    /// The MFG ID reads as people write company IDs, `0x0118`; JSON has the number.
    public var fields: [FrameField] {
        [FrameField("uuid", identity.uuidString), .number("major", identity.major), .number("minor", identity.minor),
         .number("power", identity.power), FrameField("company_id", "\(identity.companyID)", number: true, text: companyString(identity.companyID)),
         .number("reserved", identity.reserved)]
    }

    public static func decode(_ data: ArraySlice<UInt8>) -> AltBeaconFrame? {
        AltBeacon.find(inAdvertisingData: data).map(AltBeaconFrame.init)
    }

    public var powerAt1m: Int? { Int(identity.power) }

    static func expected(_ config: inout ConfigValidator, _ table: TOMLTable, name: String) -> AltBeaconFrame? {
        config.expectedUUIDMajorMinor(table, name).map { AltBeaconFrame(BeaconIdentity(uuid: $0.uuid, major: $0.major, minor: $0.minor)) }
    }

    /// `[beacon]` itself: the frame is the beacon's identity; `beacon.altbeacon` switches it.
    static func configured(_: inout ConfigValidator, _: TOMLTable, _ context: FrameConfigContext) -> AltBeaconFrame? {
        AltBeaconFrame(context.beacon)
    }
}
