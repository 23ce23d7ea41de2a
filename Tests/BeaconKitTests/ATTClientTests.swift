import XCTest
@testable import BeaconKit

/// The ATT client's requests (golden bytes by hand from Core Vol 3 Part F 3.4) and its response
/// decoders on good, short, long and inconsistent PDUs.
final class ATTClientTests: XCTestCase {
    func testRequestsAsThePartFLayoutSays() {
        XCTAssertEqual(hexString(ATTRequest.exchangeMTU(clientRxMTU: 517)), "020502")
        XCTAssertEqual(ATTRequest.findByTypeValue(start: 1, end: 0xFFFF, type: 0x2800, value: GATTDatabase.identityServiceUUID.wire),
                       attHex("06 0100 ffff 0028" + attServiceHex))
        XCTAssertEqual(ATTRequest.readByType(start: 7, end: 9, type: GATTType.characteristic), attHex("08 0700 0900 0328"))
        XCTAssertEqual(ATTRequest.readByGroupType(start: 0x0a, end: 0xFFFF, type: GATTType.primaryService), attHex("10 0a00 ffff 0028"))
        XCTAssertEqual(ATTRequest.read(handle: 9), attHex("0a 0900"))
        XCTAssertEqual(ATTRequest.readBlob(handle: 9, offset: 22), attHex("0c 0900 1600"))
        XCTAssertEqual(ATTRequest.handleValueConfirmation, [0x1e])
        // Each request is one the server takes as well-formed.
        var s = attRigServer()
        for r in [ATTRequest.exchangeMTU(clientRxMTU: 23), ATTRequest.readByType(start: 1, end: 9, type: GATTType.characteristic),
                  ATTRequest.readByGroupType(start: 1, end: 9, type: GATTType.primaryService), ATTRequest.read(handle: 9),
                  ATTRequest.readBlob(handle: 9, offset: 0)] {
            XCTAssertNotEqual(s.handle(r)?.first, ATTOpcode.errorResponse, hexString(r))
        }
    }

    func testErrorResponse() throws {
        let e = try ATTResponse.error(attHex("01 0a 0900 02")[...]).get()
        XCTAssertEqual(e, ATTErrorResponse(request: 0x0a, handle: 9, code: 0x02))
        XCTAssertEqual(e.description, "Read Not Permitted (0x02) to Read Request, handle 0x0009")
        XCTAssertEqual(ATTErrorResponse(request: 0x08, handle: 0x0107, code: 0x0a).description,
                       "Attribute Not Found (0x0a) to Read By Type Request, handle 0x0107")
        XCTAssertThrowsError(try ATTResponse.error(attHex("01 0a 0900")[...]).get())
        XCTAssertThrowsError(try ATTResponse.error(attHex("01 0a 0900 02 00")[...]).get())
        XCTAssertThrowsError(try ATTResponse.error(attHex("0b 0a 0900 02")[...]).get())
        XCTAssertThrowsError(try ATTResponse.error([][...]).get())
    }

    func testErrorAndOpcodeNames() {
        let named: [UInt8: String] = [0x01: "Invalid Handle", 0x05: "Insufficient Authentication", 0x06: "Request Not Supported",
                                      0x0b: "Attribute Not Long", 0x0f: "Insufficient Encryption", 0x13: "Value Not Allowed",
                                      0x80: "Application Error", 0x9f: "Application Error", 0xa0: "Reserved error",
                                      0x00: "Reserved error", 0xe0: "Common Profile and Service Error", 0xff: "Out of Range"]
        for (code, name) in named { XCTAssertEqual(attErrorName(code), name, "0x\(hexString([code]))") }
        for c in ATTErrorCode.allCodes { XCTAssertNotEqual(attErrorName(c), "Reserved error") }
        XCTAssertEqual(attOpcodeName(0x06), "Find By Type Value Request")
        XCTAssertEqual(attOpcodeName(0x7f), "opcode 0x7f")
    }

    func testExchangeMTUAndFindByTypeValue() throws {
        XCTAssertEqual(try ATTResponse.exchangeMTU(attHex("03 0502")[...]).get(), 517)
        for bad in ["03 05", "03 0502 00", "02 0502"] {
            XCTAssertThrowsError(try ATTResponse.exchangeMTU(attHex(bad)[...]).get(), bad)
        }
        XCTAssertEqual(try ATTResponse.findByTypeValue(attHex("07 0700 0900")[...]).get(), [7...9])
        XCTAssertEqual(try ATTResponse.findByTypeValue(attHex("07 0700 0900 0a00 0a00")[...]).get(), [7...9, 10...10])
        for bad in ["07", "07 0700 09", "07 0700 0900 0a", "07 0900 0700", "07 0000 0900", "09 0700 0900"] {
            XCTAssertThrowsError(try ATTResponse.findByTypeValue(attHex(bad)[...]).get(), bad)
        }
    }

    func testReadByGroupTypeAndReadByType() throws {
        let groups = try ATTResponse.readByGroupType(attHex("11 06 0100 0500 0018 0600 0600 0118")[...]).get()
        XCTAssertEqual(groups.map(\.range), [1...5, 6...6])
        XCTAssertEqual(groups.map { Array($0.value) }, [[0x00, 0x18], [0x01, 0x18]])
        for bad in ["11", "11 06", "11 06 0100 0500 00", "11 03 0100 05", "11 00 0100", "11 06 0500 0100 0018",
                    "11 06 0000 0100 0018"] {
            XCTAssertThrowsError(try ATTResponse.readByGroupType(attHex(bad)[...]).get(), bad)
        }
        let chars = try ATTResponse.readByType(attHex("09 07 0200 02 0300 002a 0400 02 0500 012a")[...]).get()
        XCTAssertEqual(chars.map(\.handle), [2, 4])
        let c = try ATTResponse.characteristic(handle: chars[1].handle, chars[1].value).get()
        XCTAssertEqual(c, CharacteristicDeclaration(handle: 4, properties: 0x02, valueHandle: 5, uuid: GATTType.appearance))
        let long = try ATTResponse.readByType(attHex("09 15 0800 02 0900" + attCharacteristicHex)[...]).get()
        XCTAssertEqual(try ATTResponse.characteristic(handle: 8, long[0].value).get().uuid, GATTDatabase.identifierCharacteristicUUID)
        for bad in ["09", "09 15 0800 02 0900", "09 01 08", "09 07 0200 02 0300 002a 04"] {
            XCTAssertThrowsError(try ATTResponse.readByType(attHex(bad)[...]).get(), bad)
        }
        for bad in ["", "02", "02 0300", "02 0300 002a 00", "02 0300" + attCharacteristicHex + "00"] {
            XCTAssertThrowsError(try ATTResponse.characteristic(handle: 2, attHex(bad)[...]).get(), bad)
        }
    }

    func testReadValues() throws {
        XCTAssertEqual(Array(try ATTResponse.value(attHex("0b 4142")[...], opcode: ATTOpcode.readResponse).get()), [0x41, 0x42])
        XCTAssertEqual(Array(try ATTResponse.value(attHex("0d")[...], opcode: ATTOpcode.readBlobResponse).get()), [])
        XCTAssertThrowsError(try ATTResponse.value(attHex("0d 41")[...], opcode: ATTOpcode.readResponse).get())
        XCTAssertThrowsError(try ATTResponse.value([][...], opcode: ATTOpcode.readResponse).get())
        // Slices not starting at index 0 (a PDU inside a larger buffer) decode the same.
        let buffer = attHex("ff ff 07 0700 0900")
        XCTAssertEqual(try ATTResponse.findByTypeValue(buffer[2...]).get(), [7...9])
        XCTAssertEqual(try ATTResponse.error(attHex("00 01 0a 0900 02")[1...]).get().handle, 9)
    }

    /// Every prefix of every good response: a result or a reason, never a trap.
    func testEveryPrefixOfEveryResponse() {
        let good = ["01 0a 0900 02", "03 0502", "07 0700 0900", "11 14 0700 0900" + attServiceHex,
                    "09 15 0800 02 0900" + attCharacteristicHex, "0b" + attRigIdentifierHex]
        for hex in good {
            let pdu = attHex(hex)
            for n in 0...pdu.count {
                let p = pdu.prefix(n)
                _ = ATTResponse.error(p)
                _ = ATTResponse.exchangeMTU(p)
                _ = ATTResponse.findByTypeValue(p)
                _ = ATTResponse.readByGroupType(p)
                if case .success(let list) = ATTResponse.readByType(p) {
                    for e in list { _ = ATTResponse.characteristic(handle: e.handle, e.value) }
                }
                _ = ATTResponse.value(p, opcode: ATTOpcode.readResponse)
            }
        }
    }
}

extension ATTErrorCode {
    static let allCodes: [UInt8] = [0x01, 0x02, 0x03, 0x04, 0x06, 0x07, 0x0a, 0x10]
}
