/// The tables and keys of the config file (SPEC §2), in the order the docs list them.
enum ConfigSchema {
    /// The frame tables (`[ibeacon]`, `[overflow]`, `[eddystone]`) come from the frame table.
    static let tables: [(name: String, keys: [String])] = [
        ("beacon", ["uuid", "major", "minor", "power", "company_id", "reserved", "altbeacon", "advertising", "name"]),
        ("bluetooth", ["adapter", "interval_ms", "tx_power_dbm", "rotation_ms"]),
        ("leds", ["chip", "status", "fault", "active_low"]),
        ("watchdog", ["check_interval_s"]),
    ] + BeaconFrames.configTables + [
        ("gatt_identity", ["identifier", "name"]),
        ("metrics", ["textfile"]),
    ]

    /// Compared byte for byte (TOML keys are scalar sequences; see `sameKey`).
    static func keys(of table: String) -> [String]? {
        tables.first { sameKey($0.name, table) }?.keys
    }
}

/// The schema's own tables, read by `ConfigValidator` (its core: TOML/ConfigValidator.swift).
extension ConfigValidator {
    mutating func validate(_ root: TOMLTable) -> BeaconConfig? {
        var tables: [String: TOMLTable] = [:]
        for e in root.entries {
            guard let keys = ConfigSchema.keys(of: e.key) else {
                reportUnknown(table: nil, entry: e)
                continue
            }
            guard case .table(let t) = e.value else {
                report("expected a table for \(e.key), found \(e.value.typeDescription)", at: e.valuePosition)
                continue
            }
            for k in t.entries where !keys.contains(where: { sameKey($0, k.key) }) { reportUnknown(table: e.key, entry: k) }
            tables[e.key] = t   // e.key is byte-equal to a schema name here
        }
        let beacon = root.entry("beacon") == nil || tables["beacon"] != nil ? readBeacon(tables["beacon"]) : nil
        let bluetooth = readBluetooth(tables["bluetooth"] ?? TOMLTable())
        let leds = tables["leds"].flatMap { readLEDs($0) }
        let watchdog = readWatchdog(tables["watchdog"] ?? TOMLTable())
        let frames = beacon.flatMap { readFrames($0, tables) }
        let gatt = beacon.flatMap { b in tables["gatt_identity"].flatMap { readGATTIdentity($0, b) } }
        let metrics = tables["metrics"].map { readMetrics($0) }
        let name = tables["beacon"].flatMap { readBeaconName($0) }
        let advertising = tables["beacon"].flatMap { boolean($0, "beacon", "advertising") } ?? true
        guard problems.isEmpty, let b = beacon, let frames, let bt = bluetooth, let w = watchdog else { return nil }
        if tables["leds"] != nil, leds == nil { return nil }
        if tables["gatt_identity"] != nil, gatt == nil { return nil }
        var config = BeaconConfig(beacon: b, frames: frames, bluetooth: bt, leds: leds, watchdog: w, gattIdentity: gatt)
        config.metrics = metrics ?? MetricsSettings()
        config.name = name
        config.advertising = advertising
        return config
    }

    // MARK: - Tables

    mutating func readBeacon(_ t: TOMLTable?) -> BeaconIdentity? {
        guard let t else {
            report("missing [beacon] table: uuid, major and minor are required", at: .start, rank: .missing, key: "beacon")
            return nil
        }
        let uuid = readUUID(t)
        let major = integer(t, "beacon", "major", BeaconIdentity.majorMinorRange, required: true)
        let minor = integer(t, "beacon", "minor", BeaconIdentity.majorMinorRange, required: true)
        let power = integer(t, "beacon", "power", BeaconIdentity.powerRange) ?? Int64(BeaconIdentity.defaultPower)
        let company = integer(t, "beacon", "company_id", 0...0xFFFF) ?? Int64(BeaconIdentity.defaultCompanyID)
        let reserved = integer(t, "beacon", "reserved", 0...255) ?? 0
        guard let uuid, let major, let minor else { return nil }
        return BeaconIdentity(uuid: uuid, major: UInt16(truncatingIfNeeded: major), minor: UInt16(truncatingIfNeeded: minor),
                              power: Int8(truncatingIfNeeded: power), companyID: UInt16(truncatingIfNeeded: company),
                              reserved: UInt8(truncatingIfNeeded: reserved))
    }

    mutating func readBluetooth(_ t: TOMLTable) -> BluetoothSettings? {
        var out = BluetoothSettings()
        var ok = true
        if let (s, p) = string(t, "bluetooth", "adapter") {
            if let n = parseAdapterIndex(s) {
                out.adapter = s
                out.adapterIndex = n
            } else {
                report("bluetooth.adapter must be hciN with N from 0 to 65534 and no leading zeros, like \"hci0\"", at: p)
                ok = false
            }
        } else if t.entry("adapter") != nil { ok = false }
        if let v = integer(t, "bluetooth", "interval_ms", BluetoothSettings.intervalRange) {
            out.intervalMs = UInt16(truncatingIfNeeded: v)
        }
        if let v = integer(t, "bluetooth", "tx_power_dbm", BluetoothSettings.txPowerRange) {
            out.txPowerDbm = Int8(truncatingIfNeeded: v)
        }
        if let v = integer(t, "bluetooth", "rotation_ms", BluetoothSettings.rotationRange) {
            out.rotationMs = UInt16(truncatingIfNeeded: v)
        }
        return ok ? out : nil
    }

    mutating func readLEDs(_ t: TOMLTable) -> LEDSettings? {
        var chip: String?
        if let (s, p) = string(t, "leds", "chip") {
            if s.isEmpty || s.unicodeScalars.contains(where: \.isControlCharacter) {
                report("leds.chip must be a chip name (\"gpiochip0\"), path (\"/dev/gpiochip0\") or label (\"pinctrl-bcm2711\")", at: p)
            } else {
                chip = s
            }
        }
        let status = line(t, "status", required: true)
        let fault = line(t, "fault")
        let activeLow = boolean(t, "leds", "active_low") ?? false
        if let status, let fault, status == fault, let e = t.entry("fault") {
            report("leds.fault must be a different line from leds.status", at: e.valuePosition)
            return nil
        }
        if t.entry("chip") != nil, chip == nil { return nil }
        guard let status else { return nil }
        return LEDSettings(chip: chip, status: status, fault: fault, activeLow: activeLow)
    }

    mutating func readWatchdog(_ t: TOMLTable) -> WatchdogSettings? {
        var out = WatchdogSettings()
        if let v = integer(t, "watchdog", "check_interval_s", WatchdogSettings.checkIntervalRange) {
            out.checkIntervalS = UInt32(truncatingIfNeeded: v)
        }
        return out
    }

    /// `[metrics]`: `textfile`, an absolute path ending in `.prom` (node_exporter's textfile
    /// collector reads only those; the temporary file beside it does not end so).
    mutating func readMetrics(_ t: TOMLTable) -> MetricsSettings {
        var out = MetricsSettings()
        guard let (path, at) = string(t, "metrics", "textfile") else { return out }
        if !path.hasPrefix("/") {
            report("metrics.textfile must be an absolute path, found \"\(path)\"", at: at)
        } else if !path.hasSuffix(".prom") || path.hasSuffix("/.prom") {
            report("metrics.textfile must end in .prom (node_exporter's textfile collector reads only those), found \"\(path)\"", at: at)
        } else if path.utf8.count > 4000 || path.utf8.contains(0) {
            report("metrics.textfile is not a usable path", at: at)
        } else {
            out.textfile = path
        }
        return out
    }

    /// A GPIO line: an offset, or a line name such as "GPIO17".
    mutating func line(_ t: TOMLTable, _ key: String, required: Bool = false) -> GPIOLineRef? {
        guard let e = t.entry(key) else {
            if required { missing(t, "leds", key) }
            return nil
        }
        switch e.value {
        case .integer(let v):
            guard v >= 0, v <= Int64(LEDSettings.maxLineOffset) else {
                report("leds.\(key) must be a line offset between 0 and \(LEDSettings.maxLineOffset), or a line name, found \(v)", at: e.valuePosition)
                return nil
            }
            return .offset(UInt32(v))
        case .string(let s):
            guard !s.isEmpty, !s.unicodeScalars.contains(where: \.isControlCharacter) else {
                report("leds.\(key) line name must be non-empty text, like \"GPIO17\"", at: e.valuePosition)
                return nil
            }
            return .name(s)
        default:
            wrongType(e, "leds", expected: "a line offset (integer) or a line name (string)")
            return nil
        }
    }
}


/// "hciN" -> N: exactly "hci" and N in 0...65534 written without leading zeros ("hci01" is
/// refused: the kernel names adapters hci0, hci1, ...; 65535 is HCI_DEV_NONE). The one parser
/// for `bluetooth.adapter` and `scan --adapter`. Byte-wise, so hostile text costs linear time.
public func parseAdapterIndex(_ s: String) -> UInt16? {
    let u = Array(s.utf8.prefix(9))
    guard u.count > 3, u.count <= 8, s.utf8.count == u.count,
          u[0] == UInt8(ascii: "h"), u[1] == UInt8(ascii: "c"), u[2] == UInt8(ascii: "i") else { return nil }
    let digits = u[3...]
    guard digits.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
    if digits.count > 1, digits.first == 0x30 { return nil }
    var n = 0
    for d in digits { n = n * 10 + Int(d - 0x30) }
    return n <= 65534 ? UInt16(n) : nil
}
