import XCTest
@testable import BeaconKit

// MARK: helpers (shared with MQTTMalformedTests.swift and MQTTTopicTests.swift)

/// Every packet type, each with bytes worked out by hand from the MQTT 3.1.1 specification.
func mqttGolden() throws -> [(hex: String, packet: MQTTPacket)] {
    let will = try MQTTWill(topic: "b/s", message: Array("offline".utf8), qos: .atLeastOnce)
    let retainedWill = try MQTTWill(topic: "a/s", message: Array("0".utf8), qos: .atMostOnce, retain: true)
    return [
        // The specification's 3.1.2.10 example: "MQTT" level 4, flags 1100 1110 (user name,
        // password, will QoS 1, will, clean session), keep alive 10; then the payload in order:
        // client ID "pi", will topic "b/s", will message "offline", user name "u", password "p".
        ("10 22 0004 4d515454 04 ce 000a 0002 7069 0003 622f73 0007 6f66666c696e65 0001 75 0001 70",
         .connect(try MQTTConnect(clientID: "pi", keepAlive: 10, will: will, username: "u", password: Array("p".utf8)))),
        // What the observer sends: will retained at QoS 0 (0010 0110), keep alive 60, no user.
        ("10 17 0004 4d515454 04 26 003c 0003 6f6273 0003 612f73 0001 30",
         .connect(try MQTTConnect(clientID: "obs", keepAlive: 60, will: retainedWill))),
        ("10 0d 0004 4d515454 04 02 003c 0001 63", .connect(try MQTTConnect(clientID: "c", keepAlive: 60))),
        ("10 10 0004 4d515454 04 82 003c 0001 63 0001 75", .connect(try MQTTConnect(clientID: "c", keepAlive: 60, username: "u"))),
        ("10 0c 0004 4d515454 04 00 0000 0000", .connect(try MQTTConnect(clientID: "", cleanSession: false, keepAlive: 0))),
        ("20 02 00 00", .connAck(try MQTTConnAck(returnCode: .accepted))),
        ("20 02 01 00", .connAck(try MQTTConnAck(sessionPresent: true, returnCode: .accepted))),
        ("20 02 00 01", .connAck(try MQTTConnAck(returnCode: .unacceptableProtocolVersion))),
        ("20 02 00 02", .connAck(try MQTTConnAck(returnCode: .identifierRejected))),
        ("20 02 00 03", .connAck(try MQTTConnAck(returnCode: .serverUnavailable))),
        ("20 02 00 04", .connAck(try MQTTConnAck(returnCode: .badUserNameOrPassword))),
        ("20 02 00 05", .connAck(try MQTTConnAck(returnCode: .notAuthorized))),
        // Retained, QoS 0: 0011 0001; topic "a/b", payload "on".
        ("31 07 0003 612f62 6f6e", .publish(try MQTTPublish(topic: "a/b", payload: Array("on".utf8), retain: true))),
        ("30 05 0003 612f62", .publish(try MQTTPublish(topic: "a/b", payload: []))),
        // From the broker: DUP, QoS 1 (0011 1010), packet identifier 10, payload "x".
        ("3a 08 0003 612f62 000a 78", .publish(try MQTTPublish(topic: "a/b", payload: [0x78], qos: .atLeastOnce, packetID: 10, dup: true))),
        // QoS 2, retained (0011 0101), packet identifier 7, no payload.
        ("35 07 0003 612f62 0007", .publish(try MQTTPublish(topic: "a/b", payload: [], retain: true, qos: .exactlyOnce, packetID: 7))),
        ("40 02 000a", .pubAck(packetID: 10)),
        ("50 02 000a", .pubRec(packetID: 10)),
        ("62 02 000a", .pubRel(packetID: 10)),
        ("70 02 ffff", .pubComp(packetID: 0xffff)),
        // 1000 0010; packet identifier 10; "homeassistant/status" (20 bytes), requested QoS 0.
        ("82 19 000a 0014 686f6d65617373697374616e74 2f 737461747573 00",
         .subscribe(try MQTTSubscribe(packetID: 10, subscriptions: [MQTTSubscription("homeassistant/status")]))),
        // The specification's 3.8.3.1 example: "a/b" at QoS 1, "c/d" at QoS 2.
        ("82 0e 000a 0003 612f62 01 0003 632f64 02",
         .subscribe(try MQTTSubscribe(packetID: 10, subscriptions: [MQTTSubscription("a/b", qos: .atLeastOnce),
                                                                   MQTTSubscription("c/d", qos: .exactlyOnce)]))),
        ("90 03 000a 00", .subAck(try MQTTSubAck(packetID: 10, returnCodes: [.granted(.atMostOnce)]))),
        // The specification's 3.9.3 example: QoS 0, QoS 2, failure.
        ("90 05 000a 00 02 80", .subAck(try MQTTSubAck(packetID: 10, returnCodes: [.granted(.atMostOnce), .granted(.exactlyOnce), .failure]))),
        // The specification's 3.10.3 example: "a/b", "c/d"; 1010 0010.
        ("a2 0c 000a 0003 612f62 0003 632f64", .unsubscribe(try MQTTUnsubscribe(packetID: 10, topicFilters: ["a/b", "c/d"]))),
        ("a2 07 000b 0003 612f23", .unsubscribe(try MQTTUnsubscribe(packetID: 11, topicFilters: ["a/#"]))),
        ("b0 02 000b", .unsubAck(packetID: 11)),
        ("c0 00", .pingReq),
        ("d0 00", .pingResp),
        ("e0 00", .disconnect),
    ]
}

/// Decodes `bytes`, expecting a rejection (`expected` when given), never a crash.
func mqttAssertRejects(_ bytes: [UInt8], _ expected: MQTTWireError? = nil, file: StaticString = #filePath, line: UInt = #line) {
    do {
        let p = try MQTTPacket.decode(bytes)
        XCTFail("decoded \(hexString(bytes)) as \(p)", file: file, line: line)
    } catch {
        if let expected { XCTAssertEqual(error, expected, hexString(bytes), file: file, line: line) }
    }
}

final class MQTTCodecTests: XCTestCase {
    // MARK: golden bytes, both ways

    func testEveryPacketTypeEncodesToTheBytesByHand() throws {
        for (hex, packet) in try mqttGolden() {
            XCTAssertEqual(hexString(packet.encoded()), hexString(attHex(hex)), "\(packet)")
        }
    }

    func testEveryPacketTypeDecodesFromTheBytesByHand() throws {
        for (hex, packet) in try mqttGolden() {
            XCTAssertEqual(try MQTTPacket.decode(attHex(hex)), packet, hex)
        }
        let types = Set(try mqttGolden().map { $0.packet.type.rawValue })
        XCTAssertEqual(types, Set(1...14), "a packet of every type")
    }

    func testDecodedFieldsAndNames() throws {
        guard case .publish(let p) = try MQTTPacket.decode(attHex("3a 08 0003 612f62 000a 78")) else { return XCTFail() }
        XCTAssertEqual(p.topic, "a/b")
        XCTAssertEqual(p.qos, .atLeastOnce)
        XCTAssertEqual(p.packetID, 10)
        XCTAssertTrue(p.dup)
        XCTAssertFalse(p.retain)
        XCTAssertEqual(p.payload, [0x78])
        XCTAssertEqual(MQTTPacket.publish(p).type.description, "PUBLISH")
        XCTAssertEqual(MQTTPacketType.pingReq.description, "PINGREQ")
        XCTAssertEqual(MQTTPacketType.connAck.description, "CONNACK")
        XCTAssertEqual((0...5).map { MQTTConnectReturnCode(rawValue: $0)!.description },
                       ["connection accepted", "unacceptable protocol version", "identifier rejected",
                        "server unavailable", "bad user name or password", "not authorized"])
        XCTAssertNil(MQTTConnectReturnCode(rawValue: 6))
        XCTAssertEqual(MQTTSubAckReturnCode(rawValue: 0x80), .failure)
        XCTAssertNil(MQTTSubAckReturnCode(rawValue: 0x81))
        XCTAssertEqual(MQTTSubAckReturnCode.granted(.exactlyOnce).rawValue, 2)
    }

    func testStringsKeepTheirBytes() throws {
        // A BOM is not stripped (MQTT-1.5.3-3); a 4-byte sequence (U+1F600) is fine; topics are
        // not normalized (precomposed é in the packet stays precomposed).
        for topic in ["\u{FEFF}a", "b/\u{1F600}", "caf\u{E9}", "cafe\u{301}"] {
            let packet = MQTTPacket.publish(try MQTTPublish(topic: topic, payload: [1]))
            let bytes = packet.encoded()
            XCTAssertEqual(Array(bytes[4..<(4 + topic.utf8.count)]), Array(topic.utf8))
            guard case .publish(let back) = try MQTTPacket.decode(bytes) else { return XCTFail() }
            XCTAssertEqual(Array(back.topic.utf8), Array(topic.utf8))
        }
    }

    // MARK: Remaining Length (2.2.3)

    func testRemainingLengthBoundaries() throws {
        let cases: [(Int, String)] = [(0, "00"), (127, "7f"), (128, "8001"), (16383, "ff7f"), (16384, "808001"),
                                      (2_097_151, "ffff7f"), (2_097_152, "80808001"), (268_435_455, "ffffff7f")]
        for (value, hex) in cases {
            XCTAssertEqual(hexString(MQTTRemainingLength.encode(value)), hex, "\(value)")
            let decoded = try MQTTRemainingLength.decode(attHex(hex)[...])
            XCTAssertEqual(decoded?.value, value, hex)
            XCTAssertEqual(decoded?.count, hex.count / 2, hex)
            // Every prefix is "not yet".
            for n in 0..<(hex.count / 2) { XCTAssertNil(try MQTTRemainingLength.decode(attHex(hex)[0..<n]), hex) }
        }
        XCTAssertEqual(MQTTRemainingLength.maximum, 268_435_455)
        XCTAssertEqual(MQTTPacket.maximumSize, 268_435_460)
    }

    func testRemainingLengthOfAFifthByteIsAnError() {
        for hex in ["ffffffff01", "ffffffff", "80808080", "8080808001", "ffffff ff 7f"] {
            XCTAssertThrowsError(try MQTTRemainingLength.decode(attHex(hex)[...]), hex) {
                XCTAssertEqual($0 as? MQTTWireError, .remainingLengthTooLong)
            }
            mqttAssertRejects(attHex("30" + hex), .remainingLengthTooLong)
            var reader = MQTTPacketReader()
            XCTAssertThrowsError(try reader.feed(attHex("30" + hex)))
        }
        // Not minimal, but 3.1.1 does not forbid it: 0x80 0x00 is 0.
        XCTAssertEqual(try MQTTPacket.decode(attHex("c0 8000")), .pingReq)
    }

    func testPacketsAtEachRemainingLengthBoundary() throws {
        // PUBLISH with topic "t" (3 bytes) and a payload making the Remaining Length the boundary.
        for (length, header) in [(127, "30 7f"), (128, "30 8001"), (16383, "30 ff7f"), (16384, "30 808001"),
                                 (2_097_151, "30 ffff7f"), (2_097_152, "30 80808001")] {
            let payload = [UInt8](repeating: 0x5a, count: length - 3)
            let packet = MQTTPacket.publish(try MQTTPublish(topic: "t", payload: payload))
            let bytes = packet.encoded()
            XCTAssertEqual(Array(bytes.prefix(attHex(header).count)), attHex(header), "\(length)")
            XCTAssertEqual(bytes.count, attHex(header).count + length)
            XCTAssertEqual(try MQTTPacket.decode(bytes), packet)
            var reader = MQTTPacketReader(maximumPacketSize: MQTTPacket.maximumSize)
            XCTAssertEqual(try reader.feed(bytes), [packet])
        }
    }

    // MARK: what the initializers refuse (what the decoder would refuse of the broker)

    func testInitializersCheckWhatTheDecoderChecks() {
        func rejects(_ expected: MQTTWireError, line: UInt = #line, _ make: () throws -> Any) {
            XCTAssertThrowsError(try make(), line: line) { XCTAssertEqual($0 as? MQTTWireError, expected, line: line) }
        }
        let long = String(repeating: "x", count: 65_536)
        rejects(.wildcardInTopicName) { try MQTTPublish(topic: "a/+", payload: []) }
        rejects(.wildcardInTopicName) { try MQTTPublish(topic: "#", payload: []) }
        rejects(.emptyTopic) { try MQTTPublish(topic: "", payload: []) }
        rejects(.nulCharacter) { try MQTTPublish(topic: "a\u{0}b", payload: []) }
        rejects(.stringTooLong(65_536)) { try MQTTPublish(topic: long, payload: []) }
        rejects(.badPacketID) { try MQTTPublish(topic: "a", payload: [], packetID: 1) }
        rejects(.badPacketID) { try MQTTPublish(topic: "a", payload: [], qos: .atLeastOnce) }
        rejects(.badPacketID) { try MQTTPublish(topic: "a", payload: [], qos: .exactlyOnce, packetID: 0) }
        rejects(.badFlags(0x39)) { try MQTTPublish(topic: "a", payload: [], retain: true, dup: true) }
        rejects(.wildcardInTopicName) { try MQTTWill(topic: "a/#", message: []) }
        rejects(.stringTooLong(65_536)) { try MQTTWill(topic: "a", message: [UInt8](repeating: 0, count: 65_536)) }
        rejects(.badConnectFlags(0x42)) { try MQTTConnect(clientID: "c", keepAlive: 5, password: [1]) }
        rejects(.stringTooLong(65_536)) { try MQTTConnect(clientID: long, keepAlive: 5) }
        rejects(.nulCharacter) { try MQTTConnect(clientID: "c", keepAlive: 5, username: "\u{0}") }
        rejects(.stringTooLong(65_536)) { try MQTTConnect(clientID: "c", keepAlive: 5, username: "u", password: Array(long.utf8)) }
        rejects(.badConnAckFlags(1)) { try MQTTConnAck(sessionPresent: true, returnCode: .notAuthorized) }
        rejects(.noTopicFilters) { try MQTTSubscribe(packetID: 1, subscriptions: []) }
        rejects(.badPacketID) { try MQTTSubscribe(packetID: 0, subscriptions: [MQTTSubscription("a")]) }
        rejects(.badTopicFilter) { try MQTTSubscribe(packetID: 1, subscriptions: [MQTTSubscription("a/#/b")]) }
        rejects(.emptyTopic) { try MQTTSubscribe(packetID: 1, subscriptions: [MQTTSubscription("")]) }
        rejects(.noTopicFilters) { try MQTTSubAck(packetID: 1, returnCodes: []) }
        rejects(.badPacketID) { try MQTTSubAck(packetID: 0, returnCodes: [.failure]) }
        rejects(.noTopicFilters) { try MQTTUnsubscribe(packetID: 1, topicFilters: []) }
        rejects(.badTopicFilter) { try MQTTUnsubscribe(packetID: 1, topicFilters: ["a+"]) }
        rejects(.badPacketID) { try MQTTUnsubscribe(packetID: 0, topicFilters: ["a"]) }
    }

    func testAnAcknowledgementOfPacketIdentifierZeroEncodesAndIsRefused() {
        for packet in [MQTTPacket.pubAck(packetID: 0), .pubRec(packetID: 0), .pubRel(packetID: 0), .pubComp(packetID: 0), .unsubAck(packetID: 0)] {
            mqttAssertRejects(packet.encoded(), .badPacketID)
        }
    }
}
