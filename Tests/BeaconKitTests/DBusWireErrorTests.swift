import XCTest
@testable import BeaconKit

/// Malformed input is an error and never a crash; EXTERNAL authentication.
extension DBusWireTests {
    /// Valid messages of each kind and byte order to cut and damage.
    private var validMessages: [[UInt8]] {
        [attHex(dbusHelloHex), attHex(dbusReturnHex),
         DBusMessage(kind: .signal, serial: 8, path: "/", interface: "a.b", member: "S", sender: ":1.2", body: dbusEveryType).encoded(),
         DBusMessage.error(serial: 3, to: dbusHelloMessage, name: "org.bluez.Error.Failed", text: "no").encoded(),
         attHex("42 02 00 01 00000007 00000007 0000001d 05 01 75 00 00000005 08 01 67 00 01 73 00 00"
                + " 06 01 73 00 00000004 3a312e39 00 000000 00000002 686900")]
    }

    // MARK: truncation and damage

    func testTruncatedAtEveryPrefix() throws {
        for bytes in validMessages {
            let whole = try DBusMessage.decode(bytes)
            for n in 0..<bytes.count {
                dbusAssertRejects(Array(bytes[0..<n]), .truncated)
                var reader = DBusMessageReader()
                XCTAssertEqual(try reader.feed(Array(bytes[0..<n])), [], "\(n)")
                XCTAssertEqual(try reader.feed(Array(bytes[n...])), [whole], "\(n)")
            }
            dbusAssertRejects(bytes + [0], .truncated)
        }
    }

    func testTruncatedBodyValuesAtEveryPrefix() {
        let body = dbusBody(dbusEveryType)
        for n in 0..<body.count {
            var d = DBusDecoder(Array(body[0..<n]), bigEndian: false)
            do {
                for v in dbusEveryType { _ = try d.read(v.type) }
                XCTFail("read all of the body from \(n) of its \(body.count) bytes")
            } catch {}
        }
    }

    func testDamagedBytesNeverCrash() {
        for bytes in validMessages {
            for i in bytes.indices {
                for b: UInt8 in [0x00, 0x01, 0x02, 0x7f, 0x80, 0xfe, 0xff, bytes[i] &+ 1, bytes[i] &- 1] {
                    var damaged = bytes
                    damaged[i] = b
                    _ = try? DBusMessage.decode(damaged)
                    var reader = DBusMessageReader()
                    _ = try? reader.feed(damaged)
                }
            }
        }
    }

    // MARK: the fixed start

    func testBadByteOrderVersionTypeAndSerial() throws {
        let hello = attHex(dbusHelloHex)
        var bad = hello
        bad[0] = UInt8(ascii: "x")
        XCTAssertThrowsError(try DBusMessage.frameLength(bad[...]))
        dbusAssertRejects(bad, .badHeader("byte order '120'"))
        var reader = DBusMessageReader()
        XCTAssertThrowsError(try reader.feed(Array(bad[0..<16])))
        for version: UInt8 in [0, 2, 0x6c] {
            bad = hello
            bad[3] = version
            dbusAssertRejects(bad, .badHeader("protocol version \(version)"))
        }
        for kind: UInt8 in [0, 5, 0xff] {
            bad = hello
            bad[1] = kind
            dbusAssertRejects(bad, .badHeader("message type \(kind)"))
        }
        dbusAssertRejects(dbusRawMessage(serial: 0, fields: dbusCallFields), .badHeader("serial 0"))
        XCTAssertEqual(try DBusMessage.decode(dbusRawMessage(serial: 1, fields: dbusCallFields)).member, "M")
    }

    func testTooLargeLengths() {
        let hello = attHex(dbusHelloHex)
        var bad = hello
        bad[4..<8] = [0x01, 0x00, 0x10, 0x00]   // body 1 MiB + 1
        dbusAssertRejects(bad, .tooLarge(128 + 1 << 20 + 1))   // the whole message, its 128-byte header too
        bad = hello
        bad[12..<16] = [0xff, 0xff, 0xff, 0xff]
        dbusAssertRejects(bad, .tooLarge(Int(UInt32.max)))
        bad = hello
        bad[4..<8] = [0x00, 0x00, 0x10, 0x00]   // 1 MiB of body after a 128-byte header
        dbusAssertRejects(bad, .tooLarge(128 + 1 << 20))
        let sig: [(UInt8, DBusValue)] = [(8, .signature("s"))]
        dbusAssertRejects(dbusRawMessage(fields: dbusCallFields + sig, body: attHex("00000004 41 00")), .tooLarge(1 << 26))
        let arr: [(UInt8, DBusValue)] = [(8, .signature("ay"))]
        dbusAssertRejects(dbusRawMessage(fields: dbusCallFields + arr, body: attHex("01000004 41")), .tooLarge(1 << 26 + 1))
    }

    /// Any local user may send us a message of up to 128 MiB (a unicast signal): one over our
    /// 1 MiB is dropped as it streams in, never kept whole, and the connection goes on (issue 30).
    func testAnOversizedMessageIsDroppedAndTheNextOneRead() throws {
        let hello = attHex(dbusHelloHex)
        var big = hello
        let body = (1 << 20) + 100
        big[4..<8] = [UInt8(body & 0xff), UInt8(body >> 8 & 0xff), UInt8(body >> 16 & 0xff), 0]
        let total = try XCTUnwrap(DBusMessage.frameLength(big[...]))
        var reader = DBusMessageReader()
        XCTAssertEqual(try reader.feed(Array(big[0..<16])), [])
        XCTAssertEqual(reader.dropped, [total], "said once, when it starts")
        // The rest of it, in reads of 64 KiB, then a good message in the same read as its tail.
        var left = total - 16
        while left > 65_536 {
            XCTAssertEqual(try reader.feed([UInt8](repeating: 0xee, count: 65_536)), [])
            XCTAssertEqual(reader.dropped, [])
            left -= 65_536
        }
        let next = try reader.feed([UInt8](repeating: 0xee, count: left) + hello)
        XCTAssertEqual(next.map(\.member), [try DBusMessage.decode(hello).member])
        // Past the specification's 128 MiB it is no message at all.
        big[4..<8] = [0x01, 0x00, 0x00, 0x08]
        var fresh = DBusMessageReader()
        XCTAssertThrowsError(try fresh.feed(Array(big[0..<16])))
    }

    /// A message whose body we do not want is never decoded: a malformed one costs nothing.
    func testABodyNotWantedIsNotDecoded() throws {
        let sig: [(UInt8, DBusValue)] = [(8, .signature("s"))]
        let bad = dbusRawMessage(fields: dbusCallFields + sig, body: attHex("01000000 41 41 00 00"))
        XCTAssertThrowsError(try DBusMessage.decode(bad))
        var reader = DBusMessageReader()
        let skipped = try reader.feed(bad) { _ in false }
        XCTAssertEqual(skipped.count, 1)
        XCTAssertEqual(skipped.first?.bodySkipped, true)
        XCTAssertEqual(skipped.first?.body, [])
        XCTAssertEqual(skipped.first?.member, "M")
        var strict = DBusMessageReader()
        XCTAssertThrowsError(try strict.feed(bad))
    }

    // MARK: header fields

    func testHeaderFieldsRequiredByKind() {
        dbusAssertRejects(dbusRawMessage(kind: 1, fields: [(1, .objectPath("/a"))]), .badHeader("method call without path or member"))
        dbusAssertRejects(dbusRawMessage(kind: 1, fields: [(3, .string("M"))]), .badHeader("method call without path or member"))
        dbusAssertRejects(dbusRawMessage(kind: 4, fields: dbusCallFields), .badHeader("signal without path, interface or member"))
        dbusAssertRejects(dbusRawMessage(kind: 3, fields: [(5, .uint32(1))]), .badHeader("error without name or reply serial"))
        dbusAssertRejects(dbusRawMessage(kind: 3, fields: [(4, .string("e.E"))]), .badHeader("error without name or reply serial"))
        dbusAssertRejects(dbusRawMessage(kind: 2, fields: [(6, .string(":1.1"))]), .badHeader("method return without reply serial"))
        XCTAssertNoThrow(try DBusMessage.decode(dbusRawMessage(kind: 2, fields: [(5, .uint32(1))])))
    }

    func testHeaderFieldsOfTheWrongType() {
        let wrong: [(UInt8, DBusValue)] = [(1, .string("/a")), (2, .objectPath("/a")), (3, .uint32(1)), (4, .byte(1)),
                                          (5, .int32(1)), (6, .objectPath("/a")), (7, .boolean(true)), (8, .string("s"))]
        for field in wrong {
            dbusAssertRejects(dbusRawMessage(fields: dbusCallFields + [field]),
                              .badHeader("header field \(field.0) of type \(field.1.type.signature)"))
        }
    }

    func testUnknownHeaderFieldsIgnored() throws {
        let m = try DBusMessage.decode(dbusRawMessage(fields: dbusCallFields + [(10, .string("x")), (200, .array(.byte, []))]))
        XCTAssertEqual(m, DBusMessage(kind: .methodCall, serial: 1, path: "/a", member: "M"))
    }

    /// UNIX_FDS (9) is a UINT32 (specification, "Header Fields"): a valid message carrying it,
    /// even 0, decodes (it once threw badHeader("header field 9 of type u")).
    func testUnixFDsHeaderFieldAccepted() throws {
        let m = try DBusMessage.decode(dbusRawMessage(fields: dbusCallFields + [(9, .uint32(0))]))
        XCTAssertEqual(m.member, "M")
    }

    func testInvalidObjectPaths() {
        for path in ["/", "/a", "/org/bluez/hci0", "/A_1/b9", "/_"] { XCTAssertTrue(DBusNames.isObjectPath(path), path) }
        for path in ["", "a", "a/b", "/a/", "//", "/a//b", "/a-b", "/a.b", "/ä", "/a b", "/a/b/"] {
            XCTAssertFalse(DBusNames.isObjectPath(path), path)
            dbusAssertRejects(dbusRawMessage(fields: [(1, .objectPath(path)), (3, .string("M"))]), .badValue("object path '\(path)'"))
            let sig: [(UInt8, DBusValue)] = [(8, .signature("o"))]
            dbusAssertRejects(dbusRawMessage(fields: dbusCallFields + sig, body: dbusBody([.objectPath(path)])))
        }
    }

    func testBadSignaturesOnTheWire() {
        for s in ["a", "(", "()", "{sv}", "a{vs}", "a{sv", "z", String(repeating: "a", count: 33) + "y"] {
            dbusAssertRejects(dbusRawMessage(fields: dbusCallFields + [(8, .signature(s))], body: [0, 0, 0, 0]), .badSignature(s))
            let g: [(UInt8, DBusValue)] = [(8, .signature("g"))]
            dbusAssertRejects(dbusRawMessage(fields: dbusCallFields + g, body: dbusBody([.signature(s)])), .badSignature(s))
        }
        // A header field's variant signature that is not one type, or no type.
        var hello = attHex(dbusHelloHex)
        hello[18] = UInt8(ascii: "(")
        dbusAssertRejects(hello, .badSignature("("))
        var d = DBusDecoder(attHex("02 7979 00 01 02"), bigEndian: false)
        XCTAssertThrowsError(try d.read(.variant)) { XCTAssertEqual($0 as? DBusWireError, .badValue("variant signature 'yy'")) }
        d = DBusDecoder(attHex("00 00 01"), bigEndian: false)
        XCTAssertThrowsError(try d.read(.variant)) { XCTAssertEqual($0 as? DBusWireError, .badValue("variant signature ''")) }
    }

    // MARK: bodies

    func testBadBodies() {
        let s: [(UInt8, DBusValue)] = [(8, .signature("s"))]
        var body = dbusBody([.string("org.bluez")])
        body[body.count - 1] = UInt8(ascii: "x")
        dbusAssertRejects(dbusRawMessage(fields: dbusCallFields + s, body: body), .badValue("a string without its terminating nul"))
        body = dbusBody([.string("org.bluez")])
        body[6] = 0
        dbusAssertRejects(dbusRawMessage(fields: dbusCallFields + s, body: body), .badValue("a string without its terminating nul"))
        body[6] = 0xff
        dbusAssertRejects(dbusRawMessage(fields: dbusCallFields + s, body: body), .badValue("a string that is not UTF-8"))
        body = dbusBody([.string("org.bluez")]) + [0, 0, 0]
        dbusAssertRejects(dbusRawMessage(fields: dbusCallFields + s, body: body), .badValue("body longer than its signature"))
        dbusAssertRejects(dbusRawMessage(fields: dbusCallFields, body: [0]), .badValue("body longer than its signature"))
        let su: [(UInt8, DBusValue)] = [(8, .signature("su"))]
        dbusAssertRejects(dbusRawMessage(fields: dbusCallFields + su, body: dbusBody([.string("x")])), .truncated)
        let b: [(UInt8, DBusValue)] = [(8, .signature("b"))]
        XCTAssertEqual(try DBusMessage.decode(dbusRawMessage(fields: dbusCallFields + b, body: [1, 0, 0, 0])).body, [.boolean(true)])
        dbusAssertRejects(dbusRawMessage(fields: dbusCallFields + b, body: [2, 0, 0, 0]), .badValue("boolean 2"))
        dbusAssertRejects(dbusRawMessage(fields: dbusCallFields + b, body: [0, 0, 0, 1]), .badValue("boolean 16777216"))
    }

    func testArrayLengthPastTheEnd() {
        var bytes = attHex(dbusReturnHex)
        bytes[48] = 3   // ay of 3 in a 6-byte body holding 2
        dbusAssertRejects(bytes, .truncated)
        bytes[48] = 1   // ay of 1: the second byte is left over
        dbusAssertRejects(bytes, .badValue("body longer than its signature"))
        var hello = attHex(dbusHelloHex)
        hello[12] = 0x6e   // the fields array one byte longer than its fields
        dbusAssertRejects(hello)
        // An element that runs past the array's own length (a string in an `as` of 4 bytes).
        let a: [(UInt8, DBusValue)] = [(8, .signature("as"))]
        dbusAssertRejects(dbusRawMessage(fields: dbusCallFields + a, body: attHex("04000000 02000000 6869 00")),
                          .badValue("an array element past the array's length"))
    }

    // MARK: nesting

    func testVariantsNestAtMost64Deep() throws {
        func nested(_ n: Int) -> DBusValue { (0..<n).reduce(DBusValue.byte(1)) { v, _ in .variant(v) } }
        let ok = DBusMessage(kind: .methodCall, serial: 1, path: "/", member: "M", body: [nested(64)])
        XCTAssertEqual(try DBusMessage.decode(ok.encoded()), ok)
        let deep = DBusMessage(kind: .methodCall, serial: 1, path: "/", member: "M", body: [nested(65)])
        dbusAssertRejects(deep.encoded(), .badValue("containers nested more than 64 deep"))
    }

    /// "Use of variants may not cause a total message depth to be larger than 64, including other
    /// container types such as structures" (specification, marshaling of VARIANT). Each level here is
    /// a variant holding `a(v)`: 21 levels and the innermost variant are 64 containers, 22 are 67.
    /// (DBusDecoder once counted variants only, 23 < 64, so the 67-deep one decoded.)
    func testVariantsCountOtherContainersTowardsDepth64() throws {
        let ok = DBusMessage(kind: .methodCall, serial: 1, path: "/", member: "M", body: [nestedContainers(21)])
        XCTAssertEqual(try DBusMessage.decode(ok.encoded()), ok)
        let deep = DBusMessage(kind: .methodCall, serial: 1, path: "/", member: "M", body: [nestedContainers(22)])
        dbusAssertRejects(deep.encoded())
    }

    /// `levels` variants each holding `a(v)`, around a variant holding a byte: 3 × levels + 1 containers.
    private func nestedContainers(_ levels: Int) -> DBusValue {
        (0..<levels).reduce(DBusValue.variant(.byte(1))) { v, _ in .variant(.array(.structure([.variant]), [.structure([v])])) }
    }

    /// The deepest value the signature limits let through in each of 64 variants (32 arrays and
    /// 32 structures each): rejected or decoded, but no stack overflow. Without a limit on the
    /// total depth, decoding it recursed about 4,200 calls of DBusDecoder.read deep, past the 8 MiB
    /// stack in a debug build (SIGSEGV, ending the whole test run; an -O build needs 0.5-1 MiB).
    /// So it is only decoded once the 64-container limit above holds.
    func testDeepestNestingDoesNotCrash() {
        let probe = DBusMessage(kind: .methodCall, serial: 1, path: "/", member: "M", body: [nestedContainers(22)])
        if (try? DBusMessage.decode(probe.encoded())) != nil {
            return XCTFail("no total depth limit: decoding the deepest message would overflow the stack; not tried")
        }
        var v = DBusValue.byte(1)
        for _ in 0..<64 {
            for _ in 0..<32 { v = .structure([v]) }
            for _ in 0..<32 { v = .array(v.type, [v]) }
            v = .variant(v)
        }
        let m = DBusMessage(kind: .signal, serial: 1, path: "/", interface: "a.b", member: "S", body: [v])
        let bytes = m.encoded()
        XCTAssertLessThan(bytes.count, DBusMessage.maximumLength)
        if let back = try? DBusMessage.decode(bytes) { XCTAssertEqual(back, m) }
    }

    // MARK: EXTERNAL authentication

    func testAuthGreeting() {
        XCTAssertEqual(DBusAuthClient.greeting(uid: 0), [0] + Array("AUTH EXTERNAL 30\r\n".utf8))
        XCTAssertHex(hexString(DBusAuthClient.greeting(uid: 0)), "00 41555448 20 45585445524e414c 20 3330 0d0a")
        XCTAssertEqual(DBusAuthClient.greeting(uid: 1000), [0] + Array("AUTH EXTERNAL 31303030\r\n".utf8))
        XCTAssertEqual(DBusAuthClient.greeting(uid: .max), [0] + Array("AUTH EXTERNAL 34323934393637323935\r\n".utf8))
    }

    func testAuthOK() {
        let begin = Array("BEGIN\r\n".utf8)
        var auth = DBusAuthClient()
        XCTAssertEqual(auth.feed(Array("OK 1234deadbeef\r\n".utf8)), .authenticated(guid: "1234deadbeef", reply: begin, leftover: []))
        auth = DBusAuthClient()
        XCTAssertEqual(auth.feed(Array("OK 0a1b\r\n".utf8) + [0x6c, 0x02]), .authenticated(guid: "0a1b", reply: begin, leftover: [0x6c, 0x02]))
        auth = DBusAuthClient()
        XCTAssertEqual(auth.feed(Array("OK\r\n".utf8)), .authenticated(guid: "", reply: begin, leftover: []))
    }

    func testAuthSplitAcrossFeeds() {
        var auth = DBusAuthClient()
        XCTAssertEqual(auth.feed([]), .needMore)
        XCTAssertEqual(auth.feed(Array("O".utf8)), .needMore)
        XCTAssertEqual(auth.feed(Array("K 0123".utf8)), .needMore)
        XCTAssertEqual(auth.feed([0x0d]), .needMore)
        XCTAssertEqual(auth.feed([0x0a, 0x6c]), .authenticated(guid: "0123", reply: Array("BEGIN\r\n".utf8), leftover: [0x6c]))
    }

    func testAuthRejected() {
        for line in ["REJECTED EXTERNAL", "REJECTED", "ERROR \"no\"", "DATA 3030", "OKAY", "ok 1234", ""] {
            var auth = DBusAuthClient()
            guard case .rejected(let why) = auth.feed(Array((line + "\r\n").utf8)) else { XCTFail(line); continue }
            XCTAssertTrue(why.hasSuffix(line) || why.hasSuffix("(\(line))"), why)
        }
    }

    func testAuthLineOverflow() {
        var auth = DBusAuthClient()
        XCTAssertEqual(auth.feed(Array(repeating: UInt8(ascii: "x"), count: 16384)), .needMore)
        XCTAssertEqual(auth.feed([UInt8(ascii: "x")]), .rejected("no line end from the bus"))
        auth = DBusAuthClient()
        guard case .rejected = auth.feed(Array(repeating: UInt8(ascii: "x"), count: 20000) + [0x0d, 0x0a]) else { return XCTFail() }
    }
}
