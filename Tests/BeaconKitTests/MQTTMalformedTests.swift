import XCTest
@testable import BeaconKit

/// The reader over a stream, and malformed input from the broker: always an error, never a crash.
final class MQTTMalformedTests: XCTestCase {
    // MARK: the reader

    func testReaderSplitAtEveryBytePosition() throws {
        let golden = try mqttGolden()
        let stream = golden.flatMap { attHex($0.hex) }
        let packets = golden.map(\.packet)
        for cut in 0...stream.count {
            var reader = MQTTPacketReader()
            let a = try reader.feed(stream[0..<cut])
            let b = try reader.feed(stream[cut...])
            XCTAssertEqual(a + b, packets, "cut at \(cut)")
            XCTAssertEqual(reader.bufferedCount, 0)
        }
        for (hex, packet) in golden {
            let bytes = attHex(hex)
            for cut in 0...bytes.count {
                var reader = MQTTPacketReader()
                XCTAssertEqual(try reader.feed(bytes[0..<cut]), cut == bytes.count ? [packet] : [], "\(hex) cut at \(cut)")
                XCTAssertEqual(try reader.feed(bytes[cut...]), cut == bytes.count ? [] : [packet], "\(hex) cut at \(cut)")
            }
        }
    }

    func testReaderByteByByteAndTwoPacketsInOneChunk() throws {
        let golden = try mqttGolden()
        var reader = MQTTPacketReader()
        var got: [MQTTPacket] = []
        for b in golden.flatMap({ attHex($0.hex) }) { got += try reader.feed([b]) }
        XCTAssertEqual(got, golden.map(\.packet))

        var two = MQTTPacketReader()
        let chunk = attHex("20 02 00 00 90 03 000a 00 31 07 0003 612f62 6f6e d0")
        XCTAssertEqual(try two.next(), nil)
        two.append(chunk)
        XCTAssertEqual(try two.next(), .connAck(try MQTTConnAck(returnCode: .accepted)))
        XCTAssertEqual(try two.next(), .subAck(try MQTTSubAck(packetID: 10, returnCodes: [.granted(.atMostOnce)])))
        XCTAssertEqual(try two.next(), .publish(try MQTTPublish(topic: "a/b", payload: Array("on".utf8), retain: true)))
        XCTAssertEqual(try two.next(), nil)
        XCTAssertEqual(two.bufferedCount, 1)
        XCTAssertEqual(try two.feed([0x00]), [.pingResp])
    }

    func testReaderCapsThePacketSizeBeforeKeepingTheBody() throws {
        // 256 KiB by default, the fixed header counted: a Remaining Length of 262,144 is over.
        XCTAssertEqual(MQTTPacketReader.defaultMaximumPacketSize, 262_144)
        var reader = MQTTPacketReader()
        XCTAssertThrowsError(try reader.feed(attHex("30 808010"))) { XCTAssertEqual($0 as? MQTTWireError, .tooLarge(262_148)) }
        XCTAssertEqual(reader.failure, .tooLarge(262_148))
        XCTAssertEqual(reader.bufferedCount, 0)
        // Once failed, it stays failed and keeps nothing.
        reader.append([UInt8](repeating: 0, count: 1000))
        XCTAssertEqual(reader.bufferedCount, 0)
        XCTAssertThrowsError(try reader.next()) { XCTAssertEqual($0 as? MQTTWireError, .tooLarge(262_148)) }
        // The largest Remaining Length announced by a broker: refused at once.
        var huge = MQTTPacketReader()
        XCTAssertThrowsError(try huge.feed(attHex("30 ffffff7f"))) { XCTAssertEqual($0 as? MQTTWireError, .tooLarge(268_435_460)) }

        // A maximum of 9: a 9-byte packet is read, a 10-byte one refused.
        var small = MQTTPacketReader(maximumPacketSize: 9)
        XCTAssertEqual(try small.feed(attHex("31 07 0003 612f62 6f6e")), [.publish(try MQTTPublish(topic: "a/b", payload: Array("on".utf8), retain: true))])
        XCTAssertThrowsError(try small.feed(attHex("31 08"))) { XCTAssertEqual($0 as? MQTTWireError, .tooLarge(10)) }
        // Just below the default maximum is fine.
        let payload = [UInt8](repeating: 1, count: 262_144 - 4 - 5)
        let big = MQTTPacket.publish(try MQTTPublish(topic: "a/b", payload: payload))
        XCTAssertEqual(big.encoded().count, 262_144)
        var fits = MQTTPacketReader()
        XCTAssertEqual(try fits.feed(big.encoded()), [big])
    }

    func testReaderGivesThePacketsBeforeAnErrorThroughNext() throws {
        var reader = MQTTPacketReader()
        reader.append(attHex("d0 00 f0 00 d0 00"))
        XCTAssertEqual(try reader.next(), .pingResp)
        XCTAssertThrowsError(try reader.next()) { XCTAssertEqual($0 as? MQTTWireError, .reservedPacketType(15)) }
        XCTAssertThrowsError(try reader.next()) { XCTAssertEqual($0 as? MQTTWireError, .reservedPacketType(15)) }
    }

    // MARK: truncation and damage

    func testTruncatedAtEveryPrefixAndTrailingBytes() throws {
        for (hex, _) in try mqttGolden() {
            let bytes = attHex(hex)
            for n in 0..<bytes.count { mqttAssertRejects(Array(bytes[0..<n]), .truncated) }
            mqttAssertRejects(bytes + [0], .trailingBytes(1))
        }
    }

    func testFieldsLongerThanThePacket() {
        mqttAssertRejects(attHex("40 01 00"), .truncated)                 // PUBACK, half an identifier
        mqttAssertRejects(attHex("20 01 00"), .truncated)                 // CONNACK without a return code
        mqttAssertRejects(attHex("30 04 0005 6162"), .truncated)          // topic of 5 in 2
        mqttAssertRejects(attHex("30 01 00"), .truncated)                 // half a topic length
        mqttAssertRejects(attHex("32 05 0003 612f62"), .truncated)        // QoS 1 without its identifier
        mqttAssertRejects(attHex("82 05 000a 0003 61"), .truncated)       // SUBSCRIBE filter cut
        mqttAssertRejects(attHex("82 07 000a 0003 612f62"), .truncated)   // SUBSCRIBE without requested QoS
        mqttAssertRejects(attHex("a2 04 000a 0005"), .truncated)          // UNSUBSCRIBE filter cut
        mqttAssertRejects(attHex("10 0a 0004 4d515454 04 02 003c"), .truncated)      // CONNECT without client ID
        mqttAssertRejects(attHex("10 0f 0004 4d515454 04 06 003c 0001 63 0000"), .truncated)  // will without message
        mqttAssertRejects(attHex("10 0f 0004 4d515454 04 c2 003c 0001 63 0000"), .truncated)  // user, no password
        mqttAssertRejects(attHex("10 03 0004 4d"), .truncated)
    }

    func testTrailingBytesInsideThePacket() {
        mqttAssertRejects(attHex("40 03 000a 00"), .trailingBytes(1))
        mqttAssertRejects(attHex("20 03 00 00 00"), .trailingBytes(1))
        mqttAssertRejects(attHex("c0 01 00"), .trailingBytes(1))
        mqttAssertRejects(attHex("e0 02 0000"), .trailingBytes(2))
        mqttAssertRejects(attHex("10 0e 0004 4d515454 04 02 003c 0001 63 00"), .trailingBytes(1))
    }

    func testReservedTypesAndFixedFlags() {
        mqttAssertRejects(attHex("00 00"), .reservedPacketType(0))
        mqttAssertRejects(attHex("f0 00"), .reservedPacketType(15))
        mqttAssertRejects(attHex("0f"), .reservedPacketType(0))   // known from the first byte alone
        var reader = MQTTPacketReader()
        XCTAssertThrowsError(try reader.feed([0xf0])) { XCTAssertEqual($0 as? MQTTWireError, .reservedPacketType(15)) }
        // SUBSCRIBE, UNSUBSCRIBE and PUBREL take 0010, the others (not PUBLISH) 0000; checked on
        // the first byte, before the rest arrives.
        for type: UInt8 in [1, 2, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14] {
            let fixed: UInt8 = [6, 8, 10].contains(type) ? 2 : 0
            for flags: UInt8 in 0...15 where flags != fixed {
                mqttAssertRejects([type << 4 | flags], .badFlags(type << 4 | flags))
                mqttAssertRejects([type << 4 | flags, 0x02, 0x00, 0x0a], .badFlags(type << 4 | flags))
            }
        }
        mqttAssertRejects(attHex("80 02 000a"), .badFlags(0x80))   // SUBSCRIBE with 0000
        mqttAssertRejects(attHex("60 02 000a"), .badFlags(0x60))   // PUBREL with 0000
    }

    func testPublishFlags() {
        mqttAssertRejects(attHex("36 07 0003 612f62 0001"), .badQoS(3))
        mqttAssertRejects(attHex("3f 07 0003 612f62 0001"), .badQoS(3))
        mqttAssertRejects(attHex("38 05 0003 612f62"), .badFlags(0x38))   // DUP at QoS 0
        mqttAssertRejects(attHex("39 05 0003 612f62"), .badFlags(0x39))
        mqttAssertRejects(attHex("32 07 0003 612f62 0000"), .badPacketID)
        mqttAssertRejects(attHex("34 07 0003 612f62 0000"), .badPacketID)
    }

    func testPublishTopicNames() {
        mqttAssertRejects(attHex("30 05 0003 612f2b"), .wildcardInTopicName)   // "a/+"
        mqttAssertRejects(attHex("30 03 0001 23"), .wildcardInTopicName)       // "#"
        mqttAssertRejects(attHex("30 04 0002 2b61"), .wildcardInTopicName)     // "+a"
        mqttAssertRejects(attHex("30 02 0000"), .emptyTopic)
        mqttAssertRejects(attHex("30 03 0000 41"), .emptyTopic)
        mqttAssertRejects(attHex("30 05 0003 610062"), .nulCharacter)
        mqttAssertRejects(attHex("10 12 0004 4d515454 04 06 003c 0001 63 0001 2b 0000"), .wildcardInTopicName)  // will topic
    }

    func testInvalidUTF8Anywhere() {
        // A lone continuation byte, a start byte with nothing after it, 0xFF, an overlong NUL and
        // an overlong '/', a surrogate (U+D800), past U+10FFFF, a 3-byte sequence cut short.
        for bad in ["80", "c3", "ff", "c080", "c0af", "e080af", "eda080", "f4908080", "f8888080 80", "e282", "61e282"] {
            let s = attHex(bad)
            mqttAssertRejects(attHex("30 \(n(2 + s.count)) 00\(n(s.count)) \(bad)"), .invalidUTF8)                   // PUBLISH topic
            mqttAssertRejects(attHex("82 \(n(5 + s.count)) 0001 00\(n(s.count)) \(bad) 00"), .invalidUTF8)          // SUBSCRIBE filter
            mqttAssertRejects(attHex("a2 \(n(4 + s.count)) 0001 00\(n(s.count)) \(bad)"), .invalidUTF8)             // UNSUBSCRIBE filter
            mqttAssertRejects(attHex("10 \(n(12 + s.count)) 0004 4d515454 04 02 003c 00\(n(s.count)) \(bad)"), .invalidUTF8)  // client ID
            mqttAssertRejects(attHex("10 \(n(15 + s.count)) 0004 4d515454 04 82 003c 0001 63 00\(n(s.count)) \(bad)"), .invalidUTF8)  // user name
        }
        // Well-formed: U+0080, U+07FF, U+0800, U+FFFD, U+10FFFF, a BOM.
        for good in ["c280", "dfbf", "e0a080", "efbfbd", "f48fbfbf", "efbbbf"] {
            let s = attHex(good)
            XCTAssertNoThrow(try MQTTPacket.decode(attHex("30 \(n(2 + s.count)) 00\(n(s.count)) \(good)")), good)
        }
    }

    func testConnectFields() {
        let head = "0004 4d515454 04"
        mqttAssertRejects(attHex("10 0d 0004 4d515455 04 02 003c 0001 63"), .badProtocol(name: "MQTU", level: 4))
        mqttAssertRejects(attHex("10 0d 0004 4d515454 05 02 003c 0001 63"), .badProtocol(name: "MQTT", level: 5))
        mqttAssertRejects(attHex("10 0f 0006 4d5149736470 03 02 003c 0001 63"), .badProtocol(name: "MQIsdp", level: 3))
        mqttAssertRejects(attHex("10 0d \(head) 03 003c 0001 63"), .badConnectFlags(0x03))   // reserved bit
        mqttAssertRejects(attHex("10 0d \(head) 1e 003c 0001 63"), .badConnectFlags(0x1e))   // will QoS 3
        mqttAssertRejects(attHex("10 0d \(head) 22 003c 0001 63"), .badConnectFlags(0x22))   // will retain, no will
        mqttAssertRejects(attHex("10 0d \(head) 0a 003c 0001 63"), .badConnectFlags(0x0a))   // will QoS, no will
        mqttAssertRejects(attHex("10 10 \(head) 42 003c 0001 63 0001 70"), .badConnectFlags(0x42))   // password, no user
    }

    func testConnAckSubAckAndSubscribeFields() {
        mqttAssertRejects(attHex("20 02 02 00"), .badConnAckFlags(2))
        mqttAssertRejects(attHex("20 02 80 00"), .badConnAckFlags(0x80))
        mqttAssertRejects(attHex("20 02 01 05"), .badConnAckFlags(1))   // session present with a refusal
        mqttAssertRejects(attHex("20 02 00 06"), .badReturnCode(6))
        mqttAssertRejects(attHex("20 02 00 ff"), .badReturnCode(0xff))
        mqttAssertRejects(attHex("90 03 000a 03"), .badReturnCode(3))
        mqttAssertRejects(attHex("90 04 000a 00 81"), .badReturnCode(0x81))
        mqttAssertRejects(attHex("90 02 000a"), .noTopicFilters)
        mqttAssertRejects(attHex("90 03 0000 00"), .badPacketID)
        mqttAssertRejects(attHex("82 02 000a"), .noTopicFilters)
        mqttAssertRejects(attHex("82 06 0000 0001 61 00"), .badPacketID)
        mqttAssertRejects(attHex("82 06 000a 0001 61 03"), .badQoS(3))
        mqttAssertRejects(attHex("82 06 000a 0001 61 04"), .badQoS(4))   // reserved bits of the requested QoS
        mqttAssertRejects(attHex("82 07 000a 0002 6123 00"), .badTopicFilter)   // "a#"
        mqttAssertRejects(attHex("82 08 000a 0003 232f61 00"), .badTopicFilter) // "#/a"
        mqttAssertRejects(attHex("82 05 000a 0000 00"), .emptyTopic)
        mqttAssertRejects(attHex("a2 02 000a"), .noTopicFilters)
        mqttAssertRejects(attHex("a2 05 000a 0001 00"), .nulCharacter)
    }

    /// Every byte of every valid packet replaced by a few values, and every input of two bytes:
    /// each decodes or throws, and what decodes encodes back to itself.
    func testDamagedPacketsNeverCrash() throws {
        func check(_ bytes: [UInt8]) {
            guard let p = try? MQTTPacket.decode(bytes) else { return }
            XCTAssertEqual(try? MQTTPacket.decode(p.encoded()), p, hexString(bytes))
        }
        for (hex, _) in try mqttGolden() {
            let bytes = attHex(hex)
            for i in bytes.indices {
                for v: UInt8 in [0x00, 0x01, 0x23, 0x2b, 0x7f, 0x80, 0xc0, 0xff, bytes[i] ^ 0x01, bytes[i] ^ 0x80, bytes[i] &+ 1, bytes[i] &- 1] {
                    var damaged = bytes
                    damaged[i] = v
                    check(damaged)
                    var reader = MQTTPacketReader()
                    _ = try? reader.feed(damaged)
                }
            }
        }
        for a in 0...255 { for b in 0...255 { check([UInt8(a), UInt8(b)]) } }
    }
}

/// Two hex digits for a length under 256.
private func n(_ count: Int) -> String { hexString([UInt8(count)]) }
