import XCTest
@testable import BeaconKit

/// The config schema (SPEC §2): defaults, ranges, types, required keys, unknown keys.
final class ConfigSchemaTests: XCTestCase {
    func testMinimalConfigAndDefaults() throws {
        let c = try XCTUnwrap(config(minimalBeacon))
        XCTAssertEqual(c.beacon, BeaconIdentity(uuid: studyGuideUUID, major: 1, minor: 2, power: -59, companyID: 0x0118, reserved: 0))
        XCTAssertEqual(c.bluetooth, BluetoothSettings(adapter: "hci0", adapterIndex: 0, intervalMs: 100, txPowerDbm: nil))
        XCTAssertNil(c.leds)
        XCTAssertEqual(c.watchdog.checkIntervalS, 5)
        XCTAssertEqual(hexString(AltBeacon.advertisingData(c.beacon)),
                       "0201061bff1801beac2f234454cf6d4a0fadf2f4911ba9ffa600010002c500")
    }

    func testEveryKey() throws {
        let c = try XCTUnwrap(config("""
            [beacon]
            uuid = "2F234454CF6D4A0FADF2F4911BA9FFA6"
            major = 65535
            minor = 0
            power = -127
            company_id = 0xFFFF
            reserved = 255
            [bluetooth]
            adapter = "hci12"
            interval_ms = 10_240
            tx_power_dbm = -127
            [leds]
            chip = "/dev/gpiochip0"
            status = "GPIO17"
            fault = 27
            active_low = true
            [watchdog]
            check_interval_s = 3600
            """))
        XCTAssertEqual(c.beacon, BeaconIdentity(uuid: studyGuideUUID, major: 65535, minor: 0, power: -127, companyID: 0xFFFF, reserved: 255))
        XCTAssertEqual(c.bluetooth, BluetoothSettings(adapter: "hci12", adapterIndex: 12, intervalMs: 10240, txPowerDbm: -127))
        XCTAssertEqual(c.leds, LEDSettings(chip: "/dev/gpiochip0", status: .name("GPIO17"), fault: .offset(27), activeLow: true))
        XCTAssertEqual(c.watchdog, WatchdogSettings(checkIntervalS: 3600))
        XCTAssertEqual(GPIOLineRef.name("GPIO17").description, "GPIO17")
        XCTAssertEqual(GPIOLineRef.offset(17).description, "17")
    }

    func testDottedKeysAndQuotedKeysMeanTheSame() throws {
        let c = try XCTUnwrap(config("beacon.uuid = '2f234454-cf6d-4a0f-adf2-f4911ba9ffa6'\n\"beacon\".'major' = 1\nbeacon.minor = 2\nleds.chip = \"pinctrl-bcm2711\"\nleds.status = 4"))
        XCTAssertEqual(c.beacon.major, 1)
        XCTAssertEqual(c.leds, LEDSettings(chip: "pinctrl-bcm2711", status: .offset(4)))
    }

    func testUUIDForms() throws {
        for form in ["2f234454-cf6d-4a0f-adf2-f4911ba9ffa6", "2F234454-CF6D-4A0F-ADF2-F4911BA9FFA6", "2f234454cf6d4a0fadf2f4911ba9ffa6"] {
            let c = try XCTUnwrap(config(minimalBeacon.replacingOccurrences(of: "2f234454-cf6d-4a0f-adf2-f4911ba9ffa6", with: form)))
            XCTAssertEqual(c.beacon.uuid, studyGuideUUID, form)
        }
        let message = "must be 32 hex digits, plain or grouped 8-4-4-4-12 with hyphens (like \"2f234454-cf6d-4a0f-adf2-f4911ba9ffa6\")"
        for bad in ["2f234454-cf6d-4a0f-adf2-f4911ba9ffa", "2f234454cf6d-4a0f-adf2-f4911ba9ffa6", "{2f234454-cf6d-4a0f-adf2-f4911ba9ffa6}",
                    "2f234454-cf6d-4a0f-adf2-f4911ba9ffg6", "", "2f23-4454-cf6d-4a0f-adf2f4911ba9ffa6", "2f234454cf6d4a0fadf2f4911ba9ffa6a"] {
            XCTAssertEqual(configError(minimalBeacon.replacingOccurrences(of: "2f234454-cf6d-4a0f-adf2-f4911ba9ffa6", with: bad)),
                           "config.toml:2:8: beacon.uuid " + message, bad)
        }
    }

    func testWrongTypesPointAtTheValue() {
        XCTAssertEqual(configError(minimalBeacon.replacingOccurrences(of: "major = 1", with: "major = \"1\"")),
                       "config.toml:3:9: expected an integer for beacon.major, found a string")
        XCTAssertEqual(configError(minimalBeacon.replacingOccurrences(of: "minor = 2", with: "minor = true")),
                       "config.toml:4:9: expected an integer for beacon.minor, found a boolean")
        XCTAssertEqual(configError(minimalBeacon + "[bluetooth]\nadapter = 0"),
                       "config.toml:7:11: expected a string for bluetooth.adapter, found an integer")
        XCTAssertEqual(configError(minimalBeacon + "[leds]\nchip = 'gpiochip0'\nstatus = 17\nactive_low = 1"),
                       "config.toml:9:14: expected a boolean (true or false) for leds.active_low, found an integer")
        XCTAssertEqual(configError(minimalBeacon + "[leds]\nchip = 'gpiochip0'\nstatus = true"),
                       "config.toml:8:10: expected a line offset (integer) or a line name (string) for leds.status, found a boolean")
        XCTAssertEqual(configError("beacon = 1"), "config.toml:1:10: expected a table for beacon, found an integer")
        XCTAssertEqual(configError(minimalBeacon + "[beacon.major]"), "config.toml:6:1: duplicate key `beacon.major` (first defined on line 3)"
            .replacingOccurrences(of: "duplicate key `beacon.major` (first defined on line 3)", with: "`beacon.major` is already a value (line 3), so it cannot be a table")
            .replacingOccurrences(of: "6:1", with: "6:9"))
    }

    func testRanges() {
        let cases: [(String, String, String)] = [
            ("major = 1", "major = 65536", "3:9: beacon.major must be between 0 and 65535, found 65536"),
            ("minor = 2", "minor = -1", "4:9: beacon.minor must be between 0 and 65535, found -1"),
            ("minor = 2", "minor = 2\npower = 1", "5:9: beacon.power must be between -127 and 0, found 1"),
            ("minor = 2", "minor = 2\npower = -128", "5:9: beacon.power must be between -127 and 0, found -128"),
            ("minor = 2", "minor = 2\ncompany_id = 0x10000", "5:14: beacon.company_id must be between 0 and 65535, found 65536"),
            ("minor = 2", "minor = 2\nreserved = 256", "5:12: beacon.reserved must be between 0 and 255, found 256"),
        ]
        for (from, to, message) in cases {
            XCTAssertEqual(configError(minimalBeacon.replacingOccurrences(of: from, with: to)), "config.toml:" + message, to)
        }
        XCTAssertEqual(configError(minimalBeacon + "[bluetooth]\ninterval_ms = 19"),
                       "config.toml:7:15: bluetooth.interval_ms must be between 20 and 10240, found 19")
        XCTAssertEqual(configError(minimalBeacon + "[bluetooth]\ntx_power_dbm = 21"),
                       "config.toml:7:16: bluetooth.tx_power_dbm must be between -127 and 20, found 21")
        XCTAssertEqual(configError(minimalBeacon + "[watchdog]\ncheck_interval_s = 0"),
                       "config.toml:7:20: watchdog.check_interval_s must be between 1 and 3600, found 0")
        XCTAssertEqual(configError(minimalBeacon + "[leds]\nchip = 'gpiochip0'\nstatus = 4096"),
                       "config.toml:8:10: leds.status must be a line offset between 0 and 4095, or a line name, found 4096")
        XCTAssertEqual(config(minimalBeacon + "[bluetooth]\ninterval_ms = 20\ntx_power_dbm = 20")?.bluetooth.intervalMs, 20)
        XCTAssertEqual(config(minimalBeacon + "[watchdog]\ncheck_interval_s = 1")?.watchdog.checkIntervalS, 1)
    }

    func testAdapterForms() {
        XCTAssertEqual(config(minimalBeacon + "[bluetooth]\nadapter = 'hci65534'")?.bluetooth.adapterIndex, 65534)
        for bad in ["hci", "hci65535", "hci65536", "hci01", "hci00", "HCI0", "hci-1", "hci0 ", "bt0", "hci999999", "hci\u{0661}", "hci1\u{301}"] {
            XCTAssertEqual(configError(minimalBeacon + "[bluetooth]\nadapter = '\(bad)'"),
                           "config.toml:7:11: bluetooth.adapter must be hciN with N from 0 to 65534 and no leading zeros, like \"hci0\"", bad)
        }
    }

    func testSoCNumberInALineName() {
        for (name, n) in [("GPIO4", 4), ("gpio17", 17), ("BCM27", 27), ("Gpio0", 0), ("GPIO0027", 27)] as [(String, UInt32)] {
            XCTAssertEqual(GPIOLineRef.socNumber(inName: name), n, name)
        }
        for name in ["GPIO", "GPIO_GCLK", "SDA1", "GPIO4a", "GPIO-4", "GPIO99999", "ID_SDA", "BCM", "GPIO\u{0664}"] {
            XCTAssertNil(GPIOLineRef.socNumber(inName: name), name)
        }
    }

    func testLEDs() {
        XCTAssertEqual(config(minimalBeacon + "[leds]\nstatus = 17\nfault = 'GPIO27'")?.leds,
                       LEDSettings(chip: nil, status: .offset(17), fault: .name("GPIO27")), "no chip: the header's")
        XCTAssertEqual(configError(minimalBeacon + "[leds]\nchip = 'gpiochip0'"),
                       "config.toml:6:1: missing required key `leds.status` in [leds]")
        XCTAssertEqual(configError(minimalBeacon + "[leds]\nchip = ''\nstatus = 1"),
                       "config.toml:7:8: leds.chip must be a chip name (\"gpiochip0\"), path (\"/dev/gpiochip0\") or label (\"pinctrl-bcm2711\")")
        XCTAssertEqual(configError(minimalBeacon + "[leds]\nchip = 'gpiochip0'\nstatus = \"\""),
                       "config.toml:8:10: leds.status line name must be non-empty text, like \"GPIO17\"")
        XCTAssertEqual(configError(minimalBeacon + "[leds]\nchip = 'gpiochip0'\nstatus = 17\nfault = 17"),
                       "config.toml:9:9: leds.fault must be a different line from leds.status")
        XCTAssertEqual(config(minimalBeacon + "[leds]\nchip = 'gpiochip0'\nstatus = 17")?.leds,
                       LEDSettings(chip: "gpiochip0", status: .offset(17), fault: nil, activeLow: false))
    }

    func testMissingRequired() {
        XCTAssertEqual(configError(""), "config.toml:1:1: missing [beacon] table: uuid, major and minor are required")
        XCTAssertEqual(configError("# nothing\n[bluetooth]\n"), "config.toml:1:1: missing [beacon] table: uuid, major and minor are required")
        XCTAssertEqual(configError("\n[beacon]\nmajor = 1\nminor = 2"), "config.toml:2:1: missing required key `beacon.uuid` in [beacon]")
        XCTAssertEqual(configError(minimalBeacon.replacingOccurrences(of: "minor = 2\n", with: "")),
                       "config.toml:1:1: missing required key `beacon.minor` in [beacon]")
    }

    func testUnknownKeysSuggest() {
        XCTAssertEqual(configError(minimalBeacon + "minr = 3"),
                       "config.toml:6:1: unknown key `beacon.minr`; did you mean `beacon.minor`?")
        XCTAssertEqual(configError(minimalBeacon + "adapter = 'hci0'"),
                       "config.toml:6:1: unknown key `beacon.adapter`: adapter belongs in [bluetooth], not in [beacon]")
        XCTAssertEqual(configError(minimalBeacon + "[bluetooth]\ninterval = 100"),
                       "config.toml:7:1: unknown key `bluetooth.interval`; did you mean `bluetooth.interval_ms`?")
        XCTAssertEqual(configError(minimalBeacon + "[beacn.x]"),
                       "config.toml:6:2: unknown table [beacn]; did you mean [beacon]?")
        XCTAssertEqual(configError(minimalBeacon + "[led]\nchip = 'x'"),
                       "config.toml:6:2: unknown table [led]; did you mean [leds]?")
        XCTAssertEqual(configError("uuid = 'x'\n" + minimalBeacon),
                       "config.toml:1:1: unknown key `uuid`: uuid belongs in [beacon], not at the top level")
        XCTAssertEqual(configError(minimalBeacon + "zzzzzz = 1"),
                       "config.toml:6:1: unknown key `beacon.zzzzzz`; [beacon] takes uuid, major, minor, power, company_id, reserved, altbeacon, advertising, name")
        XCTAssertEqual(configError(minimalBeacon + "[qqqqqqqq]"),
                       "config.toml:6:2: unknown table [qqqqqqqq]; the tables are [beacon], [bluetooth], [leds], [watchdog], [ibeacon], [overflow], [eddystone], [gatt_identity], [metrics]")
        XCTAssertEqual(configError(minimalBeacon + "[beacon.extra]"),
                       "config.toml:6:9: unknown table [beacon.extra]; [beacon] takes uuid, major, minor, power, company_id, reserved, altbeacon, advertising, name")
    }

    func testEarliestProblemIsReported() {
        // Bad values and unknown keys in file order, before missing keys.
        XCTAssertEqual(configError("[beacon]\nuuid = 1\nmajor = 'x'\nminr = 2"),
                       "config.toml:2:8: expected a string for beacon.uuid, found an integer")
        XCTAssertEqual(configError("[bluetooth]\nadapter = 1\n[beacon]\nuuid = 1\n"),
                       "config.toml:2:11: expected a string for bluetooth.adapter, found an integer")
    }

    func testDiagnosticRendering() throws {
        guard case .failure(let d) = ConfigFile.parse(Array("[beacon]\n\tmajor =\t\"x\"\r\nminor = 1\nuuid = '2f234454cf6d4a0fadf2f4911ba9ffa6'".utf8), path: "/etc/altbeacond/config.toml")
        else { return XCTFail() }
        XCTAssertEqual(d.line, 2)
        XCTAssertEqual(d.column, 10)
        XCTAssertEqual(d.sourceLine, "\tmajor =\t\"x\"")
        XCTAssertEqual(d.description, "/etc/altbeacond/config.toml:2:10: expected an integer for beacon.major, found a string\n\tmajor =\t\"x\"\n\t       \t^")
        guard case .failure(let u) = ConfigFile.parse(Array("[beacon]\nuuid = \"é\" x".utf8), path: "c") else { return XCTFail() }
        XCTAssertEqual(u.description, "c:2:12: expected a comment or the end of the line, found `x`\nuuid = \"é\" x\n           ^")
        XCTAssertEqual(ConfigFile.defaultPath, "/etc/altbeacond/config.toml")
    }

    func testExampleConfigAtRepoRootParses() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let data = try Data(contentsOf: root.appendingPathComponent("config.toml"))
        switch ConfigFile.parse([UInt8](data), path: "config.toml") {
        case .success(let c):
            XCTAssertEqual(c.beacon, BeaconIdentity(uuid: studyGuideUUID, major: 1, minor: 2, power: -59))
            XCTAssertEqual(c.bluetooth, BluetoothSettings())
            XCTAssertNil(c.leds)
        case .failure(let d):
            XCTFail("\(d)")
        }
        // Its commented-out keys are valid too.
        var text = String(decoding: data, as: UTF8.self)
        text = text.split(separator: "\n", omittingEmptySubsequences: false).map { line -> String in
            let s = String(line)
            if s.hasPrefix("# ") && (s.contains(" = ") || s.hasPrefix("# [")) { return String(s.dropFirst(2)) }
            return s
        }.joined(separator: "\n")
        let all = try XCTUnwrap(config(text))
        // And the example in docs/config.md.
        let doc = try String(contentsOf: root.appendingPathComponent("docs/config.md"), encoding: .utf8)
        let block = try XCTUnwrap(doc.components(separatedBy: "```toml\n").dropFirst().first?.components(separatedBy: "```").first)
        XCTAssertEqual(config(block)?.leds, LEDSettings(chip: nil, status: .offset(17), fault: .offset(27)), "the header chip, by label")
        XCTAssertEqual(all.leds, LEDSettings(chip: "gpiochip0", status: .offset(17), fault: .offset(27), activeLow: false))
        XCTAssertEqual(all.bluetooth.txPowerDbm, 0)
    }
}
