import XCTest
@testable import BeaconKit

/// `scan` and the GATT identity: devices advertising the service listed as `gatt-identity` (name
/// from the scan response, proximity as the iOS library ranges), `--read-identity`'s result lines.
final class ScanIdentityTests: XCTestCase {
    /// SPEC §3's advertising data and scan response, by hand.
    let advert = attHex("02 01 06 11 07" + attServiceHex)
    let response = attHex("0a 09 41 6c 74 42 65 61 63 6f 6e")   // "AltBeacon"

    func report(_ data: [UInt8], rssi: Int8 = -59, address: [UInt8] = [0x66, 0x55, 0x44, 0x33, 0x22, 0x11]) -> AdvertisingReport {
        AdvertisingReport(eventType: 0, addressType: 0, address: address, rssi: rssi, data: data)
    }

    /// Issue 32: a beacon that names its other frames too answers their scans with its own name;
    /// the identity's row keeps the name that answered the identity's advertisement.
    func testTheNameOfTheBeaconsOtherFramesIsNotTheIdentitys() throws {
        var names = LocalNames()
        var table = BeaconTable()
        let altbeacon = attHex("02 01 06 1b ff 18 01 be ac 2f 23 44 54 cf 6d 4a 0f ad f2 f4 91 1b a9 ff a6 00 01 00 02 c5 00")
        let hall = attHex("05 09 68 61 6c 6c")   // "hall"
        for data in [advert, response, altbeacon, hall, advert, altbeacon, hall] {
            for s in Sighting.listed(in: report(data), atMs: 0, names: &names, table: table) { _ = table.record(s) }
        }
        let row = try XCTUnwrap(table.identityRow(address: "11:22:33:44:55:66"))
        XCTAssertEqual((row.latest.frame as? HeardGATTIdentity)?.localName, Array("AltBeacon".utf8))
        XCTAssertEqual(names.identityName("11:22:33:44:55:66"), Array("AltBeacon".utf8))
        XCTAssertEqual(names["11:22:33:44:55:66"], Array("hall".utf8), "the last name heard from the address")
    }

    func testListedAsGATTIdentityWithoutAName() throws {
        var names = LocalNames()
        let listed = Sighting.listed(in: report(advert), atMs: 0, names: &names, table: BeaconTable())
        XCTAssertEqual(listed.count, 1)
        let s = try XCTUnwrap(listed.first)
        XCTAssertEqual(s.type, "gatt-identity")
        XCTAssertTrue(Sighting.all(in: report(advert), atMs: 0).isEmpty, "not a beacon frame")
        XCTAssertEqual(s.jsonLine, "{\"type\":\"gatt-identity\",\"rssi\":-59,\"name\":null,\"address\":\"11:22:33:44:55:66\",\"proximity\":\"immediate\"}")
        XCTAssertEqual(BeaconTable.line("new", s),
                       "new 11:22:33:44:55:66 rssi=-59 name=null distance_m=- proximity=immediate address=11:22:33:44:55:66 type=gatt-identity")
        var table = BeaconTable()
        XCTAssertEqual(table.record(s), .new)
        let row = table.render(now: 300, title: "t").split(separator: "\n")[2]
        XCTAssertEqual(String(row), "gatt-identity  11:22:33:44:55:66                         -      -   -59      -  -              -  immediate    0.3 s  name=null")
    }

    /// The name comes in the scan response, a report of its own: the listed row is named then.
    func testNameFromTheScanResponse() throws {
        var names = LocalNames()
        var table = BeaconTable()
        for s in Sighting.listed(in: report(advert), atMs: 0, names: &names, table: table) { XCTAssertEqual(table.record(s), .new) }
        let named = Sighting.listed(in: report(response, rssi: -60), atMs: 10, names: &names, table: table)
        XCTAssertEqual(named.count, 1)
        XCTAssertEqual(table.record(named[0]), .changed)
        XCTAssertTrue(named[0].jsonLine.contains("\"rssi\":-60,\"name\":\"AltBeacon\","), named[0].jsonLine)
        // The next advert carries the name it has heard; the same response again lists nothing.
        let again = Sighting.listed(in: report(advert), atMs: 20, names: &names, table: table)
        XCTAssertEqual((again[0].frame as? HeardGATTIdentity)?.localName, Array("AltBeacon".utf8))
        XCTAssertEqual(table.record(again[0]), .unchanged)
        XCTAssertTrue(Sighting.listed(in: report(response), atMs: 30, names: &names, table: table).isEmpty)
        // A response first, from a device not listed yet: nothing, but its advert is named.
        var n2 = LocalNames()
        XCTAssertTrue(Sighting.listed(in: report(response), atMs: 0, names: &n2, table: BeaconTable()).isEmpty)
        let first = Sighting.listed(in: report(advert), atMs: 1, names: &n2, table: BeaconTable())
        XCTAssertEqual(BeaconTable.line("new", first[0]).split(separator: " ")[3], "name=AltBeacon")
        // Another device's name is not this one's.
        let other = Sighting.listed(in: report(advert, address: [1, 2, 3, 4, 5, 6]), atMs: 2, names: &n2, table: BeaconTable())
        XCTAssertTrue(other[0].jsonLine.contains("\"name\":null"))
    }

    func testNameInTheAdvertItselfAndShortenedNames() {
        XCTAssertEqual(HeardGATTIdentity.decode((advert + attHex("04 09 41 42 43"))[...])?.localName, Array("ABC".utf8))
        XCTAssertEqual(HeardGATTIdentity.decode((advert + attHex("03 08 41 42"))[...])?.localName, Array("AB".utf8))
        XCTAssertEqual(HeardGATTIdentity.decode((advert + attHex("03 08 41 42 02 09 43"))[...])?.localName, Array("C".utf8))
        XCTAssertNil(HeardGATTIdentity.decode(response[...]))
        XCTAssertNil(HeardGATTIdentity.decode(Array(advert.dropLast())[...]), "a UUID list cut short is not the service")
        // 16-bit and 32-bit service lists, or the UUID as service data, are not it.
        XCTAssertNil(HeardGATTIdentity.decode(attHex("02 01 06 11 16" + attServiceHex)[...]))
        // An Incomplete List holding it, beside another UUID, is.
        XCTAssertNotNil(HeardGATTIdentity.decode(attHex("21 06" + attCharacteristicHex + attServiceHex)[...]))
    }

    /// Names from the air, shown safely: printable ASCII as is, other octets as \xNN in the table
    /// and plain lines (one key=value word), real UTF-8 in JSON.
    func testNamesAreEscaped() {
        let f = HeardGATTIdentity(localName: Array("Café \"x\"\\\n".utf8))
        let field = f.fields[0]
        XCTAssertEqual(field.text, "Caf\\xc3\\xa9\\x20\"x\"\\x5c\\x0a")
        XCTAssertEqual(jsonMember(field), "\"name\":\"Café \\\"x\\\"\\\\\\n\"")
        let invalid = HeardGATTIdentity(localName: [0x41, 0xff, 0xc3])
        XCTAssertEqual(invalid.fields[0].value, "A\\xff\\xc3")
        XCTAssertEqual(invalid.fields[0].text, "A\\xff\\xc3")
    }

    /// SPEC §3: immediate above -72 dBm, near above -90, else far.
    func testProximityAsTheLibraryRanges() {
        let want: [(Int8, Proximity)] = [(-40, .immediate), (-71, .immediate), (-72, .near), (-89, .near), (-90, .far),
                                         (-120, .far), (127, .unknown)]
        for (rssi, p) in want {
            var names = LocalNames()
            XCTAssertEqual(Sighting.listed(in: report(advert, rssi: rssi), atMs: 0, names: &names, table: BeaconTable())[0].proximity, p,
                           "\(rssi) dBm")
        }
    }

    func testLocalNamesStayBounded() {
        var names = LocalNames()
        for i in 0..<1000 {
            let address = [UInt8(i & 0xff), UInt8(i >> 8), 0, 0, 0, 0]
            _ = Sighting.listed(in: report(response, address: address), atMs: Int64(i), names: &names, table: BeaconTable())
            XCTAssertLessThanOrEqual(names.count, LocalNames.capacity)
        }
        // Old names go first: the newest are still there.
        XCTAssertEqual(names["00:00:00:00:03:E7"], Array("AltBeacon".utf8))
    }

    func testIdentityRowsSortAfterTheFrames() {
        var names = LocalNames()
        var table = BeaconTable()
        let tlm = attHex("0201060303aafe1116aafe20000bb8198000002710 00000e10")
        for s in Sighting.listed(in: report(advert), atMs: 0, names: &names, table: table) + Sighting.listed(in: report(tlm), atMs: 0, names: &names, table: table) {
            _ = table.record(s)
        }
        let types = table.rows.keys.sorted().map(\.type)
        XCTAssertEqual(types, ["eddystone-tlm", "gatt-identity"])
    }

    func testReadResultLines() {
        let ok = IdentityReadReport(address: "00:AA:01:00:00:00", name: Array("AltBeacon".utf8),
                                    outcome: .identifier(Array("altbeacond-test-identity".utf8)))
        XCTAssertEqual(ok.line, "identity 00:AA:01:00:00:00 \"altbeacond-test-identity\" name=AltBeacon")
        XCTAssertEqual(ok.jsonLine, "{\"type\":\"gatt-identity\",\"address\":\"00:AA:01:00:00:00\",\"identifier\":\"altbeacond-test-identity\",\"name\":\"AltBeacon\"}")
        let odd = IdentityReadReport(address: "A", name: nil, outcome: .identifier(Array("a \"b\"\\\u{7}é".utf8)))
        XCTAssertEqual(odd.line, "identity A \"a \\x22b\\x22\\x5c\\x07\\xc3\\xa9\" name=null")
        XCTAssertEqual(odd.jsonLine, "{\"type\":\"gatt-identity\",\"address\":\"A\",\"identifier\":\"a \\\"b\\\"\\\\\\u0007é\",\"name\":null}")
        let failed = IdentityReadReport(address: "00:AA:01:00:00:00", name: nil,
                                        outcome: .failed(IdentityReadFailure.serviceMissing.description))
        XCTAssertEqual(failed.line, "identity 00:AA:01:00:00:00 name=null failed: service missing: no primary service 8C422626-0C6E-4B86-8EC7-9147B233D97E")
        XCTAssertEqual(failed.jsonLine, "{\"type\":\"gatt-identity\",\"address\":\"00:AA:01:00:00:00\",\"error\":\"service missing: no primary service 8C422626-0C6E-4B86-8EC7-9147B233D97E\",\"name\":null}")
        XCTAssertEqual(IdentityReadReport(address: "A", name: nil, outcome: .failed("x\ny")).line, "identity A name=null failed: x\\x0ay")
    }

    func testReadIdentityOption() {
        XCTAssertEqual(try Arguments.parse(["scan", "--read-identity", "--json", "-a", "hci1"]).get(),
                       .scan(adapter: "hci1", timeoutSeconds: nil, json: true, readIdentity: true))
        XCTAssertEqual(try Arguments.parse(["scan", "--json"]).get(), .scan(adapter: "hci0", timeoutSeconds: nil, json: true, readIdentity: false))
        XCTAssertTrue(Arguments.usage.contains("[--read-identity]"))
        XCTAssertTrue(Arguments.usage.contains("      --read-identity  "))
        if case .failure(let e) = Arguments.parse(["scan", "--read-identity=yes"]) {
            XCTAssertEqual(e.message, "unknown option '--read-identity=yes' for 'scan'")
        } else {
            XCTFail("--read-identity takes no value")
        }
    }
}
