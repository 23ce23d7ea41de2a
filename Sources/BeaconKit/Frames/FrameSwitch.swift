/// What turns frames on and off: one boolean config key, which is also the setting changed from
/// afar (`RemoteSetting`, by `setting`) and the Home Assistant switch (`displayName`). Frames of
/// a config table may share one (Eddystone UID and URL: `[eddystone] enabled`). Each frame type
/// names its switch in `FrameTraits.switchedBy`; `BeaconFrames.switches` lists them in order.
public final class FrameSwitch: Sendable {
    /// The remote setting's name (its topic's last part, `set <setting> ON`) and the switch's object.
    public let setting: String
    /// The Home Assistant switch's name.
    public let displayName: String
    /// The config key it is: `table.key`, a boolean.
    public let table: String
    public let key: String
    /// Its value when the key is absent (from a table that is there).
    public let defaultOn: Bool

    init(setting: String, displayName: String, table: String, key: String = "enabled", defaultOn: Bool = true) {
        self.setting = setting; self.displayName = displayName; self.table = table; self.key = key
        self.defaultOn = defaultOn
    }
}
