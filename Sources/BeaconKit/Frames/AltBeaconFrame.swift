/// AltBeacon (github.com/AltBeacon/spec): the `[beacon]` table, 31 bytes.
public struct AltBeaconFrame: BeaconFrame, Equatable {
    public static let name = "altbeacon"
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

    public static let identifyingKeys = ["uuid", "major", "minor"]
    public var referencePower: ReferencePower? { .oneMetre(identity.power) }

    public static func calibrationLine(rssiAt1m: Int) -> String? {
        powerLine(rssiAt1m, comment: "[beacon]")
    }

    public static func expected(_ table: inout ExpectationTable) -> AltBeaconFrame? {
        table.uuidMajorMinor().map { AltBeaconFrame(BeaconIdentity(uuid: $0.uuid, major: $0.major, minor: $0.minor)) }
    }
}
