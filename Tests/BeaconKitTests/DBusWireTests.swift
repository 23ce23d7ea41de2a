import XCTest
@testable import BeaconKit

// MARK: helpers (shared with DBusWireErrorTests.swift)

/// The values of `values` as a body on the wire (a body starts 8-aligned, as a fresh encoder does).
func dbusBody(_ values: [DBusValue]) -> [UInt8] {
    var e = DBusEncoder()
    for v in values { e.append(v) }
    return e.bytes
}

/// A little-endian message assembled field by field: inputs `DBusMessage` would never encode.
func dbusRawMessage(kind: UInt8 = 1, flags: UInt8 = 0, version: UInt8 = 1, serial: UInt32 = 1,
                    fields: [(UInt8, DBusValue)], body: [UInt8] = []) -> [UInt8] {
    var e = DBusEncoder()
    e.bytes = [UInt8(ascii: "l"), kind, flags, version]
    e.appendInteger(UInt32(body.count))
    e.appendInteger(serial)
    e.append(.array(.structure([.byte, .variant]), fields.map { .structure([.byte($0.0), .variant($0.1)]) }))
    e.pad(to: 8)
    return e.bytes + body
}

/// Fields of a minimal valid method call.
let dbusCallFields: [(UInt8, DBusValue)] = [(1, .objectPath("/a")), (3, .string("M"))]

/// Decodes `bytes`, expecting a rejection (`expected` when given), never a crash.
func dbusAssertRejects(_ bytes: [UInt8], _ expected: DBusWireError? = nil, file: StaticString = #filePath, line: UInt = #line) {
    do {
        let m = try DBusMessage.decode(bytes)
        XCTFail("decoded a \(m.kind) with body '\(m.signature)'", file: file, line: line)
    } catch {
        if let expected { XCTAssertEqual(error, expected, file: file, line: line) }
    }
}

/// Hello, the first call of every client (serial 1, no body), by hand from the specification:
/// the 12-byte start, the fields array's length 0x6d, then PATH (o), INTERFACE (s), MEMBER (s),
/// DESTINATION (s), each a (yv) struct 8-aligned; the header padded to 128.
let dbusHelloHex = """
    6c 01 00 01 00000000 01000000 6d000000
    01 01 6f 00 15000000 2f6f72672f667265656465736b746f702f44427573 00 0000
    02 01 73 00 14000000 6f72672e667265656465736b746f702e44427573 00 000000
    03 01 73 00 05000000 48656c6c6f 00 0000
    06 01 73 00 14000000 6f72672e667265656465736b746f702e44427573 00 000000
    """.filter { $0 != "\n" }

/// A method return (serial 2) to call 77 from ":1.5", body `ay` [0x41, 0x42]: REPLY_SERIAL (u),
/// DESTINATION (s), SIGNATURE (g "ay"); fields 32 bytes, body 6.
let dbusReturnHex = "6c 02 00 01 06000000 02000000 20000000" + " 05 01 75 00 4d000000"
    + " 06 01 73 00 04000000 3a312e35 00 000000" + " 08 01 67 00 02 61 79 00" + " 02000000 4142"

let dbusHelloMessage = DBusMessage.methodCall(serial: 1, destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                                              interface: "org.freedesktop.DBus", member: "Hello")

/// One value of every type, containers nested, empty arrays of each alignment.
let dbusEveryType: [DBusValue] = [
    .byte(0xff), .boolean(true), .boolean(false), .int16(-2), .uint16(0xfffe), .int32(.min), .uint32(.max),
    .int64(.min), .uint64(.max), .double(bits: 0x3ff0_0000_0000_0000), .string(""), .string("héllo ✓"),
    .objectPath("/"), .objectPath("/org/bluez/hci0"), .signature(""), .signature("a{oa{sa{sv}}}"), .unixFD(3),
    .variant(.variant(.uint16(7))), .variant(.array(.string, [])),
    .bytes([]), .array(.uint16, []), .array(.string, []), .array(.uint64, []), .array(.structure([.byte, .uint64]), []),
    .bytes([1, 2, 3]), .strings(["a", "", "bc"]),
    .array(.array(.int32), [.array(.int32, [.int32(1), .int32(-1)]), .array(.int32, [])]),
    .structure([.byte(1), .structure([.int64(-1)]), .string("x"), .array(.double, [.double(bits: 1)])]),
    .array(.dictEntry(.byte, .string), [.dictEntry(.byte(1), .string("one")), .dictEntry(.byte(2), .string("two"))]),
    .properties([("a", .uint16(1)), ("s", .structure([.byte(9), .objectPath("/x")])), ("v", .variant(.boolean(true)))]),
    .array(.dictEntry(.objectPath, .array(.dictEntry(.string, .array(.dictEntry(.string, .variant))))), [
        .dictEntry(.objectPath("/p"), .array(.dictEntry(.string, .array(.dictEntry(.string, .variant))), [
            .dictEntry(.string("i"), .properties([("k", .int64(5))])),
        ])),
    ]),
]

/// The D-Bus wire format: golden bytes worked out by hand from the specification, alignment and
/// padding, every type both ways, big-endian input, framing, signatures, malformed input
/// (DBusWireErrorTests.swift) and EXTERNAL authentication.
final class DBusWireTests: XCTestCase {
    // MARK: golden messages

    func testHelloGoldenBytes() throws {
        let bytes = dbusHelloMessage.encoded()
        XCTAssertEqual(bytes.count, 128)
        XCTAssertHex(hexString(bytes), dbusHelloHex)
        XCTAssertEqual(try DBusMessage.decode(attHex(dbusHelloHex)), dbusHelloMessage)
        XCTAssertEqual(try DBusMessage.frameLength(bytes[...]), 128)
    }

    func testGetNameOwnerGoldenBytes() throws {
        // MEMBER "GetNameOwner" ends at 101 (pad 3), DESTINATION at 133 (pad 3), SIGNATURE "s" at
        // 143: fields 127 bytes, header padded to 144, body: "org.bluez" as a string, 14 bytes.
        let m = DBusMessage.methodCall(serial: 4, destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                                       interface: "org.freedesktop.DBus", member: "GetNameOwner", body: [.string("org.bluez")])
        let want = "6c 01 00 01 0e000000 04000000 7f000000"
            + " 01 01 6f 00 15000000 2f6f72672f667265656465736b746f702f44427573 00 0000"
            + " 02 01 73 00 14000000 6f72672e667265656465736b746f702e44427573 00 000000"
            + " 03 01 73 00 0c000000 4765744e616d654f776e6572 00 000000"
            + " 06 01 73 00 14000000 6f72672e667265656465736b746f702e44427573 00 000000"
            + " 08 01 67 00 01 73 00 00"
            + " 09000000 6f72672e626c75657a 00"
        XCTAssertHex(hexString(m.encoded()), want)
        XCTAssertEqual(try DBusMessage.decode(attHex(want)), m)
    }

    func testMethodReturnGoldenBytes() throws {
        let call = DBusMessage(kind: .methodCall, serial: 77, path: "/", member: "M", sender: ":1.5")
        let m = DBusMessage.methodReturn(serial: 2, to: call, body: [.bytes([0x41, 0x42])])
        XCTAssertEqual(m.signature, "ay")
        XCTAssertHex(hexString(m.encoded()), dbusReturnHex)
        let back = try DBusMessage.decode(attHex(dbusReturnHex))
        XCTAssertEqual(back, m)
        XCTAssertEqual(back.replySerial, 77)
        XCTAssertEqual(back.destination, ":1.5")
        XCTAssertFalse(back.expectsReply)
    }

    // MARK: alignment and padding

    func testDictionaryOfVariantsPadding() throws {
        // Length (35: from the first entry at 8 to the end at 43), pad to 8 (not counted); "a":
        // sig "q", pad 1, 0x1234; pad to 24; "b": sig "s", pad 3, "xy".
        let v = DBusValue.properties([("a", .uint16(0x1234)), ("b", .string("xy"))])
        let want = "23000000 00000000 01000000 6100 017100 00 3412 00000000 01000000 6200 017300 000000 02000000 787900"
        XCTAssertHex(hexString(dbusBody([v])), want)
        var d = DBusDecoder(attHex(want), bigEndian: false)
        XCTAssertEqual(try d.read(.array(.dictEntry(.string, .variant))), v)
        XCTAssertEqual(d.offset, 43)
    }

    func testEmptyArrayOfStructsKeepsItsPadding() throws {
        // Length 0, padding to the 8-aligned first element emitted all the same, then the byte.
        let values: [DBusValue] = [.array(.structure([.byte, .uint64]), []), .byte(0xff)]
        XCTAssertHex(hexString(dbusBody(values)), "00000000 00000000 ff")
        var d = DBusDecoder(attHex("00000000 00000000 ff"), bigEndian: false)
        XCTAssertEqual(try d.read(.array(.structure([.byte, .uint64]))), values[0])
        XCTAssertEqual(try d.read(.byte), .byte(0xff))
        // The same in a message: the padding is in the body length (8).
        let m = DBusMessage.methodCall(serial: 9, destination: "d", path: "/", interface: "i", member: "m", body: [values[0]])
        let bytes = m.encoded()
        XCTAssertEqual(Array(bytes[4..<8]), [8, 0, 0, 0])
        XCTAssertEqual(try DBusMessage.decode(bytes), m)
    }

    func testStructAfterByte() throws {
        let values: [DBusValue] = [.byte(1), .structure([.byte(2), .uint32(3)])]
        let want = "01 00000000000000 02 000000 03000000"
        XCTAssertHex(hexString(dbusBody(values)), want)
        var d = DBusDecoder(attHex(want), bigEndian: false)
        XCTAssertEqual(try d.read(.byte), values[0])
        XCTAssertEqual(try d.read(.structure([.byte, .uint32])), values[1])
    }

    func testAlignmentCountsFromMessageStart() throws {
        for value in dbusEveryType {
            for lead in 0..<8 {
                var e = DBusEncoder()
                e.bytes = Array(repeating: 0xee, count: lead)
                e.append(value)
                var d = DBusDecoder(e.bytes, bigEndian: false, offset: lead)
                XCTAssertEqual(try d.read(value.type), value, "\(value.type.signature) after \(lead)")
                XCTAssertEqual(d.offset, e.bytes.count)
            }
        }
    }

    // MARK: round trips

    func testEveryTypeRoundTripsInAMessage() throws {
        for value in dbusEveryType {
            for body in [[value], [.byte(0xaa), value], [.uint16(1), value, .byte(2)]] {
                let m = DBusMessage.methodCall(serial: 3, destination: "org.bluez", path: "/org/bluez/hci0",
                                               interface: "org.bluez.GattManager1", member: "M", body: body)
                XCTAssertEqual(try DBusMessage.decode(m.encoded()), m, m.signature)
            }
        }
        let all = DBusMessage(kind: .signal, flags: 0x40, serial: .max, path: "/", interface: "a.b", member: "S",
                              destination: ":1.1", sender: ":1.2", body: dbusEveryType)
        XCTAssertEqual(try DBusMessage.decode(all.encoded()), all)
        let error = DBusMessage.error(serial: 5, to: all, name: "org.bluez.Error.Failed", text: "no")
        XCTAssertEqual(try DBusMessage.decode(error.encoded()), error)
    }

    func testSignatures() {
        XCTAssertEqual(DBusValue.properties([]).type.signature, "a{sv}")
        XCTAssertEqual(dbusEveryType.last?.type.signature, "a{oa{sa{sv}}}")
        XCTAssertEqual(DBusValue.structure([.byte(1), .variant(.string("s")), .array(.int64, [])]).type.signature, "(yvax)")
        let m = DBusMessage(kind: .methodCall, serial: 1, body: [.string("x"), .properties([])])
        XCTAssertEqual(m.signature, "sa{sv}")
    }

    // MARK: big-endian input

    func testBigEndianMethodReturn() throws {
        // REPLY_SERIAL 5, SIGNATURE "s", pad 1, DESTINATION ":1.9": fields 29 bytes, pad 3, "hi".
        let bytes = attHex("42 02 00 01 00000007 00000007 0000001d" + " 05 01 75 00 00000005"
                           + " 08 01 67 00 01 73 00 00" + " 06 01 73 00 00000004 3a312e39 00 000000" + " 00000002 686900")
        XCTAssertEqual(try DBusMessage.frameLength(bytes[...]), 55)
        let m = try DBusMessage.decode(bytes)
        XCTAssertEqual(m, DBusMessage(kind: .methodReturn, serial: 7, replySerial: 5, destination: ":1.9", body: [.string("hi")]))
    }

    func testBigEndianMethodCallNumbers() throws {
        // PATH "/", pad 6; MEMBER "M", pad 6; SIGNATURE "qxb": fields 41, pad 7. Body: q, pad 6, x, b.
        let bytes = attHex("42 01 00 01 00000014 00000009 00000029"
                           + " 01 01 6f 00 00000001 2f00 000000000000" + " 03 01 73 00 00000001 4d00 000000000000"
                           + " 08 01 67 00 03 717862 00 00000000000000" + " 0102 000000000000 0102030405060708 00000001")
        XCTAssertEqual(bytes.count, 84)
        let m = try DBusMessage.decode(bytes)
        XCTAssertEqual(m.kind, .methodCall)
        XCTAssertEqual(m.serial, 9)
        XCTAssertEqual(m.path, "/")
        XCTAssertEqual(m.member, "M")
        XCTAssertEqual(m.body, [.uint16(0x0102), .int64(0x0102_0304_0506_0708), .boolean(true)])
        var d = DBusDecoder(attHex("fffe 0000 80000000 3ff0000000000000"), bigEndian: true)
        XCTAssertEqual(try d.read(.int16), .int16(-2))
        XCTAssertEqual(try d.read(.int32), .int32(.min))
        XCTAssertEqual(try d.read(.double), .double(bits: 0x3ff0_0000_0000_0000))
    }

    // MARK: framing

    func testFrameLengthNeedsSixteenBytes() throws {
        let hello = attHex(dbusHelloHex)
        for n in 0..<16 { XCTAssertNil(try DBusMessage.frameLength(hello[0..<n]), "\(n) bytes") }
        XCTAssertEqual(try DBusMessage.frameLength(hello[0..<16]), 128)
        XCTAssertEqual(try DBusMessage.frameLength(hello[...] + [1, 2, 3]), 128)
        // A slice that does not start at index 0.
        let twice = hello + hello
        XCTAssertEqual(try DBusMessage.frameLength(twice[128...]), 128)
    }

    func testReaderSplitsTwoMessagesInOddChunks() throws {
        let first = dbusHelloMessage
        let second = try DBusMessage.decode(attHex(dbusReturnHex))
        let stream = first.encoded() + second.encoded()
        for chunk in [1, 3, 5, 7, 13, 127, 129, stream.count] {
            var reader = DBusMessageReader()
            var got: [DBusMessage] = []
            var i = 0
            while i < stream.count {
                let end = min(i + chunk, stream.count)
                got += try reader.feed(Array(stream[i..<end]))
                i = end
            }
            XCTAssertEqual(got, [first, second], "chunks of \(chunk)")
            XCTAssertEqual(try reader.feed([]), [])
        }
        var reader = DBusMessageReader()
        XCTAssertEqual(try reader.feed(Array(stream[0..<130])), [first])
        XCTAssertEqual(try reader.feed(Array(stream[130...])), [second])
    }

    // MARK: signatures

    func testSignatureParsing() throws {
        XCTAssertEqual(try DBusType.parse(signature: ""), [])
        XCTAssertEqual(try DBusType.parse(signature: "a{sv}"), [.array(.dictEntry(.string, .variant))])
        XCTAssertEqual(try DBusType.parse(signature: "oa{sv}"), [.objectPath, .array(.dictEntry(.string, .variant))])
        XCTAssertEqual(try DBusType.parse(signature: "(yv)ay"), [.structure([.byte, .variant]), .array(.byte)])
        XCTAssertEqual(try DBusType.parse(signature: "a{oa{sa{sv}}}"),
                       [.array(.dictEntry(.objectPath, .array(.dictEntry(.string, .array(.dictEntry(.string, .variant))))))])
        for s in ["ybnqiuxtdsoghv", "a(ii)", "aay", "a{ys}", "a{hv}", "(a{sv}(i))", "v", "aaa{ta(dx)}"] {
            XCTAssertEqual(try DBusType.parse(signature: s).map(\.signature).joined(), s)
        }
        let deepArrays = String(repeating: "a", count: 32) + "y"
        let deepStructs = String(repeating: "(", count: 32) + "y" + String(repeating: ")", count: 32)
        XCTAssertEqual(try DBusType.parse(signature: deepArrays).count, 1)
        XCTAssertEqual(try DBusType.parse(signature: deepStructs).count, 1)
        XCTAssertEqual(try DBusType.parse(signature: String(repeating: "y", count: 255)).count, 255)
    }

    func testBadSignatures() {
        let bad = ["a", "(", "()", ")", "{sv}", "a{vs}", "a{sv", "a{s}", "a{svs}", "a{(s)v}", "a{ayv}", "({sv})",
                   "z", "aa", "(y", "y)", "a{}", "{", "}", "ae", "a{sv}}", "m", "*", "é",
                   String(repeating: "a", count: 33) + "y",
                   String(repeating: "(", count: 33) + "y" + String(repeating: ")", count: 33),
                   String(repeating: "y", count: 256)]
        for s in bad {
            XCTAssertThrowsError(try DBusType.parse(signature: s), s) { error in
                guard case .badSignature = error as? DBusWireError else { return XCTFail("\(error) for \(s)") }
            }
        }
    }
}
