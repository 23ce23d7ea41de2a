/// The frame types altbeacond sends from its frame list and finds in what a scanner hears, in
/// the fixed order frames go on air and are listed: the one table of frame types. A new frame
/// type is a file with its `BeaconFrame`, one entry here, and its config reader
/// (`Config/ConfigFrames.swift`, its table's keys in `ConfigSchema`).
///
/// Not listed: the GATT identity, configured by `[gatt_identity]` rather than the frame list,
/// sent as `IdentityAdvertisement` and heard by `scan` as `HeardGATTIdentity`.
public enum BeaconFrames {
    public static let types: [any BeaconFrame.Type] = [
        AltBeaconFrame.self, IBeaconFrame.self, OverflowAreaFrame.self, EddystoneUIDFrame.self, EddystoneURLFrame.self,
        EddystoneTLMFrame.self,
    ]

    public static var names: [String] { types.map { $0.name } }

    /// Every frame found in a received payload (usually one).
    public static func decode(_ data: ArraySlice<UInt8>) -> [any BeaconFrame] {
        types.compactMap { $0.decode(data) }
    }
}
