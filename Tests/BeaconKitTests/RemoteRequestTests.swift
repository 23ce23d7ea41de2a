import XCTest
@testable import BeaconKit

/// The change-from-afar request file (issue 32): what the monitor writes, what the daemon reads,
/// and the TOML literal each value becomes.
final class RemoteRequestTests: XCTestCase {
    func testRoundTripEveryKind() {
        let requests = [RemoteRequest(.set(.power, "-40"), origin: "mqtt altbeacond/pi1/beacon/set/power"),
                        RemoteRequest(.set(.uuid, "2f234454-cf6d-4a0f-adf2-f4911ba9ffa6")),
                        RemoteRequest(.set(.frameEddystoneTLM, "ON"), origin: "x"),
                        RemoteRequest(.identify, origin: "mqtt altbeacond/pi1/beacon/set/identify"),
                        RemoteRequest(.restart)]
        for r in requests {
            XCTAssertEqual(try RemoteRequest.decode(r.encoded).get(), r, r.summary)
        }
        XCTAssertEqual(String(decoding: requests[0].encoded, as: UTF8.self),
                       "set power -40\norigin mqtt altbeacond/pi1/beacon/set/power\n")
    }

    func testDecodeRefusesWhatIsNotARequest() {
        XCTAssertEqual(RemoteRequest.decode([]), .failure(.malformed("empty")))
        XCTAssertEqual(RemoteRequest.decode(Array("set colour red\n".utf8)), .failure(.unknownSetting("colour")))
        XCTAssertEqual(RemoteRequest.decode(Array("identify now\n".utf8)), .failure(.malformed("\"identify now\"")))
        XCTAssertEqual(RemoteRequest.decode(Array("reboot\n".utf8)), .failure(.malformed("\"reboot\"")))
        XCTAssertEqual(RemoteRequest.decode([UInt8](repeating: 0x61, count: RemoteRequest.maximumBytes + 1)),
                       .failure(.malformed("more than 512 bytes")))
        // A value with spaces stays one value (the third word takes the rest of the line).
        XCTAssertEqual(try RemoteRequest.decode(Array("set uuid a b\n".utf8)).get().action, .set(.uuid, "a b"))
    }

    func testIntegerLiterals() {
        XCTAssertEqual(RemoteSetting.power.literal("-40"), .success("-40"))
        XCTAssertEqual(RemoteSetting.power.literal(" -45.0\r\n"), .success("-45"), "Home Assistant's number sends floats")
        XCTAssertEqual(RemoteSetting.major.literal("+7"), .success("7"))
        XCTAssertEqual(RemoteSetting.intervalMs.literal("250"), .success("250"))
        for bad in ["", "-", "4.5", "0x10", "1_000", "1e3", "1234567", "loud", "--4"] {
            XCTAssertEqual(RemoteSetting.power.literal(bad), .failure(.badValue(.power, bad)), bad)
        }
        // Out of range is not the literal's to judge: the config's validation says it, with FILE:LINE:COL.
        XCTAssertEqual(RemoteSetting.power.literal("5"), .success("5"))
    }

    func testBooleanAndStringLiterals() {
        for on in ["ON", "on", "true", "1"] { XCTAssertEqual(RemoteSetting.advertising.literal(on), .success("true")) }
        for off in ["OFF", "Off", "false", "0"] { XCTAssertEqual(RemoteSetting.frameIBeacon.literal(off), .success("false")) }
        XCTAssertEqual(RemoteSetting.advertising.literal("maybe"), .failure(.badValue(.advertising, "maybe")))
        XCTAssertEqual(RemoteSetting.uuid.literal("a\"b\\c"), .success("\"a\\\"b\\\\c\""), "quotes and backslashes escaped")
        XCTAssertEqual(RemoteSetting.uuid.literal("a\u{1}b"), .failure(.badValue(.uuid, "a\u{1}b")), "no control characters into the file")
        XCTAssertEqual(RemoteSetting.uuid.literal(String(repeating: "a", count: 65)), .failure(.badValue(.uuid, String(repeating: "a", count: 65))))
    }

    func testConfigKeysAndIdentity() {
        XCTAssertEqual(RemoteSetting.intervalMs.configKey.table, "bluetooth")
        XCTAssertEqual(RemoteSetting.frameIBeacon.configKey.key, "enabled")
        XCTAssertEqual(RemoteSetting.allCases.filter(\.isIdentity), [.uuid, .major, .minor])
    }

    func testMessagesArePrintable() {
        let e = RemoteRequestError.badValue(.power, "lo\u{7}ud")
        XCTAssertEqual(e.description, "power: \"lo\\x07ud\" is not a whole number", "escaped as every text for the log")
        // a right-to-left override (it would reorder the rest of the line) escaped too; 80 scalars at most
        XCTAssertEqual(RemoteRequestError.badValue(.power, "a\u{202E}b").description, "power: \"a\\u{202e}b\" is not a whole number")
        let long = RemoteRequestError.badValue(.power, String(repeating: "x", count: 100)).description
        XCTAssertTrue(long.contains(String(repeating: "x", count: 80) + "…\""), long)
        XCTAssertTrue(RemoteRequestError.unknownSetting("x").description.contains("power, interval_ms, advertising"))
    }
}
