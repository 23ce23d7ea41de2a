import XCTest
@testable import BeaconKit

/// Hex written by hand (either case; spaces for the reader) to bytes.
func attHex(_ hex: String) -> [UInt8] {
    var out: [UInt8] = []
    var high: UInt8? = nil
    for c in hex.utf8 where c != UInt8(ascii: " ") {
        let n: UInt8
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): n = c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): n = c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): n = c - UInt8(ascii: "A") + 10
        default: preconditionFailure("not hex: \(hex)")
        }
        if let h = high { out.append(h << 4 | n); high = nil } else { high = n }
    }
    precondition(high == nil, "odd hex: \(hex)")
    return out
}

/// The rig's identity: name "AltBeacon", identifier the SPEC's beacon UUID, uppercase, hyphenated.
let attRigIdentifier = "2F234454-CF6D-4A0F-ADF2-F4911BA9FFA6"
/// The same 36 octets, from the ASCII table by hand.
let attRigIdentifierHex = "32 46 32 33 34 34 35 34 2d 43 46 36 44 2d 34 41 30 46 2d 41 44 46 32 2d 46 34 39 31 31 42 41 39 46 46 41 36"
/// The service UUID 8C422626-0C6E-4B86-8EC7-9147B233D97E on air (little-endian).
let attServiceHex = "7e d9 33 b2 47 91 c7 8e 86 4b 6e 0c 26 26 42 8c"
/// The characteristic UUID A05F9DF4-9D54-4600-9224-983B75B9D154 on air (little-endian).
let attCharacteristicHex = "54 d1 b9 75 3b 98 24 92 00 46 54 9d f4 9d 5f a0"

func attRigServer(identifier: String = attRigIdentifier, serverRxMTU: Int = 517) -> ATTServer {
    ATTServer(database: GATTDatabase(name: Array("AltBeacon".utf8), identifier: Array(identifier.utf8)),
              serverRxMTU: serverRxMTU)
}

extension ATTServer {
    /// Sends one PDU written in hex; the response in hex ("nil" for none).
    mutating func ask(_ hex: String) -> String {
        guard let r = handle(attHex(hex)) else { return "nil" }
        return hexString(r)
    }
}

/// Compares hex strings without spaces or case.
func XCTAssertHex(_ got: String, _ want: String, file: StaticString = #filePath, line: UInt = #line) {
    XCTAssertEqual(got, want == "nil" ? want : hexString(attHex(want)), file: file, line: line)
}

/// The ATT server on golden PDUs written by hand from Core Vol 3 Part F and G: the database's
/// layout, the iOS library's discovery, long values.
final class ATTServerTests: XCTestCase {
    func testUUIDs() {
        XCTAssertEqual(GATTDatabase.identityServiceUUID.wire, attHex(attServiceHex))
        XCTAssertEqual(GATTDatabase.identifierCharacteristicUUID.wire, attHex(attCharacteristicHex))
        XCTAssertEqual(GATTDatabase.identityServiceUUID.description, "8C422626-0C6E-4B86-8EC7-9147B233D97E")
        XCTAssertEqual(GATTType.primaryService.wire, [0x00, 0x28])
        XCTAssertEqual(GATTType.primaryService.description, "2800")
        let long2800 = GATTUUID(wire: attHex("fb 34 9b 5f 80 00 00 80 00 10 00 00 00 28 00 00"))
        XCTAssertEqual(long2800, GATTType.primaryService)
        XCTAssertEqual(long2800?.uuid16, 0x2800)
        XCTAssertNil(GATTDatabase.identityServiceUUID.uuid16)
        XCTAssertEqual(GATTUUID("00002800-0000-1000-8000-00805f9b34fb"), GATTType.primaryService)
        XCTAssertNotEqual(GATTUUID(0x2801), GATTType.primaryService)
        XCTAssertNil(GATTUUID("8C422626-0C6E-4B86-8EC7-9147B233D97"))
        XCTAssertNil(GATTUUID("XX"))
        XCTAssertNil(GATTUUID(wire: [0x00, 0x28, 0x00]))
    }

    func testDatabaseLayout() {
        let db = GATTDatabase(name: Array("AltBeacon".utf8), identifier: Array(attRigIdentifier.utf8))
        let want: [(UInt16, String, String, UInt16)] = [
            (1, "0028", "0018", 5),
            (2, "0328", "02 0300 002a", 3),
            (3, "002a", "41 6c 74 42 65 61 63 6f 6e", 3),
            (4, "0328", "02 0500 012a", 5),
            (5, "012a", "0000", 5),
            (6, "0028", "0118", 6),
            (7, "0028", attServiceHex, 9),
            (8, "0328", "02 0900" + attCharacteristicHex, 9),
            (9, attCharacteristicHex, attRigIdentifierHex, 9),
        ]
        XCTAssertEqual(db.attributes.count, want.count)
        for (a, w) in zip(db.attributes, want) {
            XCTAssertEqual(a.handle, w.0)
            XCTAssertEqual(a.type.wire, attHex(w.1), "handle \(a.handle)")
            XCTAssertEqual(a.value, attHex(w.2), "handle \(a.handle)")
            XCTAssertEqual(a.groupEnd, w.3, "handle \(a.handle)")
            XCTAssertTrue(a.readable)
        }
        XCTAssertEqual(db.lastHandle, 9)
        XCTAssertEqual(db.identifierValueHandle, 9)
        XCTAssertNil(db.attribute(0))
        XCTAssertNil(db.attribute(10))
        XCTAssertEqual(GATTDatabase(name: [UInt8](repeating: 0x41, count: 300), identifier: [0x31]).attribute(3)?.value.count, 248)
    }

    /// What the library's central does (SPEC §3): MTU, the service by UUID, its characteristics,
    /// the first one's value; each step as iOS's stack continues it until Attribute Not Found.
    func testTheIOSCentralsDiscovery() {
        var s = attRigServer()
        XCTAssertHex(s.ask("02 0f 02"), "03 05 02")      // iOS offers 527; the server 517
        XCTAssertEqual(s.mtu, 517)
        XCTAssertHex(s.ask("06 0100 ffff 0028" + attServiceHex), "07 0700 0900")
        XCTAssertHex(s.ask("06 0a00 ffff 0028" + attServiceHex), "01 06 0a00 0a")
        XCTAssertHex(s.ask("08 0700 0900 0328"), "09 15 0800 02 0900" + attCharacteristicHex)
        XCTAssertHex(s.ask("08 0900 0900 0328"), "01 08 0900 0a")
        XCTAssertHex(s.ask("04 0900 0900"), "05 02 0900" + attCharacteristicHex)
        XCTAssertHex(s.ask("0a 0900"), "0b" + attRigIdentifierHex)
    }

    /// The same without an MTU exchange (ATT_MTU 23): every response fits in 23 octets.
    func testDiscoveryAtTheDefaultMTU() {
        var s = attRigServer()
        XCTAssertEqual(s.mtu, 23)
        // Discover All Primary Services: the 16-bit ones, then the 128-bit one, then none.
        XCTAssertHex(s.ask("10 0100 ffff 0028"), "11 06 0100 0500 0018 0600 0600 0118")
        XCTAssertHex(s.ask("10 0700 ffff 0028"), "11 14 0700 0900" + attServiceHex)
        XCTAssertHex(s.ask("10 0a00 ffff 0028"), "01 10 0a00 0a")
        // The group type as a 128-bit UUID (the Base UUID form of 0x2800) is the same type.
        XCTAssertHex(s.ask("10 0100 ffff fb349b5f8000008000100000 0028 0000"),
                     "11 06 0100 0500 0018 0600 0600 0118")
        // Characteristics of GAP, then of the identity service (19 octets of value: exactly 23).
        XCTAssertHex(s.ask("08 0100 0500 0328"), "09 07 0200 02 0300 002a 0400 02 0500 012a")
        XCTAssertHex(s.ask("08 0100 ffff 0328"), "09 07 0200 02 0300 002a 0400 02 0500 012a")
        XCTAssertHex(s.ask("08 0700 0900 0328"), "09 15 0800 02 0900" + attCharacteristicHex)
        // Find Information: five 16-bit pairs fit (2 + 5 * 4 = 22), then three, then the 128-bit one.
        XCTAssertHex(s.ask("04 0100 ffff"), "05 01 0100 0028 0200 0328 0300 002a 0400 0328 0500 012a")
        XCTAssertHex(s.ask("04 0600 ffff"), "05 01 0600 0028 0700 0028 0800 0328")
        XCTAssertHex(s.ask("04 0900 ffff"), "05 02 0900" + attCharacteristicHex)
        XCTAssertHex(s.ask("04 0a00 ffff"), "01 04 0a00 0a")
        // Read: the first 22 octets; Read Blob from 22 (0x16): the other 14.
        XCTAssertHex(s.ask("0a 0900"), "0b 32 46 32 33 34 34 35 34 2d 43 46 36 44 2d 34 41 30 46 2d 41 44 46")
        XCTAssertHex(s.ask("0c 0900 1600"), "0d 32 2d 46 34 39 31 31 42 41 39 46 46 41 36")
        XCTAssertHex(s.ask("0c 0900 2400"), "0d")
        XCTAssertHex(s.ask("0c 0900 2500"), "01 0c 0900 07")
        // Read Using Characteristic UUID: the value cut to ATT_MTU - 4 = 19 octets.
        XCTAssertHex(s.ask("08 0100 ffff" + attCharacteristicHex),
                     "09 15 0900 32 46 32 33 34 34 35 34 2d 43 46 36 44 2d 34 41 30 46 2d")
        XCTAssertHex(s.ask("08 0100 ffff 002a"), "09 0b 0300 41 6c 74 42 65 61 63 6f 6e")
        XCTAssertHex(s.ask("08 0100 ffff 012a"), "09 04 0500 0000")
        XCTAssertHex(s.ask("08 0100 ffff 0028"), "09 04 0100 0018 0600 0118")
        XCTAssertHex(s.ask("0a 0300"), "0b 41 6c 74 42 65 61 63 6f 6e")
        XCTAssertHex(s.ask("0a 0500"), "0b 0000")
        XCTAssertHex(s.ask("0a 0100"), "0b 0018")
    }

    /// A 64-octet identifier (the config's longest) read with ATT_MTU 23: Read, then Read Blob.
    func testLongIdentifierWithReadBlob() {
        let sixteen = "30 31 32 33 34 35 36 37 38 39 41 42 43 44 45 46"   // "0123456789ABCDEF"
        var s = attRigServer(identifier: "0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF")
        XCTAssertHex(s.ask("0a 0900"), "0b" + sixteen + "30 31 32 33 34 35")
        XCTAssertHex(s.ask("0c 0900 1600"), "0d 36 37 38 39 41 42 43 44 45 46 30 31 32 33 34 35 36 37 38 39 41 42")
        XCTAssertHex(s.ask("0c 0900 2c00"), "0d 43 44 45 46" + sixteen)
        XCTAssertHex(s.ask("0c 0900 4000"), "0d")
        XCTAssertHex(s.ask("0c 0900 4100"), "01 0c 0900 07")
        XCTAssertHex(s.ask("0c 0900 ffff"), "01 0c 0900 07")
        XCTAssertHex(s.ask("0c 0900 0000"), "0d" + sixteen + "30 31 32 33 34 35")
        // After an exchange to 517 one Read has it all.
        XCTAssertHex(s.ask("02 0502"), "03 0502")
        XCTAssertHex(s.ask("0a 0900"), "0b" + sixteen + sixteen + sixteen + sixteen)
    }

    func testExchangeMTU() {
        var s = attRigServer()
        XCTAssertHex(s.ask("02 b900"), "03 0502")          // 185
        XCTAssertEqual(s.mtu, 185)
        XCTAssertTrue(s.mtuExchanged)
        XCTAssertHex(s.ask("02 1700"), "03 0502")          // once per connection: no change
        XCTAssertEqual(s.mtu, 185)

        var low = attRigServer()
        XCTAssertHex(low.ask("02 1000"), "03 0502")        // a client below 23: ATT_MTU stays 23
        XCTAssertEqual(low.mtu, 23)
        var small = attRigServer(serverRxMTU: 100)
        XCTAssertHex(small.ask("02 0f02"), "03 6400")
        XCTAssertEqual(small.mtu, 100)
        var tiny = attRigServer(serverRxMTU: 5)            // clamped to 23
        XCTAssertHex(tiny.ask("02 0f02"), "03 1700")
        XCTAssertEqual(tiny.mtu, 23)
        XCTAssertEqual(attRigServer(serverRxMTU: 70000).serverRxMTU, 517)
    }

    func testReadMultiple() {
        var s = attRigServer()
        XCTAssertHex(s.ask("0e 0300 0500"), "0f 41 6c 74 42 65 61 63 6f 6e 0000")
        XCTAssertHex(s.ask("0e 0900 0300"), "0f 32 46 32 33 34 34 35 34 2d 43 46 36 44 2d 34 41 30 46 2d 41 44 46")
        XCTAssertHex(s.ask("0e 0300 0a00"), "01 0e 0a00 01")
        XCTAssertHex(s.ask("0e 0000 0300"), "01 0e 0000 01")
        XCTAssertHex(s.ask("20 0300 0500"), "21 0900 41 6c 74 42 65 61 63 6f 6e 0200 0000")
        // 2 + 20 octets of the identifier fill 23; no room for the next tuple's length.
        XCTAssertHex(s.ask("20 0900 0300"), "21 2400 32 46 32 33 34 34 35 34 2d 43 46 36 44 2d 34 41 30 46 2d 41")
        XCTAssertHex(s.ask("20 0500 0900"), "21 0200 0000 2400 32 46 32 33 34 34 35 34 2d 43 46 36 44 2d 34 41")
        XCTAssertHex(s.ask("20 0500 ffff"), "01 20 ffff 01")
    }
}
