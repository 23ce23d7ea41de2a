import XCTest
@testable import BeaconKit

/// Issue 32's switches: `beacon.advertising` (the whole beacon) and each frame table's `enabled`.
final class ConfigSwitchTests: XCTestCase {
    func testAdvertisingDefaultsToOnAndKeepsTheFramesWhenOff() throws {
        XCTAssertEqual(try XCTUnwrap(config(minimalBeacon)).advertising, true)
        let off = try XCTUnwrap(config(minimalBeacon + "advertising = false\n[ibeacon]\n"))
        XCTAssertFalse(off.advertising)
        // What would go on air is still known (and validated): switching on cannot be refused.
        XCTAssertEqual(off.frames.map(\.name), ["altbeacon", "ibeacon"])
        XCTAssertTrue(try XCTUnwrap(config(minimalBeacon + "advertising = true\n")).advertising)
        XCTAssertEqual(configError(minimalBeacon + "advertising = \"off\"\n"),
                       "config.toml:6:15: expected a boolean (true or false) for beacon.advertising, found a string")
    }

    func testAFrameTableSwitchedOffSendsNothing() throws {
        let both = minimalBeacon + "[ibeacon]\nenabled = false\nmajor = 9\n[overflow]\n"
        let c = try XCTUnwrap(config(both))
        XCTAssertEqual(c.frames.map(\.name), ["altbeacon", "overflow-area"])
        // Overflow still takes the (switched-off) iBeacon table's numbers: one switch changes one frame.
        let overflow = try XCTUnwrap(c.frames.last?.frame as? OverflowAreaFrame)
        XCTAssertEqual(overflow.major, 9)
        XCTAssertEqual(try XCTUnwrap(config(both + "enabled = false\n")).frames.map(\.name), ["altbeacon"])
        XCTAssertEqual(try XCTUnwrap(config(minimalBeacon + "[ibeacon]\nenabled = true\n")).frames.map(\.name), ["altbeacon", "ibeacon"])
        // An [eddystone] table switched off need not turn anything on...
        XCTAssertEqual(try XCTUnwrap(config(minimalBeacon + "[eddystone]\nenabled = false\n")).frames.map(\.name), ["altbeacon"])
        XCTAssertEqual(try XCTUnwrap(config(minimalBeacon + "[eddystone]\nenabled = false\ntlm = true\n")).frames.map(\.name), ["altbeacon"])
        // ...but switched on it must.
        XCTAssertEqual(configError(minimalBeacon + "[eddystone]\nenabled = true\n"),
                       "config.toml:6:1: [eddystone] turns on no frame: set namespace and instance (UID), url (URL) or tlm = true (TLM)")
    }

    func testASwitchedOffTableIsStillValidated() {
        XCTAssertEqual(configError(minimalBeacon + "[ibeacon]\nenabled = false\nmajor = 70000\n"),
                       "config.toml:8:9: ibeacon.major must be between 0 and 65535, found 70000")
        XCTAssertEqual(configError(minimalBeacon + "[overflow]\nenabled = false\nmatching_byte = 256\n"),
                       "config.toml:8:17: overflow.matching_byte must be between 0 and 255, found 256")
        XCTAssertEqual(configError(minimalBeacon + "[eddystone]\nenabled = false\nurl = \"ftp://x\"\n"),
                       "config.toml:8:7: eddystone.url must start with http:// or https:// (lowercase), like \"https://example.com\"")
        XCTAssertEqual(configError(minimalBeacon + "[overflow]\nenabled = 0\n"),
                       "config.toml:7:11: expected a boolean (true or false) for overflow.enabled, found an integer")
    }

    func testAltBeaconOffStillNeedsAFrameThatIsOn() {
        XCTAssertEqual(configError(minimalBeacon + "altbeacon = false\n[ibeacon]\nenabled = false\n"),
                       "config.toml:6:13: beacon.altbeacon = false needs another frame: add an [ibeacon], [overflow] or [eddystone] table (or set enabled = true in [ibeacon])")
        // Even with the beacon off air: a config always says what it sends.
        XCTAssertEqual(configError(minimalBeacon + "altbeacon = false\nadvertising = false\n"),
                       "config.toml:6:13: beacon.altbeacon = false needs another frame: add an [ibeacon], [overflow] or [eddystone] table, even with beacon.advertising = false: the config must say what goes on air once advertising is on again")
        XCTAssertNotNil(config(minimalBeacon + "altbeacon = false\n[ibeacon]\nenabled = false\n[overflow]\n"))
    }

    func testSuggestionsForTheNewKeys() {
        XCTAssertEqual(configError(minimalBeacon + "advertsing = false\n"),
                       "config.toml:6:1: unknown key `beacon.advertsing`; did you mean `beacon.advertising`?")
        XCTAssertEqual(configError(minimalBeacon + "enabled = false\n"),
                       "config.toml:6:1: unknown key `beacon.enabled`; did you mean `beacon.advertising` (the whole beacon on or off air)?")
        XCTAssertEqual(configError(minimalBeacon + "[ibeacon]\nenable = false\n"),
                       "config.toml:7:1: unknown key `ibeacon.enable`; did you mean `ibeacon.enabled`?")
        XCTAssertEqual(configError("advertising = false\n" + minimalBeacon),
                       "config.toml:1:1: unknown key `advertising`: advertising belongs in [beacon], not at the top level")
    }

    func testCheckSaysWhenTheBeaconIsOffAir() throws {
        let off = CheckReport.render(try XCTUnwrap(config(minimalBeacon + "advertising = false\n")), path: "/c.toml")
        let lines = off.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines[1], "advertising: off (beacon.advertising = false): nothing goes on air; below is what would")
        XCTAssertTrue(lines.contains("advertising-data: 0201061bff1801beac2f234454cf6d4a0fadf2f4911ba9ffa600010002c500"))
        let on = CheckReport.render(try XCTUnwrap(config(minimalBeacon)), path: "/c.toml")
        XCTAssertFalse(on.contains("advertising: off"))
    }
}
