// What a config puts on air, from its frames (Frames/): the name's scan response and the GATT
// identity's advertising after the frames. Here, above the frames, since a config holds them.

extension BeaconConfig {
    /// The name the scannable frames' scan response carries: `[beacon] name`, else the hostname
    /// the daemon resolved; "" (or no hostname): none, the frames stay non-connectable.
    public var effectiveName: String { name ?? hostName ?? "" }

    /// `effectiveName`'s scan response (`BeaconName.scanResponse`); empty: no name.
    public var nameResponse: [UInt8] { BeaconName.scanResponse(effectiveName) }
}

extension BeaconConfig {
    /// What goes on air: the configured frames, then the GATT identity's connectable advertising
    /// when it is configured and `identityConnectable` (no central is connected).
    /// With a name (`nameResponse`), each non-connectable frame goes out scannable with it.
    public func airFrames(identityConnectable: Bool = true) -> [ConfiguredFrame] {
        let response = nameResponse
        let named = response.isEmpty ? frames : frames.map { ConfiguredFrame($0.frame, nameResponse: response) }
        guard let g = gattIdentity, identityConnectable else { return named }
        return named + [ConfiguredFrame(IdentityAdvertisement(g))]
    }
}
