/// The frame types altbeacond sends from its frame list and finds in what a scanner hears, in
/// the fixed order frames go on air and are listed: the one table of frame types. Everything
/// about a type (config keys, `check`, the status file, Home Assistant's switches and device
/// models, the settings changed from afar) is derived from this list and each type's `traits`.
/// A new frame type is a file with its `BeaconFrame`, one entry here, and its config reader.
///
/// Not listed: the GATT identity, configured by `[gatt_identity]` rather than the frame list,
/// sent as `IdentityAdvertisement` and heard by `scan` as `HeardGATTIdentity`.
public enum BeaconFrames {
    public static let types: [any BeaconFrame.Type] = [
        AltBeaconFrame.self, IBeaconFrame.self, OverflowAreaFrame.self, EddystoneUIDFrame.self, EddystoneURLFrame.self,
        EddystoneTLMFrame.self,
    ]

    public static var names: [String] { types.map { $0.name } }

    /// The switches that turn the frames on and off, each once, in `types` order: the config
    /// keys, the settings changed from afar (`RemoteSetting`) and Home Assistant's frame switches.
    public static let switches: [FrameSwitch] = types.reduce(into: []) { out, t in
        if let s = t.traits.switchedBy, !out.contains(where: { $0 === s }) { out.append(s) }
    }

    /// The names of the frame types a switch turns on.
    static func names(switchedBy s: FrameSwitch) -> [String] {
        types.filter { $0.traits.switchedBy === s }.map { $0.name }
    }

    /// A frame type's Home Assistant device model ("Apple iBeacon"); the name itself for one
    /// not in the table.
    static func model(_ name: String) -> String {
        types.first { $0.name == name }?.traits.model ?? name
    }

    /// The frame types identified by a UUID, major and minor (AltBeacon, iBeacon): the status
    /// file's `uuid`, `major` and `minor` name the local beacon's device by them.
    static let identifiedByBeaconID: [String] = {
        types.filter { $0.traits.identifyingKeys == ["uuid", "major", "minor"] }.map { $0.name }
    }()

    /// The config tables of frame types (not `[beacon]`, whose frame is AltBeacon), each with its
    /// keys: the switches' and every type's `configKeys`, in `types` order.
    static let configTables: [(name: String, keys: [String])] = {
        var out: [(name: String, keys: [String])] = []
        for t in types {
            guard let s = t.traits.switchedBy, s.table != "beacon" else { continue }
            let i = out.firstIndex { $0.name == s.table } ?? { out.append((s.table, [])); return out.count - 1 }()
            for k in [s.key] + t.traits.configKeys where !out[i].keys.contains(k) { out[i].keys.append(k) }
        }
        return out
    }()

    /// Every frame found in a received payload (usually one).
    public static func decode(_ data: ArraySlice<UInt8>) -> [any BeaconFrame] {
        types.compactMap { $0.decode(data) }
    }
}
