import XCTest
@testable import BeaconKit

/// Every Error Response the ATT server sends (Core Vol 3 Part F 3.4.1.1), PDUs of every length for
/// every opcode, writes that change nothing, and a seeded mutation run.
final class ATTServerErrorTests: XCTestCase {
    func testInvalidHandle() {
        var s = attRigServer()
        // Ranged requests: a start of 0x0000, or after the end; the handle in error is the start.
        XCTAssertHex(s.ask("04 0000 ffff"), "01 04 0000 01")
        XCTAssertHex(s.ask("04 0500 0400"), "01 04 0500 01")
        XCTAssertHex(s.ask("06 0000 ffff 0028 0018"), "01 06 0000 01")
        XCTAssertHex(s.ask("06 0900 0800 0028 0018"), "01 06 0900 01")
        XCTAssertHex(s.ask("08 0000 ffff 0328"), "01 08 0000 01")
        XCTAssertHex(s.ask("08 ffff 0100 0328"), "01 08 ffff 01")
        XCTAssertHex(s.ask("10 0000 ffff 0028"), "01 10 0000 01")
        XCTAssertHex(s.ask("10 0200 0100 0028"), "01 10 0200 01")
        XCTAssertHex(s.ask("10 0000 ffff 0328"), "01 10 0000 01")  // the range is checked first
        // By handle: 0x0000 or past the last (0x0009).
        XCTAssertHex(s.ask("0a 0000"), "01 0a 0000 01")
        XCTAssertHex(s.ask("0a 0a00"), "01 0a 0a00 01")
        XCTAssertHex(s.ask("0a ffff"), "01 0a ffff 01")
        XCTAssertHex(s.ask("0c 0000 0000"), "01 0c 0000 01")
        XCTAssertHex(s.ask("0c 0a00 0000"), "01 0c 0a00 01")
        XCTAssertHex(s.ask("12 0000 41"), "01 12 0000 01")
        XCTAssertHex(s.ask("12 0a00"), "01 12 0a00 01")
        XCTAssertHex(s.ask("16 0a00 0000 41"), "01 16 0a00 01")
    }

    func testAttributeNotFound() {
        var s = attRigServer()
        XCTAssertHex(s.ask("04 0a00 ffff"), "01 04 0a00 0a")
        XCTAssertHex(s.ask("04 ffff ffff"), "01 04 ffff 0a")
        XCTAssertHex(s.ask("06 0100 ffff 0028 0218"), "01 06 0100 0a")           // no 0x1802 service
        XCTAssertHex(s.ask("06 0100 0600 0028" + attServiceHex), "01 06 0100 0a")  // not in range
        XCTAssertHex(s.ask("06 0100 ffff 0128 0018"), "01 06 0100 0a")           // not secondary
        XCTAssertHex(s.ask("08 0100 ffff 052a"), "01 08 0100 0a")
        XCTAssertHex(s.ask("08 0a00 ffff 0328"), "01 08 0a00 0a")
        XCTAssertHex(s.ask("10 0100 ffff 0128"), "01 10 0100 0a")                // no secondary service
        XCTAssertHex(s.ask("10 0800 ffff 0028"), "01 10 0800 0a")
    }

    func testUnsupportedGroupType() {
        var s = attRigServer()
        XCTAssertHex(s.ask("10 0100 ffff 0328"), "01 10 0100 10")   // «Characteristic» shall not be used
        XCTAssertHex(s.ask("10 0100 ffff 002a"), "01 10 0100 10")
        XCTAssertHex(s.ask("10 0700 ffff" + attServiceHex), "01 10 0700 10")
    }

    func testWritesAreRefusedAndChangeNothing() {
        var s = attRigServer()
        XCTAssertHex(s.ask("02 0f02"), "03 0502")
        let before = s.database
        XCTAssertHex(s.ask("12 0900 41 42 43"), "01 12 0900 03")
        XCTAssertHex(s.ask("12 0300"), "01 12 0300 03")
        XCTAssertHex(s.ask("12 0800 00"), "01 12 0800 03")
        XCTAssertHex(s.ask("16 0900 0000 41"), "01 16 0900 03")
        XCTAssertHex(s.ask("16 0300 0000"), "01 16 0300 03")
        XCTAssertHex(s.ask("18 01"), "19")      // the prepare queue is empty
        XCTAssertHex(s.ask("18 00"), "19")
        XCTAssertHex(s.ask("18 02"), "01 18 0000 04")
        XCTAssertHex(s.ask("18 ff"), "01 18 0000 04")
        XCTAssertHex(s.ask("52 0900 41 42 43"), "nil")                            // Write Command
        XCTAssertHex(s.ask("52 0300 41"), "nil")
        XCTAssertHex(s.ask("d2 0900 41 000000000000000000000000"), "nil")       // Signed Write Command
        XCTAssertEqual(s.database, before)
        XCTAssertHex(s.ask("0a 0900"), "0b" + attRigIdentifierHex)
        XCTAssertHex(s.ask("0a 0300"), "0b 41 6c 74 42 65 61 63 6f 6e")
    }

    func testRequestNotSupportedAndWhatIsNeverAnswered() {
        var s = attRigServer()
        for op in ["14", "15", "1a", "1c", "1f", "22", "24", "3f", "80", "8a", "bf"] {
            XCTAssertHex(s.ask(op), "01 \(op) 0000 06")
            XCTAssertHex(s.ask(op + " 0100 ffff"), "01 \(op) 0000 06")
        }
        // Commands (bit 6), responses, notifications, indications, the confirmation, nothing.
        for pdu in ["40", "7f 01", "c0", "ff 0102", "53 0900", "01 0a 0000 01", "03 1700", "05 01 0100 0028",
                    "0b 41", "13", "19", "1b 0900 41", "1d 0900 41", "1e", "21 0000", "23 0900 0100 41", ""] {
            XCTAssertHex(s.ask(pdu), "nil")
        }
        XCTAssertEqual(s.mtu, 23)
    }

    /// An attribute a client may not read (a characteristic with only the Write property), in a
    /// database built for the test: Read Not Permitted wherever its value would be read.
    func testReadNotPermitted() {
        var b = GATTDatabaseBuilder()
        b.service(GATTType.genericAccess)
        b.characteristic(GATTUUID(0x2A00), properties: GATTProperty.read, value: [0x41])
        b.characteristic(GATTUUID(0x2A00), properties: GATTProperty.write, value: [0x42])   // handle 5
        b.characteristic(GATTUUID(0x2A00), properties: GATTProperty.read, value: [0x43])
        var s = ATTServer(database: b.database)
        XCTAssertHex(s.ask("0a 0500"), "01 0a 0500 02")
        XCTAssertHex(s.ask("0c 0500 0000"), "01 0c 0500 02")
        XCTAssertHex(s.ask("0c 0500 0500"), "01 0c 0500 02")   // permission before offset
        XCTAssertHex(s.ask("0e 0300 0500"), "01 0e 0500 02")
        XCTAssertHex(s.ask("20 0500 0300"), "01 20 0500 02")
        XCTAssertHex(s.ask("08 0100 ffff 002a"), "09 03 0300 41")        // stops before handle 5
        XCTAssertHex(s.ask("08 0400 ffff 002a"), "01 08 0500 02")        // the first: the error
        XCTAssertHex(s.ask("08 0600 ffff 002a"), "09 03 0700 43")
        XCTAssertHex(s.ask("06 0100 ffff 002a 42"), "01 06 0100 0a")     // never matched by value
        XCTAssertHex(s.ask("06 0100 ffff 002a 43"), "07 0700 0700")
        XCTAssertHex(s.ask("04 0400 0500"), "05 01 0400 0328 0500 002a")  // its type is no secret
        XCTAssertHex(s.ask("12 0500 42"), "01 12 0500 03")
    }

    /// Find By Type Value: as many 4-octet pairs as fit in ATT_MTU - 1 (five at 23); group ends
    /// of services, characteristics (Part G 2.5.3) and plain attributes; a secondary service.
    func testGroupsAndFindByTypeValueTruncation() {
        var b = GATTDatabaseBuilder()
        for _ in 0..<7 { b.service(GATTType.genericAccess) }
        var s = ATTServer(database: b.database)
        XCTAssertHex(s.ask("06 0100 ffff 0028 0018"), "07 0100 0100 0200 0200 0300 0300 0400 0400 0500 0500")
        XCTAssertHex(s.ask("06 0600 ffff 0028 0018"), "07 0600 0600 0700 0700")

        var g = GATTDatabaseBuilder()
        g.service(GATTUUID(0x180F))
        g.characteristic(GATTUUID(0x2A19), properties: GATTProperty.read, value: [0x64])
        g.attribute(GATTUUID(0x2901), value: [0x42])
        g.service(GATTUUID(0x180A), primary: false)
        g.characteristic(GATTUUID(0x2A29), properties: GATTProperty.read, value: [0x41, 0x42])
        var t = ATTServer(database: g.database)
        XCTAssertHex(t.ask("06 0100 ffff 0328 02 0300 192a"), "07 0200 0400")
        XCTAssertHex(t.ask("06 0100 ffff 0129 42"), "07 0400 0400")
        XCTAssertHex(t.ask("06 0100 ffff 0128 0a18"), "07 0500 0700")
        XCTAssertHex(t.ask("10 0100 ffff 0128"), "11 06 0500 0700 0a18")
        XCTAssertHex(t.ask("10 0100 ffff 0028"), "11 06 0100 0400 0f18")
        XCTAssertHex(t.ask("04 0300 0400"), "05 01 0300 192a 0400 0129")
    }

    /// Every opcode, every length from 0 to 40: never a trap; a known request of a wrong length is
    /// Invalid PDU (handle 0x0000); one of a right length gets its response or another error.
    func testEveryLengthOfEveryOpcode() {
        // Lengths allowed, opcode included, from Part F 3.4 by hand.
        let allowed: [UInt8: (Int) -> Bool] = [
            0x02: { $0 == 3 }, 0x04: { $0 == 5 }, 0x06: { $0 >= 7 }, 0x08: { $0 == 7 || $0 == 21 },
            0x0a: { $0 == 3 }, 0x0c: { $0 == 5 }, 0x0e: { $0 >= 5 && $0 % 2 == 1 },
            0x10: { $0 == 7 || $0 == 21 }, 0x12: { $0 >= 3 }, 0x16: { $0 >= 5 }, 0x18: { $0 == 2 },
            0x20: { $0 >= 5 && $0 % 2 == 1 },
        ]
        let silent: Set<UInt8> = [0x01, 0x03, 0x05, 0x07, 0x09, 0x0b, 0x0d, 0x0f, 0x11, 0x13, 0x17, 0x19,
                                  0x1b, 0x1d, 0x1e, 0x21, 0x23]
        for op in 0...255 {
            let opcode = UInt8(op)
            for length in 1...40 {
                // Filler 01 00 01 00 ...: the range 0x0001-0x0001, handle 0x0001, Execute Write's flags 0x01.
                var pdu: [UInt8] = [opcode]
                while pdu.count < length { pdu.append(pdu.count % 2 == 1 ? 0x01 : 0x00) }
                var s = attRigServer()
                let r = s.handle(pdu)
                let context = "opcode \(hexString([opcode])) length \(length)"
                if opcode & 0x40 != 0 || silent.contains(opcode) {
                    XCTAssertNil(r, context)
                } else if let ok = allowed[opcode] {
                    guard let r else { XCTFail(context); continue }
                    if ok(length) {
                        XCTAssertTrue(r[0] == opcode + 1 || (r[0] == 0x01 && r[1] == opcode && r[4] != 0x04), context)
                    } else {
                        XCTAssertEqual(r, [0x01, opcode, 0x00, 0x00, 0x04], context)
                    }
                    XCTAssertLessThanOrEqual(r.count, 23, context)
                } else {
                    XCTAssertEqual(r, [0x01, opcode, 0x00, 0x00, 0x06], context)
                }
            }
        }
        var s = attRigServer()
        XCTAssertHex(s.ask("02 17"), "01 02 0000 04")
        XCTAssertHex(s.ask("02 1700 00"), "01 02 0000 04")
        XCTAssertHex(s.ask("08 0100 ffff 0328 00"), "01 08 0000 04")       // a 3-octet UUID
        XCTAssertHex(s.ask("10 0100 ffff 0028 0000 0000"), "01 10 0000 04")
        XCTAssertHex(s.ask("0e 0300"), "01 0e 0000 04")                   // one handle is not a set
        XCTAssertHex(s.ask("0e 0300 0500 09"), "01 0e 0000 04")
        XCTAssertHex(s.ask("06 0100 ffff 00"), "01 06 0000 04")
        XCTAssertEqual(s.mtu, 23)
    }

    /// Golden requests mutated by a seeded LCG: no trap, every response at most ATT_MTU octets and
    /// of the right kind, the database never changes.
    func testSeededMutations() {
        var seedHex: [String] = ["02 0f02", "02 1700", "04 0100 ffff", "08 0700 0900 0328", "0a 0900",
                                 "0c 0900 1600", "0e 0300 0500 0900", "10 0100 ffff 0028", "12 0900 41",
                                 "16 0900 0000 41", "18 01", "20 0900 0300", "52 0900 41"]
        seedHex.append("06 0100 ffff 0028" + attServiceHex)
        seedHex.append("08 0100 ffff" + attCharacteristicHex)
        let seeds = seedHex.map(attHex)
        var state: UInt64 = 0x2F23_4454_CF6D_4A0F
        func next(_ bound: Int) -> Int {   // Knuth's MMIX LCG, the high bits
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return Int((state >> 33) % UInt64(bound))
        }
        let original = attRigServer().database
        for round in 0..<20000 {
            var s = attRigServer(identifier: next(2) == 0 ? attRigIdentifier : String(repeating: "Z", count: 64),
                                 serverRxMTU: 23 + next(500))
            if next(2) == 0 { _ = s.handle([0x02, UInt8(next(256)), UInt8(next(3))]) }
            var pdu = seeds[next(seeds.count)]
            for _ in 0..<(1 + next(4)) {
                switch next(5) {
                case 0: if !pdu.isEmpty { pdu[next(pdu.count)] = UInt8(next(256)) }
                case 1: if !pdu.isEmpty { pdu.removeLast(next(pdu.count) + 1) }
                case 2: for _ in 0..<next(30) { pdu.append(UInt8(next(256))) }
                case 3: if !pdu.isEmpty { pdu[0] = UInt8(next(256)) }
                default: if pdu.count > 1 { pdu[1 + next(pdu.count - 1)] ^= UInt8(1 << next(8)) }
                }
            }
            let mtu = s.mtu
            guard let r = s.handle(pdu) else {
                XCTAssertTrue(pdu.isEmpty || pdu[0] & 0x40 != 0 || ATTOpcode.neverAnswered.contains(pdu[0]),
                              "round \(round): no answer to \(hexString(pdu))")
                continue
            }
            XCTAssertLessThanOrEqual(r.count, mtu, "round \(round): \(hexString(pdu))")
            XCTAssertTrue(r[0] == pdu[0] &+ 1 || (r.count == 5 && r[0] == 0x01 && r[1] == pdu[0]),
                          "round \(round): \(hexString(pdu)) -> \(hexString(r))")
            XCTAssertEqual(s.database.attributes.count, original.attributes.count)
        }
    }
}
