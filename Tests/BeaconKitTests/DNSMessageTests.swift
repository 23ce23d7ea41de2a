import XCTest
@testable import BeaconKit

/// DNS messages against bytes worked out by hand from RFC 1035 §4.1, and malformed responses:
/// always an error, never a crash.
final class DNSMessageTests: XCTestCase {
    let broker = try! DNSName("broker.lan")

    /// ID 0x1234, RD, one question: broker.lan A IN (the name is 12 bytes from offset 12).
    let query = "1234 0100 0001 0000 0000 0000  06 62726f6b6572 03 6c616e 00  0001 0001"

    /// The answer to `query`: broker.lan CNAME mqtt.lan (3600 s; "mqtt" then a pointer to "lan"
    /// at 0x13), mqtt.lan (a pointer to 0x28, where the CNAME's data starts) A 192.168.1.10 (60 s).
    let response = "1234 8180 0001 0002 0000 0000  06 62726f6b6572 03 6c616e 00  0001 0001"
        + " c00c 0005 0001 00000e10 0007 04 6d717474 c013"
        + " c028 0001 0001 0000003c 0004 c0a8010a"

    func testQueryGoldenBytes() {
        XCTAssertEqual(DNSMessage.query(id: 0x1234, name: broker, type: .a), attHex(query))
        XCTAssertEqual(DNSMessage.query(id: 0xbeef, name: try DNSName("Pi.LOCAL."), type: .aaaa, recursionDesired: false),
                       attHex("beef 0000 0001 0000 0000 0000  02 7069 05 6c6f63616c 00  001c 0001"))
    }

    func testNamesThatCannotBeAskedFor() {
        XCTAssertThrowsError(try DNSName("")) { XCTAssertEqual($0 as? DNSError, .emptyLabel) }
        XCTAssertThrowsError(try DNSName("a..b")) { XCTAssertEqual($0 as? DNSError, .emptyLabel) }
        XCTAssertThrowsError(try DNSName(String(repeating: "x", count: 64) + ".lan")) { XCTAssertEqual($0 as? DNSError, .nameTooLong) }
        let long = Array(repeating: String(repeating: "x", count: 63), count: 4).joined(separator: ".")
        XCTAssertThrowsError(try DNSName(long)) { XCTAssertEqual($0 as? DNSError, .nameTooLong) }
        XCTAssertEqual(try DNSName("BROKER.lan.").description, "broker.lan")
    }

    func testResponseThroughACNAME() throws {
        let got = try DNSMessage.addresses(in: attHex(response), id: 0x1234, name: broker, type: .a)
        XCTAssertEqual(got, [DNSAddress(bytes: [192, 168, 1, 10], ttl: 60)])
        XCTAssertEqual(got.first?.description, "192.168.1.10")
        // Asked for AAAA, the same bytes are another question.
        XCTAssertThrowsError(try DNSMessage.addresses(in: attHex(response), id: 0x1234, name: broker, type: .aaaa)) {
            XCTAssertEqual($0 as? DNSError, .questionMismatch)
        }
    }

    func testAAAAAndNoData() throws {
        let aaaa = "0007 8180 0001 0001 0000 0000  06 62726f6b6572 03 6c616e 00 001c 0001"
            + " c00c 001c 0001 00000078 0010 20010db8000000000000000000000001"
        XCTAssertEqual(try DNSMessage.addresses(in: attHex(aaaa), id: 7, name: broker, type: .aaaa).map(\.description), ["2001:db8::1"])
        let none = "0007 8180 0001 0000 0000 0000  06 62726f6b6572 03 6c616e 00 001c 0001"
        XCTAssertEqual(try DNSMessage.addresses(in: attHex(none), id: 7, name: broker, type: .aaaa), [])
    }

    func testMulticastAnswerWithoutQuestionAndCacheFlush() throws {
        let mdns = "0001 8400 0000 0001 0000 0000  02 7069 05 6c6f63616c 00 0001 8001 00000078 0004 0a000005"
        let pi = try DNSName("pi.local")
        XCTAssertEqual(try DNSMessage.addresses(in: attHex(mdns), id: 1, name: pi, type: .a, multicast: true).map(\.description), ["10.0.0.5"])
        XCTAssertThrowsError(try DNSMessage.addresses(in: attHex(mdns), id: 1, name: pi, type: .a)) {
            XCTAssertEqual($0 as? DNSError, .questionMismatch)
        }
        // A record for another name is no answer.
        XCTAssertEqual(try DNSMessage.addresses(in: attHex(mdns), id: 1, name: try DNSName("pj.local"), type: .a, multicast: true), [])
    }

    func testRefusals() {
        func error(_ hex: String, id: UInt16 = 0x1234) -> DNSError? {
            do { _ = try DNSMessage.addresses(in: attHex(hex), id: id, name: broker, type: .a); return nil } catch { return error }
        }
        let question = " 06 62726f6b6572 03 6c616e 00  0001 0001"
        XCTAssertEqual(error(response, id: 0x1235), .wrongID(0x1234))
        XCTAssertEqual(error(query), .notAResponse)
        XCTAssertEqual(error("1234 8183 0001 0000 0000 0000" + question), .noSuchName)
        XCTAssertEqual(error("1234 8182 0001 0000 0000 0000" + question), .serverError(2))
        XCTAssertEqual(error("1234 8185 0001 0000 0000 0000" + question), .serverError(5))
        XCTAssertEqual(error("1234 8180 0002 0000 0000 0000" + question + question), .questionMismatch)
        XCTAssertEqual(error("1234 8180 0001 0001 0000 0000" + question + " c00c 0001 0001 0000003c 0005 c0a8010a00"), .badRecordLength)
        // A pointer to itself, one forwards, and two pointing at each other.
        XCTAssertEqual(error("1234 8180 0001 0001 0000 0000" + question + " c01c 0001 0001 0000003c 0004 c0a8010a"), .badName)
        XCTAssertEqual(error("1234 8180 0001 0001 0000 0000" + question + " c01e 0001 0001 0000003c 0004 c0a8010a"), .badName)
        XCTAssertEqual(error("1234 8180 0001 0001 0000 0000" + question + " 01 61 c01e c01c 0001 0001 0000003c 0004 c0a8010a"), .badName)
        // Labels with the reserved bits 01 and 10.
        XCTAssertEqual(error("1234 8180 0001 0000 0000 0000 46 62726f6b6572 03 6c616e 00 0001 0001"), .badName)
        XCTAssertEqual(error("1234 8180 0001 0000 0000 0000 86 62726f6b6572 03 6c616e 00 0001 0001"), .badName)
        // A CNAME loop ends (no address), not hangs.
        XCTAssertNil(error("1234 8180 0001 0001 0000 0000" + question + " c00c 0005 0001 0000003c 0002 c00c"))
        // TC and cut short: said as such.
        XCTAssertEqual(error("1234 8380 0001 0001 0000 0000" + question + " c00c 0001 0001 0000003c"), .truncatedByServer)
    }

    func testEveryTruncationIsAnError() {
        let bytes = attHex(response)
        for cut in 0..<bytes.count {
            XCTAssertThrowsError(try DNSMessage.addresses(in: Array(bytes[0..<cut]), id: 0x1234, name: broker, type: .a), "cut at \(cut)")
        }
    }

    /// Every byte replaced by every value: an answer or an error, never a crash or a hang.
    func testEveryByteMutated() {
        let bytes = attHex(response)
        for i in bytes.indices {
            for v in [0x00, 0x01, 0x3f, 0x40, 0x80, 0xc0, 0xc1, 0xff] as [UInt8] {
                var m = bytes
                m[i] = v
                _ = try? DNSMessage.addresses(in: m, id: 0x1234, name: broker, type: .a)
                _ = try? DNSMessage.addresses(in: m, id: 0x1234, name: broker, type: .a, multicast: true)
            }
        }
    }

    func testAddressText() {
        func v6(_ hex: String) -> String { DNSAddress(bytes: attHex(hex), ttl: 0).description }
        XCTAssertEqual(v6("00000000000000000000000000000001"), "::1")
        XCTAssertEqual(v6("00000000000000000000000000000000"), "::")
        XCTAssertEqual(v6("fe800000000000000000000000000000"), "fe80::")
        XCTAssertEqual(v6("20010db8000000010000000000000001"), "2001:db8:0:1::1")
        XCTAssertEqual(v6("20010db8000100010001000100010001"), "2001:db8:1:1:1:1:1:1")
        // The longest run of zeros; the first of equal runs (RFC 5952 §4.2.3).
        XCTAssertEqual(v6("20010db8000000000001000000000000"), "2001:db8:0:0:1::")
        XCTAssertEqual(v6("20010db8000000000001000000000001"), "2001:db8::1:0:0:1")
    }

    func testResolvConf() {
        let c = ResolvConf(parsing: "# by NetworkManager\nsearch lan home.arpa\nnameserver 192.168.1.1\nnameserver fe80::1%eth0 ; x\n"
            + "options edns0\nnameserver ::1\nnameserver 10.0.0.9\n")
        XCTAssertEqual(c, ResolvConf(nameservers: ["192.168.1.1", "fe80::1", "::1"], search: ["lan", "home.arpa"]))
        XCTAssertEqual(c.candidates(for: "broker"), ["broker.lan", "broker.home.arpa", "broker"])
        XCTAssertEqual(c.candidates(for: "broker.lan"), ["broker.lan"])
        XCTAssertEqual(c.candidates(for: "broker."), ["broker."])
        XCTAssertEqual(ResolvConf(parsing: "search a\ndomain b\n").search, ["b"])
        XCTAssertTrue(isMulticastDNSName("homeassistant.local"))
        XCTAssertTrue(isMulticastDNSName("HA.Local."))
        XCTAssertFalse(isMulticastDNSName("local"))
        XCTAssertFalse(isMulticastDNSName("broker.lan"))
    }
}
