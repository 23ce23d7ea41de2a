import XCTest
@testable import BeaconKit

/// `[beacon] name` (SPEC §12: what BlueZ shows as the beacon's Device1.Name): the key, the scan
/// response it makes, and the HCI commands that send it, against bytes worked out from the Core
/// specification (Vol 4 Part E 7.8.5 Advertising_Type 0x02, 7.8.8, 7.8.53 properties 0x0012, 7.8.55;
/// Supplement to the CSS Part A 1.2 Local Name: 0x08 shortened, 0x09 complete).
final class BeaconNameTests: XCTestCase {
    // MARK: HCI golden bytes

    func testScannableLegacyParametersUseADVSCANIND() {
        XCTAssertEqual(LESetAdvertisingParameters(intervalMs: 100, pdu: .scannable).packet,
                       [0x01, 0x06, 0x20, 0x0f, 0xa0, 0x00, 0xa0, 0x00, 0x02, 0x00, 0, 0, 0, 0, 0, 0, 0, 0x07, 0x00])
        XCTAssertEqual(LESetAdvertisingParameters(intervalMs: 100, pdu: .nonConnectable).parameters,
                       AdvertiserProcedureTests.studyGuideParameters)
    }

    func testScannableExtendedParametersAreLegacyADVSCANIND() {
        let p = LESetExtendedAdvertisingParameters(handle: 2, intervalMs: 100, txPowerDbm: nil, pdu: .scannable).parameters
        XCTAssertEqual(Array(p[0..<3]), [0x02, 0x12, 0x00], "handle 2, properties scannable|legacy")
        XCTAssertEqual(p.count, 25)
    }

    func testNameScanResponseCommands() {
        let r = BeaconName.scanResponse("pi4")
        XCTAssertEqual(r, [0x04, 0x09, 0x70, 0x69, 0x34])
        XCTAssertEqual(LESetScanResponseData(data: r).packet,
                       [0x01, 0x09, 0x20, 0x20, 0x05, 0x04, 0x09, 0x70, 0x69, 0x34] + [UInt8](repeating: 0, count: 26))
        XCTAssertEqual(LESetExtendedScanResponseData(handle: 3, data: r).packet,
                       [0x01, 0x38, 0x20, 0x09, 0x03, 0x03, 0x01, 0x05, 0x04, 0x09, 0x70, 0x69, 0x34])
    }

    // MARK: the name's AD

    func testLongHostnameIsCutOnACharacterBoundaryAndSentShortened() {
        let exact = String(repeating: "a", count: 29)
        XCTAssertEqual(BeaconName.scanResponse(exact), [30, 0x09] + Array(exact.utf8))
        XCTAssertEqual(BeaconName.scanResponse(exact + "b"), [30, 0x08] + Array(exact.utf8))
        // 28 ASCII bytes, then a 2-byte é that would end at byte 30: cut before it.
        let r = BeaconName.scanResponse(String(repeating: "a", count: 28) + "\u{e9}")
        XCTAssertEqual(r, [29, 0x08] + Array(String(repeating: "a", count: 28).utf8))
        XCTAssertEqual(BeaconName.scanResponse(""), [])
        XCTAssertEqual(BeaconName.scanResponse("a\u{7}b"), [0x03, 0x09, 0x61, 0x62], "a hostname's control characters are dropped")
    }

    // MARK: the config key

    func testNameKeyAndItsDefault() throws {
        let named = try XCTUnwrap(config(minimalBeacon + "name = 'Hall \u{e9}'"))
        XCTAssertEqual(named.name, "Hall \u{e9}")
        XCTAssertEqual(named.nameResponse, [0x08, 0x09] + Array("Hall \u{e9}".utf8))
        var unset = try XCTUnwrap(config(minimalBeacon))
        XCTAssertNil(unset.name)
        XCTAssertEqual(unset.nameResponse, [], "no hostname resolved: no name")
        unset.hostName = "beacon-hall"
        XCTAssertEqual(unset.nameResponse, [0x0c, 0x09] + Array("beacon-hall".utf8))
        var none = try XCTUnwrap(config(minimalBeacon + "name = ''"))
        none.hostName = "beacon-hall"
        XCTAssertEqual(none.name, "")
        XCTAssertEqual(none.nameResponse, [], "\"\": no name, whatever the hostname")
    }

    func testBadNamesAreRefusedWithTheirPosition() {
        XCTAssertEqual(configError(minimalBeacon + "name = '\(String(repeating: "x", count: 30))'"),
                       "config.toml:6:8: beacon.name must be at most 29 bytes of UTF-8 (what the scan response has room for), or \"\" for none, found 30")
        XCTAssertEqual(configError(minimalBeacon + "name = '\(String(repeating: "\u{e9}", count: 15))'"),
                       "config.toml:6:8: beacon.name must be at most 29 bytes of UTF-8 (what the scan response has room for), or \"\" for none, found 30")
        XCTAssertEqual(configError(minimalBeacon + "name = \"a\\tb\""), "config.toml:6:8: beacon.name must not hold control characters")
        XCTAssertEqual(configError(minimalBeacon + "name = \"a\\u0085\""), "config.toml:6:8: beacon.name must not hold control characters")
        XCTAssertEqual(configError(minimalBeacon + "name = 4"), "config.toml:6:8: expected a string for beacon.name, found an integer")
        XCTAssertEqual(configError(minimalBeacon + "nam = 'x'"), "config.toml:6:1: unknown key `beacon.nam`; did you mean `beacon.name`?")
    }

    func testANameMakesEveryNonConnectableFrameScannableTheGATTIdentityKeepsItsOwn() throws {
        let c = try XCTUnwrap(config(minimalBeacon + "name = 'hall'\n[ibeacon]\n[gatt_identity]\n"))
        let frames = c.airFrames()
        XCTAssertEqual(frames.map(\.pdu), [.scannable, .scannable, .connectable])
        XCTAssertEqual(frames[0].scanResponse, [0x05, 0x09] + Array("hall".utf8))
        XCTAssertEqual(frames[1].scanResponse, [0x05, 0x09] + Array("hall".utf8))
        XCTAssertEqual(frames[2].scanResponse, [0x0a, 0x09] + Array("AltBeacon".utf8), "SPEC §3: the iOS library's scan response")
        let bare = try XCTUnwrap(config(minimalBeacon + "[ibeacon]\n"))
        XCTAssertEqual(bare.airFrames().map(\.pdu), [.nonConnectable, .nonConnectable])
        XCTAssertEqual(bare.airFrames().map(\.scanResponse), [[], []])
    }

    func testAnEditOfTheNameRedoesParametersOnlyWhenThePDUChanges() throws {
        var a = try XCTUnwrap(config(minimalBeacon + "name = 'a'")), b = try XCTUnwrap(config(minimalBeacon + "name = 'b'"))
        let none = try XCTUnwrap(config(minimalBeacon + "name = ''"))
        XCTAssertEqual(ArmScope.needed(from: a, to: b), .data)
        XCTAssertEqual(ArmScope.needed(from: none, to: a), .parameters)
        XCTAssertEqual(ArmScope.needed(from: a, to: none), .parameters)
        XCTAssertNil(ArmScope.needed(from: a, to: a))
        // A hostname that changed between reloads is a new name.
        a.name = nil; b.name = nil
        a.hostName = "one"; b.hostName = "two"
        XCTAssertEqual(ArmScope.needed(from: a, to: b), .data)
    }

    // MARK: check

    func testCheckPrintsEachFramesTypeAndScanResponse() throws {
        var c = try XCTUnwrap(config(minimalBeacon + "[ibeacon]\n[gatt_identity]\n"))
        c.hostName = "pi4"
        let out = CheckReport.render(c, path: "/c.toml").split(separator: "\n").map(String.init)
        XCTAssertTrue(out.contains("  name:             pi4 (the hostname); in the scan response of every non-connectable frame (ADV_SCAN_IND)"), "\(out)")
        XCTAssertEqual(out.filter { $0.hasPrefix("advertising-type") || $0.hasPrefix("scan-response") }, [
            "advertising-type[altbeacon]: ADV_SCAN_IND", "scan-response[altbeacon]: 0409706934",
            "advertising-type[ibeacon]: ADV_SCAN_IND", "scan-response[ibeacon]: 0409706934",
            "advertising-type[gatt-identity]: ADV_IND", "scan-response[gatt-identity]: 0a09416c74426561636f6e",
        ])
        XCTAssertTrue(out.contains("  hcitool -i hci0 cmd 0x08 0x0009 05 04 09 70 69 34" + String(repeating: " 00", count: 26)), "\(out)")
        XCTAssertTrue(out.contains("  hcitool -i hci0 cmd 0x08 0x0006 a0 00 a0 00 02 00 00 00 00 00 00 00 00 07 00"), "\(out)")

        let none = try XCTUnwrap(config(minimalBeacon + "name = ''"))
        let plain = CheckReport.render(none, path: "/c.toml").split(separator: "\n").map(String.init)
        XCTAssertEqual(plain.filter { $0.hasPrefix("advertising-type") || $0.hasPrefix("scan-response") },
                       ["advertising-type[altbeacon]: ADV_NONCONN_IND", "scan-response[altbeacon]: none"])
        XCTAssertFalse(plain.contains { $0.contains("0x08 0x0009") }, "no scan response in the study guide's sequence")
        XCTAssertTrue(plain.contains("  hcitool -i hci0 cmd 0x08 0x0006 a0 00 a0 00 03 00 00 00 00 00 00 00 00 07 00"), "\(plain)")
    }
}
