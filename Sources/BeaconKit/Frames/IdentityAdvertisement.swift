/// The GATT identity's connectable advertising as one more entry of the advertiser's frame list:
/// ADV_IND with the service UUID, and the local name in the scan response (SPEC §3). It is not in
/// `BeaconFrames.types` or `config.frames` (`check` prints the identity on its own lines); the
/// on-air policy appends it last, while no central is connected (`BeaconConfig.airFrames`), so on
/// a controller with sets it takes a set of its own without moving the other frames' sets.
public struct IdentityAdvertisement: BeaconFrame {
    public static var traits: FrameTraits { GATTIdentity.frameTraits }
    public let identity: GATTIdentity

    public init(_ identity: GATTIdentity) { self.identity = identity }

    public func advertisingData(_ telemetry: Telemetry) -> [UInt8] { identity.advertisingData }
    public var scanResponseData: [UInt8] { identity.scanResponse }
    public var fields: [FrameField] { [FrameField("name", identity.name)] }

    /// The identifier is only readable over GATT, not from a payload: what a scanner can tell is
    /// that the service is advertised (`GATTIdentity.isAdvertised(in:)`), with the name unknown.
    public static func decode(_ data: ArraySlice<UInt8>) -> IdentityAdvertisement? {
        GATTIdentity.isAdvertised(in: data) ? IdentityAdvertisement(GATTIdentity(identifier: "", name: "")) : nil
    }
}
