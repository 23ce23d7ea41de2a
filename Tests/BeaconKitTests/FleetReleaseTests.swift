import XCTest
@testable import BeaconKit

/// Issue 39: the fleet's release message, and the request the monitor writes for root.
final class FleetReleaseTests: XCTestCase {
    static let sha = String(repeating: "0123456789abcdef", count: 4)
    static let message = """
        {"version":"1.3.0","url":"https://host/altbeacond-1.3.0.raucb",\
        "release_url":"https://host/notes","install":false,"rollout":25,"halt_after":2,"downgrade":false}
        """
    static let release = FleetRelease(version: "1.3.0", url: "https://host/altbeacond-1.3.0.raucb",
                                      releaseURL: "https://host/notes", install: false, rollout: 25, haltAfter: 2)

    func parse(_ text: String) -> Result<FleetRelease, FleetReleaseError> { FleetRelease.parse(Array(text.utf8)) }

    /// The message with `key`'s member replaced by `value` (JSON), or removed (nil).
    func with(_ key: String, _ value: String?) -> String {
        var members = ["\"version\":\"1.3.0\"", "\"url\":\"https://host/altbeacond-1.3.0.raucb\""]
        members.removeAll { $0.hasPrefix("\"\(key)\":") }
        if let value { members.append("\"\(key)\":\(value)") }
        return "{" + members.joined(separator: ",") + "}"
    }

    func testTheMessageOfTheContract() {
        XCTAssertEqual(parse(Self.message), .success(Self.release))
        XCTAssertEqual(parse(with("future", "[1]")), .success(FleetRelease(version: "1.3.0", url: "https://host/altbeacond-1.3.0.raucb")),
                       "release_url, install, rollout, halt_after and downgrade may be absent; unknown members ignored")
        // Issue 49: an earlier format's size and sha256 are ignored, whatever they say (never checked).
        XCTAssertEqual(parse(with("size", "\"x\"").dropLast() + ",\"sha256\":\"\(Self.sha)\"}"),
                       .success(FleetRelease(version: "1.3.0", url: "https://host/altbeacond-1.3.0.raucb")))
        XCTAssertEqual(try parse(with("rollout", "null")).get().rollout, 100)
        XCTAssertEqual(try parse(with("halt_after", "null")).get().haltAfter, 1, "the first rollback stops it")
        XCTAssertEqual(try parse(with("downgrade", "true")).get().downgrade, true)
        XCTAssertEqual(try parse(with("install", "true")).get().install, true)
        XCTAssertEqual(try parse(with("release_url", "null")).get().releaseURL, nil)
    }

    func testWhatIsRefusedAndWhy() {
        let url = "\"url\" must be an http:// or https:// URL without spaces, quotes or backslashes"
        for (text, why) in [
            ("[]", "not a JSON object"),
            ("{\"version\"", "not a JSON object"),
            (with("version", nil), "no \"version\" string"),
            (with("version", "13"), "no \"version\" string"),
            (with("version", "\"1.3.0 beta\""), "\"version\" must be 1 to 64 of 0-9 A-Z a-z . + ~ -"),
            (with("version", "\"\""), "\"version\" must be 1 to 64 of 0-9 A-Z a-z . + ~ -"),
            (with("version", "\"" + String(repeating: "1", count: 65) + "\""), "\"version\" must be 1 to 64 of 0-9 A-Z a-z . + ~ -"),
            (with("url", "\"ftp://host/x.raucb\""), url),
            (with("url", "\"file:///tmp/x.raucb\""), url),
            (with("url", "\"https://\""), url),
            (with("url", "\"https:///x\""), url),
            (with("url", "\"https://host/a b\""), url),
            (with("url", "\"https://host/a\\nb\""), url),
            (with("url", "\"https://host/a'b\""), url),
            (with("url", "\"https://host/a\\\"b\""), url),
            (with("url", "\"https://host/a\\\\b\""), url),
            (with("url", "\"https://höst/a\""), url),
            (with("rollout", "0"), "\"rollout\" must be a whole number from 1 to 100"),
            (with("rollout", "101"), "\"rollout\" must be a whole number from 1 to 100"),
            (with("rollout", "\"50%\""), "\"rollout\" must be a whole number from 1 to 100"),
            (with("rollout", "12.5"), "\"rollout\" must be a whole number from 1 to 100"),
            (with("halt_after", "0"), "\"halt_after\" must be a whole number from 1 to 100000"),
            (with("downgrade", "1"), "\"downgrade\" is not true or false"),
            (with("release_url", "\"javascript:alert(1)\""),
             "\"release_url\" must be an http:// or https:// URL without spaces, quotes or backslashes"),
            (with("release_url", "1"), "\"release_url\" is not a string"),
            (with("install", "\"yes\""), "\"install\" is not true or false"),
        ] {
            XCTAssertEqual(parse(text), .failure(.invalid(why)), text)
        }
        XCTAssertEqual(parse(with("rollout", "1")).map(\.rollout), .success(1))
        XCTAssertEqual(parse(with("version", "\"1.3.0+git~rc-1\"")).map(\.version), .success("1.3.0+git~rc-1"))
        XCTAssertEqual(parse(with("url", "\"http://10.0.0.2:8080/a.raucb?x=1\"")).map(\.url), .success("http://10.0.0.2:8080/a.raucb?x=1"))
        XCTAssertEqual(FleetRelease.parse(Array(repeating: 0x20, count: FleetRelease.maximumPayload + 1)),
                       .failure(.invalid("more than 4096 bytes")))
        XCTAssertEqual("\(FleetReleaseError.invalid("x"))", "not a release: x")
    }

    func testTheRequestFile() {
        let r = UpdateRequest(release: Self.release, origin: .homeAssistant, time: 1_764_244_000)
        XCTAssertEqual(r.encoded.map { String(decoding: $0, as: UTF8.self) }, """
            version=1.3.0
            url=https://host/altbeacond-1.3.0.raucb
            origin=mqtt:homeassistant
            time=1764244000

            """)
        var downgrade = Self.release
        downgrade.downgrade = true
        XCTAssertEqual(UpdateRequest(release: downgrade, origin: .fleet, time: 1).encoded.map { String(decoding: $0, as: UTF8.self) },
                       "version=1.3.0\nurl=https://host/altbeacond-1.3.0.raucb\norigin=mqtt:fleet\ntime=1\ndowngrade=yes\n",
                       "the owner's word relayed; root checks the bundle's own version")
        XCTAssertEqual(UpdateRequest.Origin.fleet.rawValue, "mqtt:fleet")
        var bad = Self.release
        bad.url = "https://host/x\nversion=9.9.9"
        XCTAssertNil(UpdateRequest(release: bad, origin: .fleet, time: 1).encoded, "nothing that would add a line")
    }
}
