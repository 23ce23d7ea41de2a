/// The daemon's configuration (SPEC §2), as read from /etc/altbeacond/config.toml.
public struct BeaconConfig: Equatable, Sendable {
    /// `[beacon]`: the AltBeacon identity, and the defaults of `[ibeacon]`.
    public var beacon: BeaconIdentity
    /// What goes on air, in the fixed order of `BeaconFrames.types` (SPEC §3); never empty.
    public var frames: [ConfiguredFrame]
    public var bluetooth: BluetoothSettings
    /// nil when the file has no [leds] table.
    public var leds: LEDSettings?
    public var watchdog: WatchdogSettings
    /// `[gatt_identity]`: the identity the iOS "AltBeacon" library connects to read; nil without
    /// the table. Not a frame: connectable advertising with a GATT server behind it.
    public var gattIdentity: GATTIdentity?
    /// `[metrics]`: the Prometheus text file (SPEC §10); nothing written without it.
    public var metrics = MetricsSettings()
    /// `[beacon] name`: the scan response's local name (`BeaconName`); nil: not in the file (the
    /// hostname, `hostName`); "": no name, no scan response (the frames stay ADV_NONCONN_IND).
    public var name: String?
    /// The machine's hostname, for a config without `name`: set by the daemon at start and at
    /// each reload (BeaconKit does no I/O); nil: not resolved (`check`, the tests).
    public var hostName: String?
    /// `beacon.advertising`: false keeps the whole beacon off air on purpose (and, being in the
    /// file, across reboots). `frames` still says what would go on air once it is true again.
    public var advertising: Bool = true

    /// `frames` nil: the AltBeacon frame of `beacon` alone.
    public init(beacon: BeaconIdentity, frames: [ConfiguredFrame]? = nil, bluetooth: BluetoothSettings = BluetoothSettings(),
                leds: LEDSettings? = nil, watchdog: WatchdogSettings = WatchdogSettings(), gattIdentity: GATTIdentity? = nil) {
        self.beacon = beacon
        self.frames = frames ?? [ConfiguredFrame(AltBeaconFrame(beacon))]
        self.bluetooth = bluetooth
        self.leds = leds
        self.watchdog = watchdog
        self.gattIdentity = gattIdentity
    }
}

/// `[metrics]`.
public struct MetricsSettings: Equatable, Sendable {
    /// Where node_exporter's textfile collector reads our metrics (an absolute `.prom` path).
    public var textfile: String?
    public init(textfile: String? = nil) { self.textfile = textfile }
}

/// `[bluetooth]`.
public struct BluetoothSettings: Equatable, Sendable {
    /// "hciN".
    public var adapter: String
    /// N of hciN.
    public var adapterIndex: UInt16
    /// Advertising interval, 20...10240 ms.
    public var intervalMs: UInt16
    /// Radio TX power, -127...20 dBm; nil when unset.
    public var txPowerDbm: Int8?
    /// On controllers without LE extended advertising, how long each frame stays on air in turn.
    public var rotationMs: UInt16

    public static let defaultIntervalMs: UInt16 = 100
    public static let intervalRange: ClosedRange<Int64> = 20...10240
    public static let txPowerRange: ClosedRange<Int64> = -127...20
    public static let defaultRotationMs: UInt16 = 1000
    public static let rotationRange: ClosedRange<Int64> = 100...10000

    public init(adapter: String = "hci0", adapterIndex: UInt16 = 0,
                intervalMs: UInt16 = BluetoothSettings.defaultIntervalMs, txPowerDbm: Int8? = nil,
                rotationMs: UInt16 = BluetoothSettings.defaultRotationMs) {
        self.adapter = adapter
        self.adapterIndex = adapterIndex
        self.intervalMs = intervalMs
        self.txPowerDbm = txPowerDbm
        self.rotationMs = rotationMs
    }
}

/// A GPIO line: by offset on its chip, or by name (e.g. "GPIO17").
public enum GPIOLineRef: Equatable, Sendable, CustomStringConvertible {
    case offset(UInt32)
    case name(String)

    /// "17" or "GPIO17".
    public var description: String {
        switch self {
        case .offset(let n): return String(n)
        case .name(let s): return s
        }
    }

    /// The SoC GPIO number a name such as "GPIO4", "gpio4" or "BCM4" means: on a Pi's header chip
    /// that is the line's offset. For a hint when the device tree names the line after its
    /// function instead (lines 0-15: "GPIO_GCLK", "SDA1", "TXD1", ...).
    public static func socNumber(inName name: String) -> UInt32? {
        let upper = name.uppercased()
        guard let prefix = ["GPIO", "BCM"].first(where: { upper.hasPrefix($0) }) else { return nil }
        let digits = upper.dropFirst(prefix.count)
        guard !digits.isEmpty, digits.count <= 4, digits.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        return UInt32(digits)
    }
}

/// `[leds]`.
public struct LEDSettings: Equatable, Sendable {
    /// As written: "gpiochip0", "/dev/gpiochip0" or a label such as "pinctrl-bcm2711"; nil: the
    /// Raspberry Pi's 40-pin header chip, whichever model (`headerChipLabels`).
    public var chip: String?
    public var status: GPIOLineRef
    public var fault: GPIOLineRef?
    /// LEDs light when the line is driven low.
    public var activeLow: Bool

    public static let maxLineOffset: UInt32 = 4095
    /// The header's GPIO chip by model, with Debian's and Raspberry Pi OS's kernels: Pi 4 and
    /// 400; Pi 3 and Zero 2 W; Pi 5. On all of them header GPIO n is line n of that chip.
    public static let headerChipLabels = ["pinctrl-bcm2711", "pinctrl-bcm2835", "pinctrl-rp1"]

    public init(chip: String? = nil, status: GPIOLineRef, fault: GPIOLineRef? = nil, activeLow: Bool = false) {
        self.chip = chip
        self.status = status
        self.fault = fault
        self.activeLow = activeLow
    }
}

/// `[watchdog]`.
public struct WatchdogSettings: Equatable, Sendable {
    /// Period of the active health probe, 1...3600 s.
    public var checkIntervalS: UInt32

    public static let defaultCheckIntervalS: UInt32 = 5
    public static let checkIntervalRange: ClosedRange<Int64> = 1...3600

    public init(checkIntervalS: UInt32 = WatchdogSettings.defaultCheckIntervalS) {
        self.checkIntervalS = checkIntervalS
    }
}

/// Reading the config file.
public enum ConfigFile {
    public static let defaultPath = "/etc/altbeacond/config.toml"

    /// Parses and validates a config file. Never traps or hangs, whatever the bytes: input is
    /// capped at `TOML.maxInputBytes` and nesting at `TOML.maxDepth`. On refusal the diagnostic
    /// is the first of `parseAll`'s: the earliest syntax error, else the earliest unknown or
    /// misplaced key or bad value, else a missing required key.
    public static func parse(_ bytes: [UInt8], path: String) -> Result<BeaconConfig, ConfigDiagnostic> {
        parseAll(bytes, path: path).mapError { $0.first }
    }

    /// Like `parse`, with every problem found (at most `limit`; never empty on failure), in
    /// the order `parse` ranks them. Syntax errors come alone: the table tree behind them is
    /// partial, so schema errors would only echo them.
    public static func parseAll(_ bytes: [UInt8], path: String, limit: Int = TOML.maxErrors) -> Result<BeaconConfig, ConfigDiagnostics> {
        let (table, source, errors) = TOML.parseSource(bytes, path: path, limit: max(1, limit))
        if !errors.isEmpty { return .failure(ConfigDiagnostics(errors)) }
        var validator = ConfigValidator(source: source)
        if let config = validator.validate(table) { return .success(config) }
        let found = validator.diagnostics(limit: max(1, limit))
        return .failure(ConfigDiagnostics(found.isEmpty ? [source.diagnostic("invalid config", at: .start)] : found))
    }

    /// Convenience for text already in memory.
    public static func parse(_ text: String, path: String) -> Result<BeaconConfig, ConfigDiagnostic> {
        parse(Array(text.utf8), path: path)
    }
}
