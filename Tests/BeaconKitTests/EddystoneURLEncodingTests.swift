import XCTest
@testable import BeaconKit

/// Eddystone-URL encoding (SPEC §3): schemes, expansion codes, length, characters, and what a
/// received URL's text may contain.
final class EddystoneURLEncodingTests: XCTestCase {

    func enc(_ url: String) -> Result<[UInt8], EddystoneURLFrame.EncodingError> { EddystoneURLFrame.encode(url) }

    func testURLSchemes() {
        XCTAssertEqual(enc("http://www.a"), .success(bytes("00 61")))
        XCTAssertEqual(enc("https://www.a"), .success(bytes("01 61")))
        XCTAssertEqual(enc("http://a"), .success(bytes("02 61")))
        XCTAssertEqual(enc("https://a"), .success(bytes("03 61")))
        // The longest scheme wins: never "https://" followed by "www." spelled out.
        XCTAssertEqual(enc("https://www.example.com/"), .success(bytes("01 6578616d706c65 00")))
        XCTAssertEqual(enc("http://www.example.com/"), .success(bytes("00 6578616d706c65 00")))
        XCTAssertEqual(enc("http://www"), .success(bytes("02 777777")))
        for bad in ["HTTP://a", "Http://a", "HTTPS://www.a", "https:/a", "ftp://a", "a.com", "", " http://a", "www.a.com", "httpss://a"] {
            XCTAssertEqual(enc(bad), .failure(.scheme), bad)
        }
    }

    func testURLExpansionCodes() {
        let expansions = [".com/", ".org/", ".edu/", ".net/", ".info/", ".biz/", ".gov/",
                          ".com", ".org", ".edu", ".net", ".info", ".biz", ".gov"]
        for (code, text) in expansions.enumerated() {
            XCTAssertEqual(enc("http://a" + text), .success([0x02, 0x61, UInt8(code)]), text)
            // Decoded back to the same text.
            XCTAssertEqual(EddystoneURLFrame(encoded: [0x02, 0x61, UInt8(code)], power0m: 0).url, "http://a" + text)
        }
        // The slash form first; the bare form when no slash follows; in the middle too.
        XCTAssertEqual(enc("https://a.com/b.org"), .success(bytes("03 61 00 62 08")))
        XCTAssertEqual(enc("https://a.infox"), .success(bytes("03 61 0b 78")))
        XCTAssertEqual(enc("https://a.co"), .success(bytes("03 61 2e 63 6f")))
        XCTAssertEqual(enc("https://www.b.gov/x?y=1#z"), .success(bytes("01 62 06 78 3f 793d31 23 7a")))
    }

    func testURLLength() {
        // 17 encoded bytes after the scheme: accepted; 18: refused, with the count.
        XCTAssertEqual(enc("https://abcdefghijklmnopq"), .success([0x03] + Array("abcdefghijklmnopq".utf8)))
        XCTAssertEqual(enc("https://abcdefghijklmnopqr"), .failure(.tooLong(encodedBytes: 18)))
        // Expansions count one byte each.
        XCTAssertEqual(enc("https://www.abcdefghijklmnop.com/"), .success([0x01] + Array("abcdefghijklmnop".utf8) + [0x00]))
        XCTAssertEqual(enc("https://www.abcdefghijklmnopq.com/"), .failure(.tooLong(encodedBytes: 18)))
        XCTAssertEqual(enc("http://a.com/a.com/a.com/a.com/a.com/a.com/a.com/a.com/a.com/"), .failure(.tooLong(encodedBytes: 18)))
        XCTAssertEqual(enc("http://"), .success([0x02]))
    }

    func testURLCharacters() {
        XCTAssertEqual(enc("http://a b"), .failure(.character(offset: 8)))
        XCTAssertEqual(enc("https://caf\u{e9}.fr"), .failure(.character(offset: 11)))
        XCTAssertEqual(enc("https://\u{1F600}"), .failure(.character(offset: 8)))
        XCTAssertEqual(enc("http://a\tb"), .failure(.character(offset: 8)))
        XCTAssertEqual(enc("http://a\u{7f}"), .failure(.character(offset: 8)))
        XCTAssertEqual(enc("http://a\n"), .failure(.character(offset: 8)))
        XCTAssertEqual(enc("http://a\u{0}"), .failure(.character(offset: 8)))
        // Printable ASCII is all fine, quotes and backslashes included.
        XCTAssertEqual(enc("http://\"\\'~!"), .success([0x02, 0x22, 0x5c, 0x27, 0x7e, 0x21]))
    }

    func testDecodedURLTextIsSafe() {
        // Any nearby device can send these: reserved codes and bytes outside printable ASCII.
        let odd = EddystoneURLFrame(encoded: [0x03, 0x0e, 0x20, 0x22, 0x5c, 0x7f, 0xff, 0x07], power0m: 0)
        XCTAssertEqual(odd.url, "https://\\x0e\\x20\"\\\\x7f\\xff.com")
        XCTAssertFalse(odd.url.unicodeScalars.contains { $0.value < 0x20 || $0.value >= 0x7f })
        XCTAssertEqual(EddystoneURLFrame(encoded: [], power0m: 0).url, "")
        XCTAssertEqual(EddystoneURLFrame(encoded: [0x04, 0x61], power0m: 0).url, "")
    }
}
