import XCTest
@testable import BeaconKit

/// `[gatt_identity]` (SPEC §2, §3): the iOS "AltBeacon" library's identity. Its bytes against
/// vectors written out by hand from SPEC §3, its config keys, and `check`'s lines. Nothing of it
/// goes on air in this version.
final class GATTIdentityTests: XCTestCase {
    // 8C422626-0C6E-4B86-8EC7-9147B233D97E and A05F9DF4-9D54-4600-9224-983B75B9D154, byte for
    // byte reversed (little-endian, as AD structures and ATT carry 128-bit UUIDs).
    static let serviceLE = "7ed933b24791c78e864b6e0c2626428c"
    static let characteristicLE = "54d1b9753b9824920046549df49d5fa0"
    // Flags, then 0x11 bytes of Complete List of 128-bit Service UUIDs (type 07).
    static let advertisingHex = "020106 1107 7ed933b24791c78e864b6e0c2626428c"
    // 0x0a bytes of Complete Local Name (type 09): "AltBeacon".
    static let scanResponseHex = "0a09 416c74426561636f6e"

    func gatt(_ text: String, file: StaticString = #filePath, line: UInt = #line) -> GATTIdentity? {
        config(text, file: file, line: line)?.gattIdentity
    }

    func testGoldenBytes() {
        XCTAssertEqual(hexString(GATTIdentity.serviceUUID), Self.serviceLE)
        XCTAssertEqual(hexString(GATTIdentity.characteristicUUID), Self.characteristicLE)
        let g = GATTIdentity(identifier: "2F234454-CF6D-4A0F-ADF2-F4911BA9FFA6")
        XCTAssertEqual(hexString(g.advertisingData), bytes(Self.advertisingHex).hexText)
        XCTAssertEqual(g.advertisingData.count, 21)
        XCTAssertEqual(hexString(g.scanResponse), bytes(Self.scanResponseHex).hexText)
        // The identifier as UTF-8: "2F23..." is 32 46 32 33 ...
        XCTAssertEqual(hexString(g.identifierValue), "32463233343435342d434636442d344130462d414446322d463439313142413946464136")
        XCTAssertEqual(g.identifierValue.count, 36)
        XCTAssertEqual(hexString(g.nameValue), "416c74426561636f6e")
        // A one-byte name, a 29-byte name (the whole 31-byte scan response), UTF-8 counted in bytes.
        XCTAssertEqual(hexString(GATTIdentity(identifier: "x", name: "P").scanResponse), "020950")
        let longest = GATTIdentity(identifier: "x", name: "abcdefghijklmnopqrstuvwxyzABC")
        XCTAssertEqual(hexString(longest.scanResponse), "1e09" + "6162636465666768696a6b6c6d6e6f707172737475767778797a414243")
        XCTAssertEqual(longest.scanResponse.count, 31)
        XCTAssertEqual(hexString(GATTIdentity(identifier: "x", name: "Caf\u{e9}").scanResponse), "0609436166c3a9")
        // Never more than 31 bytes, whatever the name (the config refuses longer ones).
        XCTAssertEqual(GATTIdentity(identifier: "x", name: String(repeating: "n", count: 40)).scanResponse.count, 31)
        XCTAssertEqual(GATTIdentity.uuidString(onAir: GATTIdentity.serviceUUID), "8C422626-0C6E-4B86-8EC7-9147B233D97E")
        XCTAssertEqual(GATTIdentity.uuidString(onAir: GATTIdentity.characteristicUUID), "A05F9DF4-9D54-4600-9224-983B75B9D154")
        XCTAssertEqual(GATTIdentity.defaultIdentifier(uuid: studyGuideUUID), "2F234454-CF6D-4A0F-ADF2-F4911BA9FFA6")
    }

    /// The ATT database serves the same service and characteristic the advertising names.
    func testSameUUIDsAsTheGATTDatabase() {
        XCTAssertEqual(GATTDatabase.identityServiceUUID.wire, GATTIdentity.serviceUUID)
        XCTAssertEqual(GATTDatabase.identifierCharacteristicUUID.wire, GATTIdentity.characteristicUUID)
    }

    func testIsAdvertised() {
        XCTAssertTrue(GATTIdentity.isAdvertised(in: bytes(Self.advertisingHex)[...]))
        // In an Incomplete List (06), second of two, inside a slice not starting at 0.
        let two = bytes("00 020106 2106 00112233445566778899aabbccddeeff 7ed933b24791c78e864b6e0c2626428c")
        XCTAssertTrue(GATTIdentity.isAdvertised(in: two[1...]))
        // Another UUID, a 16-bit list, a service data AD, a beacon frame: no.
        XCTAssertFalse(GATTIdentity.isAdvertised(in: bytes("020106 1107 7ed933b24791c78e864b6e0c2626428d")[...]))
        XCTAssertFalse(GATTIdentity.isAdvertised(in: bytes("020106 1103 7ed933b24791c78e864b6e0c2626428c")[...]))
        XCTAssertFalse(GATTIdentity.isAdvertised(in: bytes(FrameTests.altbeaconHex)[...]))
        // Every cut: no trap, and only the whole payload says yes.
        let whole = bytes(Self.advertisingHex)
        for cut in 0..<whole.count { XCTAssertFalse(GATTIdentity.isAdvertised(in: whole[..<cut]), "\(cut)") }
        // A list with a stray byte after a whole UUID still finds it; a UUID split across the end does not.
        XCTAssertTrue(GATTIdentity.isAdvertised(in: bytes("1207 7ed933b24791c78e864b6e0c2626428c 00")[...]))
        var g = XorShift64(seed: 0x8c42_2626)
        for _ in 0..<3000 {
            let n = Int.random(in: 0...40, using: &g)
            _ = GATTIdentity.isAdvertised(in: (0..<n).map { _ in UInt8.random(in: 0...255, using: &g) }[...])
        }
    }

    func testConfigDefaults() throws {
        let c = try XCTUnwrap(config(minimalBeacon + "[gatt_identity]\n"))
        XCTAssertEqual(c.gattIdentity, GATTIdentity(identifier: "2F234454-CF6D-4A0F-ADF2-F4911BA9FFA6", name: "AltBeacon"))
        // Not a frame: the frame list (what the advertiser puts on air) is unchanged.
        XCTAssertEqual(c.frames.map(\.name), ["altbeacon"])
        XCTAssertNil(try XCTUnwrap(config(minimalBeacon)).gattIdentity)
        // The default follows [beacon].uuid, however it is written; not [ibeacon]'s.
        XCTAssertEqual(gatt("[beacon]\nuuid = 'ffffffff00000000abcdef0000000001'\nmajor = 1\nminor = 2\n[ibeacon]\nuuid = '2f234454cf6d4a0fadf2f4911ba9ffa6'\n[gatt_identity]\n")?.identifier,
                       "FFFFFFFF-0000-0000-ABCD-EF0000000001")
    }

    func testConfigValues() {
        XCTAssertEqual(gatt(minimalBeacon + "[gatt_identity]\nidentifier = 'lobby-1'\nname = 'Lobby'\n"),
                       GATTIdentity(identifier: "lobby-1", name: "Lobby"))
        // As written: case and spaces kept (the library compares strings).
        XCTAssertEqual(gatt(minimalBeacon + "[gatt_identity]\nidentifier = 'Room 4 ~ \"B\"'\n")?.identifier, "Room 4 ~ \"B\"")
        XCTAssertEqual(gatt(minimalBeacon + "[gatt_identity]\nname = 'Caf\u{e9} \u{1F600}'\n")?.name, "Caf\u{e9} \u{1F600}")
        let max = String(repeating: "I", count: 64)
        XCTAssertEqual(gatt(minimalBeacon + "[gatt_identity]\nidentifier = '\(max)'\n")?.identifier, max)
        XCTAssertEqual(gatt(minimalBeacon + "[gatt_identity]\nidentifier = '!'\nname = 'abcdefghijklmnopqrstuvwxyzABC'\n")?.name.utf8.count, 29)
        // The config's [gatt_identity] does not change what [beacon.altbeacon] needs.
        XCTAssertEqual(configError(minimalBeacon + "altbeacon = false\n[gatt_identity]\n"),
                       "config.toml:6:13: beacon.altbeacon = false needs another frame: add an [ibeacon], [overflow] or [eddystone] table")
    }

    func testConfigRefusals() {
        let ascii = "gatt_identity.identifier must be printable ASCII (letters, digits, punctuation, spaces)"
        XCTAssertEqual(configError(minimalBeacon + "[gatt_identity]\nidentifier = ''"),
                       "config.toml:7:14: gatt_identity.identifier must be 1 to 64 characters, found 0")
        XCTAssertEqual(configError(minimalBeacon + "[gatt_identity]\nidentifier = '\(String(repeating: "x", count: 65))'"),
                       "config.toml:7:14: gatt_identity.identifier must be 1 to 64 characters, found 65")
        XCTAssertEqual(configError(minimalBeacon + "[gatt_identity]\nidentifier = 'caf\u{e9}'"),
                       "config.toml:7:14: \(ascii): character 4 is not")
        XCTAssertEqual(configError(minimalBeacon + "[gatt_identity]\nidentifier = \"\u{e9}\u{e9}a\\t\""),
                       "config.toml:7:14: \(ascii): character 1 is not")
        XCTAssertEqual(configError(minimalBeacon + "[gatt_identity]\nidentifier = \"ab\\u007f\""),
                       "config.toml:7:14: \(ascii): character 3 is not")
        XCTAssertEqual(configError(minimalBeacon + "[gatt_identity]\nidentifier = \"a\\tb\""),
                       "config.toml:7:14: \(ascii): character 2 is not")
        XCTAssertEqual(configError(minimalBeacon + "[gatt_identity]\nidentifier = 1"),
                       "config.toml:7:14: expected a string for gatt_identity.identifier, found an integer")
        XCTAssertEqual(configError(minimalBeacon + "[gatt_identity]\nname = ''"),
                       "config.toml:7:8: gatt_identity.name must be 1 to 29 bytes of UTF-8 (what the scan response has room for), found 0")
        XCTAssertEqual(configError(minimalBeacon + "[gatt_identity]\nname = 'abcdefghijklmnopqrstuvwxyzABCD'"),
                       "config.toml:7:8: gatt_identity.name must be 1 to 29 bytes of UTF-8 (what the scan response has room for), found 30")
        // 15 two-byte characters: 30 bytes.
        XCTAssertEqual(configError(minimalBeacon + "[gatt_identity]\nname = '\(String(repeating: "\u{e9}", count: 15))'"),
                       "config.toml:7:8: gatt_identity.name must be 1 to 29 bytes of UTF-8 (what the scan response has room for), found 30")
        XCTAssertEqual(configError(minimalBeacon + "[gatt_identity]\nname = \"a\\nb\""),
                       "config.toml:7:8: gatt_identity.name must not hold control characters")
        XCTAssertEqual(configError(minimalBeacon + "[gatt_identity]\nname = \"a\\u0085\""),
                       "config.toml:7:8: gatt_identity.name must not hold control characters")
        XCTAssertEqual(configError(minimalBeacon + "[gatt_identity]\nname = true"),
                       "config.toml:7:8: expected a string for gatt_identity.name, found a boolean")
        XCTAssertEqual(configError(minimalBeacon + "[gatt_identity]\nidentifer = 'x'"),
                       "config.toml:7:1: unknown key `gatt_identity.identifer`; did you mean `gatt_identity.identifier`?")
        XCTAssertEqual(configError(minimalBeacon + "[gatt_identity]\nnam = 'x'"),
                       "config.toml:7:1: unknown key `gatt_identity.nam`; did you mean `gatt_identity.name`?")
        XCTAssertEqual(configError(minimalBeacon + "[gatt_identity]\nuuid = 'x'"),
                       "config.toml:7:1: unknown key `gatt_identity.uuid`: uuid belongs in [beacon], not in [gatt_identity]")
        XCTAssertEqual(configError(minimalBeacon + "[gatt-identity]\n"),
                       "config.toml:6:2: unknown table [gatt-identity]; did you mean [gatt_identity]?")
        XCTAssertEqual(configError(minimalBeacon + "[gatt_identty]\n"),
                       "config.toml:6:2: unknown table [gatt_identty]; did you mean [gatt_identity]?")
        // Both refused: both reported (check lists them all).
        guard case .failure(let e) = ConfigFile.parseAll(Array((minimalBeacon + "[gatt_identity]\nidentifier = ''\nname = ''\n").utf8), path: "c") else {
            return XCTFail("accepted")
        }
        XCTAssertEqual(e.all.map(\.line), [7, 8])
    }

    func testCheckLines() throws {
        let c = try XCTUnwrap(config(minimalBeacon + "[gatt_identity]\nname = 'Lobby'\n"))
        let out = CheckReport.render(c, path: "/c.toml").split(separator: "\n").map(String.init)
        XCTAssertEqual(out.filter { $0.hasPrefix("advertising-data") || $0.hasPrefix("scan-response") }, [
            "advertising-data: 0201061bff1801beac2f234454cf6d4a0fadf2f4911ba9ffa600010002c500",
            "advertising-data[altbeacon]: 0201061bff1801beac2f234454cf6d4a0fadf2f4911ba9ffa600010002c500",
            "advertising-data[gatt-identity]: 0201061107" + Self.serviceLE,
            "scan-response[altbeacon]: none",
            "scan-response[gatt-identity]: 0609" + "4c6f626279",
        ])
        // Plainly said: checked, not on air in this version; the frames on air are unchanged.
        XCTAssertTrue(out.contains("gatt-identity:      connectable (ADV_IND), one central at a time, each disconnected after 30 s"),
                      out.joined(separator: "\n"))
        XCTAssertTrue(out.contains("frames:             altbeacon"))
        XCTAssertTrue(out.contains("  service:          8C422626-0C6E-4B86-8EC7-9147B233D97E"))
        XCTAssertTrue(out.contains("  characteristic:   A05F9DF4-9D54-4600-9224-983B75B9D154 (read: the identifier)"))
        XCTAssertTrue(out.contains("  identifier:       2F234454-CF6D-4A0F-ADF2-F4911BA9FFA6"))
        XCTAssertTrue(out.contains("  name:             Lobby"))
        XCTAssertFalse(out.contains { $0.contains("# gatt-identity") })   // no hcitool line: it is not a frame
        // Without the table: no such lines.
        let plain = CheckReport.render(try XCTUnwrap(config(minimalBeacon)), path: "/c.toml")
        XCTAssertFalse(plain.contains("gatt-identity"))
    }
}
