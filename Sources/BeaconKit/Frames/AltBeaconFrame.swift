/// AltBeacon (github.com/AltBeacon/spec): the `[beacon]` table, 31 bytes.
public struct AltBeaconFrame: BeaconFrame, Equatable {
    public static let name = "altbeacon"
    public var identity: BeaconIdentity
    public init(_ identity: BeaconIdentity) { self.identity = identity }

    public func advertisingData(_: Telemetry) -> [UInt8] { AltBeacon.advertisingData(identity) }

    public var fields: [FrameField] {
        [FrameField("uuid", identity.uuidString), .number("major", identity.major), .number("minor", identity.minor),
         .number("power", identity.power), .number("company_id", identity.companyID), .number("reserved", identity.reserved)]
    }

    public static func decode(_ data: ArraySlice<UInt8>) -> AltBeaconFrame? {
        AltBeacon.find(inAdvertisingData: data).map(AltBeaconFrame.init)
    }
}
