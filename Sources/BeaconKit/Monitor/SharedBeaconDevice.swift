// Issue 48: one name and model per beacon device, whoever announces it. Home Assistant merges
// devices that share an identifier and takes the name and model of the last config it read, so
// every announcer of one beacon (each monitor expecting it, and the daemon on the Pi that sends
// it) must say the same: both come from the beacon's identity on air and nothing local. A
// monitor's own name for it (`[expect.NAME]`) is an attribute of its own entities; the owner
// renames the device in Home Assistant (a name given there survives every rediscovery).

/// A beacon's Home Assistant device as every announcer names it.
public struct SharedBeaconDevice: Equatable, Sendable {
    /// `beaconDeviceID` of each frame identity the device carries.
    public var identifiers: [String]
    public var name: String
    public var model: String

    /// No frame identity (a local beacon with no AltBeacon or iBeacon on air): not shared.
    public static let none = SharedBeaconDevice(identifiers: [], name: "", model: "")

    public init(identifiers: [String], name: String, model: String) {
        self.identifiers = identifiers; self.name = name; self.model = model
    }

    /// The model of the frames identified by a UUID, major and minor: one device may carry
    /// both an AltBeacon and an iBeacon of one identity, and each announcer knows only one.
    static let beaconIDModel = "Beacon (UUID, major, minor)"

    /// The device of one frame identity: "Beacon 1/2 2f234454" for a UUID, major and minor
    /// (whatever the frame), else the frame's model and its IDs (each cut to 32 characters).
    public static func of(type: String, ids: [String]) -> SharedBeaconDevice {
        let id = MonitorExport.beaconDeviceID(type: type, ids: ids)
        if BeaconFrames.identifiedByBeaconID.contains(type), ids.count == 3 {
            return SharedBeaconDevice(identifiers: [id], name: "Beacon \(ids[1])/\(ids[2]) \(String(ids[0].prefix(8)).lowercased())",
                                      model: beaconIDModel)
        }
        let model = BeaconFrames.model(type)
        let shown = ids.map { $0.count > 32 ? String($0.prefix(31)) + "…" : $0 }
        return SharedBeaconDevice(identifiers: [id], name: ([model] + shown).joined(separator: " "), model: model)
    }

    public static func of(_ e: Expectation) -> SharedBeaconDevice { of(type: e.type, ids: e.fields.map(\.value)) }

    /// The local beacon's frames that a monitor elsewhere can expect (AltBeacon, iBeacon), from
    /// its status file's `frames`, `uuid`, `major` and `minor`: one identity, so one name;
    /// `none` without them.
    public static func local(_ status: JSONValue?) -> SharedBeaconDevice {
        guard case .array(let items)? = status?["frames"], let uuid = status?["uuid"]?.string,
              let major = status?["major"]?.integer, let minor = status?["minor"]?.integer else { return .none }
        let names = items.compactMap { $0["frame"]?.string }
        let ids = [uuid.lowercased(), "\(major)", "\(minor)"]
        let types = BeaconFrames.identifiedByBeaconID.filter { t in names.contains { $0.utf8.elementsEqual(t.utf8) } }
        guard let first = types.first else { return .none }
        var device = of(type: first, ids: ids)
        device.identifiers = types.map { MonitorExport.beaconDeviceID(type: $0, ids: ids) }
        return device
    }
}
