import XCTest
@testable import BeaconKit

/// `[ibeacon]`, `[overflow]`, `[eddystone]`, `beacon.altbeacon` and `bluetooth.rotation_ms` (SPEC §2).
final class FrameConfigTests: XCTestCase {
    static let eddystoneUID = "[eddystone]\nnamespace = \"edd1ebeac04e5defa017\"\ninstance = \"0123456789ab\"\n"

    func frames(_ text: String, file: StaticString = #filePath, line: UInt = #line) -> [any BeaconFrame] {
        config(text, file: file, line: line)?.frames.map(\.frame) ?? []
    }

    func testDefaultIsAltBeaconAlone() throws {
        let c = try XCTUnwrap(config(minimalBeacon))
        XCTAssertEqual(c.frames.map(\.name), ["altbeacon"])
        XCTAssertEqual(c.frames.first?.frame as? AltBeaconFrame, FrameTests.altbeacon)
        XCTAssertEqual(c.bluetooth.rotationMs, 1000)
    }

    func testIBeaconDefaultsFromBeacon() throws {
        let f = frames(minimalBeacon + "power = -65\n[ibeacon]\n")
        XCTAssertEqual(f.map(\.name), ["altbeacon", "ibeacon"])
        XCTAssertEqual(f.last as? IBeaconFrame, IBeaconFrame(uuid: studyGuideUUID, major: 1, minor: 2, power: -65))
        // Each key on its own overrides only itself.
        XCTAssertEqual(frames(minimalBeacon + "[ibeacon]\nminor = 7\n").last as? IBeaconFrame,
                       IBeaconFrame(uuid: studyGuideUUID, major: 1, minor: 7, power: -59))
        XCTAssertEqual(frames(minimalBeacon + "[ibeacon]\nuuid = 'FFFFFFFF-0000-0000-0000-000000000001'\nmajor = 65535\npower = -127\n").last as? IBeaconFrame,
                       IBeaconFrame(uuid: bytes("ffffffff000000000000000000000001"), major: 65535, minor: 2, power: -127))
        // The company ID and reserved byte of [beacon] are AltBeacon's only.
        XCTAssertEqual(hexString(frames(minimalBeacon + "company_id = 0x1234\nreserved = 9\n[ibeacon]\n").last?.advertisingData(.zero) ?? []),
                       bytes(FrameTests.ibeaconHex).hexText)
        XCTAssertEqual(configError(minimalBeacon + "[ibeacon]\nuuid = 'x'"),
                       "config.toml:7:8: ibeacon.uuid must be 32 hex digits, plain or grouped 8-4-4-4-12 with hyphens (like \"2f234454-cf6d-4a0f-adf2-f4911ba9ffa6\")")
        XCTAssertEqual(configError(minimalBeacon + "[ibeacon]\nmajor = 65536"),
                       "config.toml:7:9: ibeacon.major must be between 0 and 65535, found 65536")
        XCTAssertEqual(configError(minimalBeacon + "[ibeacon]\npower = 1"),
                       "config.toml:7:9: ibeacon.power must be between -127 and 0, found 1")
    }

    func testAllFramesInFixedOrder() throws {
        let f = frames(minimalBeacon + Self.eddystoneUID + "url = 'https://www.example.com/'\ntlm = true\n[overflow]\n[ibeacon]\n")
        XCTAssertEqual(f.map(\.name), ["altbeacon", "ibeacon", "overflow-area", "eddystone-uid", "eddystone-url", "eddystone-tlm"])
        XCTAssertEqual(f[2] as? OverflowAreaFrame, FrameTests.overflow)
        XCTAssertEqual(f[3] as? EddystoneUIDFrame, FrameTests.uid)
        XCTAssertEqual(f[4] as? EddystoneURLFrame, FrameTests.url)
        XCTAssertEqual(f[5] as? EddystoneTLMFrame, EddystoneTLMFrame())
    }

    func air(_ f: (any BeaconFrame)?) -> String { f.map { hexString($0.advertisingData(.zero)) } ?? "none" }

    func testOverflowDefaultsFromBeacon() {
        let f = frames(minimalBeacon + "[overflow]\n")
        XCTAssertEqual(f.map(\.name), ["altbeacon", "overflow-area"])
        XCTAssertEqual(f.last as? OverflowAreaFrame, OverflowAreaFrame(major: 1, minor: 2, matchingByte: 0xaa))
        XCTAssertEqual(air(f.last), bytes("020106 14ff4c0001 01aa 0001 0002 00000000000000000000").hexText)
        // [beacon]'s power, company and UUID play no part in it.
        XCTAssertEqual(air(frames(minimalBeacon + "power = -70\ncompany_id = 0x4c\n[overflow]\n").last),
                       bytes("020106 14ff4c0001 01aa 0001 0002 00000000000000000000").hexText)
    }

    /// The reference app's "fused beacon": iBeacon beside it with the same major and minor.
    func testOverflowDefaultsFromIBeacon() {
        let f = frames(minimalBeacon + "[ibeacon]\nmajor = 7\nminor = 0x0102\n[overflow]\n")
        XCTAssertEqual(f.map(\.name), ["altbeacon", "ibeacon", "overflow-area"])
        XCTAssertEqual(air(f.last), bytes("020106 14ff4c0001 01aa 0007 0102 00000000000000000000").hexText)
        // Wherever the tables stand in the file; an [ibeacon] key left out is [beacon]'s there too.
        XCTAssertEqual(air(frames(minimalBeacon + "[overflow]\n[ibeacon]\nmajor = 300\n").last),
                       bytes("020106 14ff4c0001 01aa 012c 0002 00000000000000000000").hexText)
        XCTAssertEqual(air(frames(minimalBeacon + "[ibeacon]\n[overflow]\n").last),
                       bytes("020106 14ff4c0001 01aa 0001 0002 00000000000000000000").hexText)
        // Its own keys win over both.
        XCTAssertEqual(air(frames(minimalBeacon + "[ibeacon]\nmajor = 7\n[overflow]\nminor = 65535\nmatching_byte = 0x5A\n").last),
                       bytes("020106 14ff4c0001 015a 0007 ffff 00000000000000000000").hexText)
        XCTAssertEqual(air(frames(minimalBeacon + "[overflow]\nmajor = 0\nminor = 0\nmatching_byte = 0\n").last),
                       bytes("020106 14ff4c0001 0100 0000 0000 00000000000000000000").hexText)
        XCTAssertEqual(air(frames(minimalBeacon + "[overflow]\nmatching_byte = 255\n").last),
                       bytes("020106 14ff4c0001 01ff 0001 0002 00000000000000000000").hexText)
        // Without AltBeacon: the fused beacon alone.
        XCTAssertEqual(frames(minimalBeacon + "altbeacon = false\n[ibeacon]\n[overflow]\n").map(\.name), ["ibeacon", "overflow-area"])
        XCTAssertEqual(frames(minimalBeacon + "altbeacon = false\n[overflow]\n").map(\.name), ["overflow-area"])
    }

    func testOverflowRefusals() {
        XCTAssertEqual(configError(minimalBeacon + "[overflow]\nmatching_byte = 256"),
                       "config.toml:7:17: overflow.matching_byte must be between 0 and 255, found 256")
        XCTAssertEqual(configError(minimalBeacon + "[overflow]\nmatching_byte = -1"),
                       "config.toml:7:17: overflow.matching_byte must be between 0 and 255, found -1")
        XCTAssertEqual(configError(minimalBeacon + "[overflow]\nmatching_byte = 'aa'"),
                       "config.toml:7:17: expected an integer for overflow.matching_byte, found a string")
        XCTAssertEqual(configError(minimalBeacon + "[overflow]\nmajor = 65536"),
                       "config.toml:7:9: overflow.major must be between 0 and 65535, found 65536")
        XCTAssertEqual(configError(minimalBeacon + "[overflow]\nminor = -1"),
                       "config.toml:7:9: overflow.minor must be between 0 and 65535, found -1")
        XCTAssertEqual(configError(minimalBeacon + "[overflow]\nmatchingbyte = 1"),
                       "config.toml:7:1: unknown key `overflow.matchingbyte`; did you mean `overflow.matching_byte`?")
        XCTAssertEqual(configError(minimalBeacon + "[overflow]\nmajr = 1"),
                       "config.toml:7:1: unknown key `overflow.majr`; did you mean `overflow.major`?")
        XCTAssertEqual(configError(minimalBeacon + "[overflow]\nuuid = '2f234454-cf6d-4a0f-adf2-f4911ba9ffa6'"),
                       "config.toml:7:1: unknown key `overflow.uuid`: uuid belongs in [beacon], not in [overflow]")
        XCTAssertEqual(configError(minimalBeacon + "[overflow]\nzzzzzz = 1"),
                       "config.toml:7:1: unknown key `overflow.zzzzzz`; [overflow] takes enabled, major, minor, matching_byte")
        XCTAssertEqual(configError(minimalBeacon + "[overflw]\n"),
                       "config.toml:6:2: unknown table [overflw]; did you mean [overflow]?")
        XCTAssertEqual(configError(minimalBeacon + "matching_byte = 1\n"),
                       "config.toml:6:1: unknown key `beacon.matching_byte`: matching_byte belongs in [overflow], not in [beacon]")
        XCTAssertEqual(configError(minimalBeacon + "overflow = 1\n"),
                       "config.toml:6:1: unknown key `beacon.overflow`; [beacon] takes uuid, major, minor, power, company_id, reserved, altbeacon, advertising, name")
    }

    func testEddystoneUIDNeedsBoth() {
        XCTAssertEqual(configError(minimalBeacon + "[eddystone]\nnamespace = \"edd1ebeac04e5defa017\""),
                       "config.toml:7:1: eddystone.namespace needs eddystone.instance (12 hex digits) too: the UID frame sends both")
        XCTAssertEqual(configError(minimalBeacon + "[eddystone]\ninstance = \"0123456789ab\"\ntlm = true"),
                       "config.toml:7:1: eddystone.instance needs eddystone.namespace (20 hex digits) too: the UID frame sends both")
        XCTAssertEqual(frames(minimalBeacon + Self.eddystoneUID).map(\.name), ["altbeacon", "eddystone-uid"])
        // Any case.
        XCTAssertEqual(frames(minimalBeacon + "[eddystone]\nnamespace = 'EDD1EBEAC04E5DEFA017'\ninstance = '0123456789AB'").last as? EddystoneUIDFrame,
                       FrameTests.uid)
    }

    func testEddystoneBadHex() {
        let ns = "eddystone.namespace must be exactly 20 hex digits, like \"edd1ebeac04e5defa017\""
        for bad in ["edd1ebeac04e5defa01g", "edd1ebeac04e5defa01", "edd1ebeac04e5defa0171", "", "edd1ebeac0-4e5defa017", " dd1ebeac04e5defa017",
                    "edd1ebeac04e5defa01\u{e9}", "0xd1ebeac04e5defa017"] {
            XCTAssertEqual(configError(minimalBeacon + "[eddystone]\nnamespace = \"\(bad)\"\ninstance = \"0123456789ab\""),
                           "config.toml:7:13: " + ns, bad)
        }
        let inst = "eddystone.instance must be exactly 12 hex digits, like \"0123456789ab\""
        for bad in ["0123456789a", "0123456789abc", "0123456789ax", "01234 6789ab"] {
            XCTAssertEqual(configError(minimalBeacon + "[eddystone]\nnamespace = \"edd1ebeac04e5defa017\"\ninstance = \"\(bad)\""),
                           "config.toml:8:12: " + inst, bad)
        }
        XCTAssertEqual(configError(minimalBeacon + "[eddystone]\nnamespace = 1\ninstance = \"0123456789ab\""),
                       "config.toml:7:13: expected a string for eddystone.namespace, found an integer")
    }

    func testEddystoneURL() {
        XCTAssertEqual(frames(minimalBeacon + "[eddystone]\nurl = 'https://www.example.com/'").last as? EddystoneURLFrame, FrameTests.url)
        XCTAssertEqual(frames(minimalBeacon + "[eddystone]\nurl = 'https://abcdefghijklmnopq'").last.map { hexString($0.advertisingData(.zero)) },
                       bytes("020106 0303aafe 1716aafe 10 ee 03 6162636465666768696a6b6c6d6e6f7071").hexText)
        XCTAssertEqual(configError(minimalBeacon + "[eddystone]\nurl = 'https://abcdefghijklmnopqr'"),
                       "config.toml:7:7: eddystone.url encodes to 18 bytes after its scheme; Eddystone-URL carries at most 17 (use a shorter URL)")
        XCTAssertEqual(configError(minimalBeacon + "[eddystone]\nurl = 'HTTPS://example.com'"),
                       "config.toml:7:7: eddystone.url must start with http:// or https:// (lowercase), like \"https://example.com\"")
        XCTAssertEqual(configError(minimalBeacon + "[eddystone]\nurl = 'https://a b'"),
                       "config.toml:7:7: eddystone.url has a character Eddystone cannot send at byte 10 (only printable ASCII, no spaces)")
        XCTAssertEqual(configError(minimalBeacon + "[eddystone]\nurl = 'https://\u{e9}'"),
                       "config.toml:7:7: eddystone.url has a character Eddystone cannot send at byte 9 (only printable ASCII, no spaces)")
    }

    func testEddystoneWithNoFrameIsRefused() {
        let message = "[eddystone] turns on no frame: set namespace and instance (UID), url (URL) or tlm = true (TLM)"
        XCTAssertTrue(configError(minimalBeacon + "[eddystone]\n").hasSuffix(message), configError(minimalBeacon + "[eddystone]\n"))
        XCTAssertTrue(configError(minimalBeacon + "[eddystone]\npower_0m = 0").hasSuffix(message))
        XCTAssertEqual(configError(minimalBeacon + "[eddystone]\ntlm = false"), "config.toml:6:1: " + message)
        XCTAssertEqual(frames(minimalBeacon + "[eddystone]\ntlm = true").map(\.name), ["altbeacon", "eddystone-tlm"])
        XCTAssertEqual(configError(minimalBeacon + "[eddystone]\ntlm = 1"),
                       "config.toml:7:7: expected a boolean (true or false) for eddystone.tlm, found an integer")
    }

    func testAltBeaconOff() {
        XCTAssertEqual(configError(minimalBeacon + "altbeacon = false"),
                       "config.toml:6:13: beacon.altbeacon = false needs another frame: add an [ibeacon], [overflow] or [eddystone] table")
        XCTAssertEqual(frames(minimalBeacon + "altbeacon = false\n[ibeacon]\n").map(\.name), ["ibeacon"])
        XCTAssertEqual(frames(minimalBeacon + "altbeacon = false\n[eddystone]\ntlm = true").map(\.name), ["eddystone-tlm"])
        XCTAssertEqual(frames(minimalBeacon + "altbeacon = true").map(\.name), ["altbeacon"])
        XCTAssertEqual(configError(minimalBeacon + "altbeacon = 0"),
                       "config.toml:6:13: expected a boolean (true or false) for beacon.altbeacon, found an integer")
    }

    func testPower0m() {
        func power(_ text: String, file: StaticString = #filePath, line: UInt = #line) -> Int8? {
            (frames(text + "[eddystone]\ntlm = true\nurl = 'http://a'", file: file, line: line).first { $0 is EddystoneURLFrame } as? EddystoneURLFrame)?.power0m
        }
        // beacon.power + 41: the usual 41 dB between 1 m and 0 m.
        XCTAssertEqual(power(minimalBeacon), -18)
        XCTAssertEqual(power(minimalBeacon + "power = -127\n"), -86)
        XCTAssertEqual(power(minimalBeacon + "power = -21\n"), 20)
        XCTAssertEqual(power(minimalBeacon + "power = -20\n"), 20)   // 21 clamped to 20
        XCTAssertEqual(power(minimalBeacon + "power = 0\n"), 20)     // 41 clamped to 20
        XCTAssertEqual(frames(minimalBeacon + "power = 0\n" + Self.eddystoneUID).compactMap { ($0 as? EddystoneUIDFrame)?.power0m }, [20])
        XCTAssertEqual((frames(minimalBeacon + "[eddystone]\nurl = 'http://a'\npower_0m = -100").last as? EddystoneURLFrame)?.power0m, -100)
        XCTAssertEqual((frames(minimalBeacon + "[eddystone]\nurl = 'http://a'\npower_0m = 20").last as? EddystoneURLFrame)?.power0m, 20)
        XCTAssertEqual(configError(minimalBeacon + "[eddystone]\npower_0m = 21\ntlm = true"),
                       "config.toml:7:12: eddystone.power_0m must be between -100 and 20, found 21")
        XCTAssertEqual(configError(minimalBeacon + "[eddystone]\npower_0m = -101\ntlm = true"),
                       "config.toml:7:12: eddystone.power_0m must be between -100 and 20, found -101")
    }

    func testRotationRange() {
        XCTAssertEqual(config(minimalBeacon + "[bluetooth]\nrotation_ms = 100")?.bluetooth.rotationMs, 100)
        XCTAssertEqual(config(minimalBeacon + "[bluetooth]\nrotation_ms = 10_000")?.bluetooth.rotationMs, 10000)
        XCTAssertEqual(configError(minimalBeacon + "[bluetooth]\nrotation_ms = 99"),
                       "config.toml:7:15: bluetooth.rotation_ms must be between 100 and 10000, found 99")
        XCTAssertEqual(configError(minimalBeacon + "[bluetooth]\nrotation_ms = 10001"),
                       "config.toml:7:15: bluetooth.rotation_ms must be between 100 and 10000, found 10001")
    }

    func testUnknownKeysSuggest() {
        XCTAssertEqual(configError(minimalBeacon + "[eddystone]\nnamspace = \"edd1ebeac04e5defa017\"\ninstance = \"0123456789ab\""),
                       "config.toml:7:1: unknown key `eddystone.namspace`; did you mean `eddystone.namespace`?")
        XCTAssertEqual(configError(minimalBeacon + "[eddystone]\nurll = 'https://a'"),
                       "config.toml:7:1: unknown key `eddystone.urll`; did you mean `eddystone.url`?")
        XCTAssertEqual(configError(minimalBeacon + "[eddystone]\ntlm = true\npower0m = 0"),
                       "config.toml:8:1: unknown key `eddystone.power0m`; did you mean `eddystone.power_0m`?")
        XCTAssertEqual(configError(minimalBeacon + "[ibeacon]\nmajr = 1"),
                       "config.toml:7:1: unknown key `ibeacon.majr`; did you mean `ibeacon.major`?")
        XCTAssertEqual(configError(minimalBeacon + "[edystone]\ntlm = true"),
                       "config.toml:6:2: unknown table [edystone]; did you mean [eddystone]?")
        XCTAssertEqual(configError(minimalBeacon + "[eddystone]\ntlm = true\nfoo = 1"),
                       "config.toml:8:1: unknown key `eddystone.foo`; [eddystone] takes enabled, namespace, instance, power_0m, url, tlm")
        XCTAssertEqual(configError(minimalBeacon + "[beacon.x]\n").contains("altbeacon"), true)
    }

    /// The typo is the real mistake, not the frame it fails to turn on.
    func testTyposComeBeforeWhatTheyLeaveOut() {
        func all(_ text: String) -> [String] {
            guard case .failure(let e) = ConfigFile.parseAll(Array(text.utf8), path: "c.toml") else { XCTFail("accepted"); return [] }
            return e.all.map(\.headline)
        }
        XCTAssertEqual(all(minimalBeacon + "[eddystone]\nnamespace = \"edd1ebeac04e5defa017\"\ninstanc = \"0123456789ab\""),
                       ["c.toml:8:1: unknown key `eddystone.instanc`; did you mean `eddystone.instance`?"])
        XCTAssertEqual(all(minimalBeacon + "[eddystone]\nnamepsace = \"edd1ebeac04e5defa017\"\ninstance = \"0123456789ab\""),
                       ["c.toml:7:1: unknown key `eddystone.namepsace`; did you mean `eddystone.namespace`?"])
        XCTAssertEqual(all(minimalBeacon + "[eddystone]\nurll = 'https://a'"), [
            "c.toml:7:1: unknown key `eddystone.urll`; did you mean `eddystone.url`?",
            "c.toml:6:1: [eddystone] turns on no frame: set namespace and instance (UID), url (URL) or tlm = true (TLM)",
        ])
        XCTAssertEqual(all(minimalBeacon + "altbeacon = false\n[ibecon]\n"), [
            "c.toml:7:2: unknown table [ibecon]; did you mean [ibeacon]?",
            "c.toml:6:13: beacon.altbeacon = false needs another frame: add an [ibeacon], [overflow] or [eddystone] table",
        ])
    }
}
