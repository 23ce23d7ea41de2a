import XCTest
@testable import BeaconKit

/// SPEC §2: keys are compared by their exact scalar sequence, never by canonical equivalence,
/// and no document within the size limit takes more than linear time.
final class ConfigKeyEqualityTests: XCTestCase {
    func testCanonicallyEquivalentKeysAreDifferentKeys() throws {
        // U+00E9 and e + U+0301; "K" and U+212A KELVIN SIGN (which Swift's String == equates).
        XCTAssertTrue("\u{E9}" == "e\u{301}" && "K" == "\u{212A}", "premise: String == is canonical")
        let t = try XCTUnwrap(toml("\"\u{E9}\" = 1\n\"e\u{301}\" = 2\nK = 3\n\"\u{212A}\" = 4\n"))
        XCTAssertEqual(t.count, 4)
        XCTAssertEqual(t.keys.map { Array($0.unicodeScalars) },
                       [["\u{E9}"], ["e", "\u{301}"], ["K"], ["\u{212A}"]])
        XCTAssertEqual(t.entry("e\u{301}")?.value, .integer(2))
        XCTAssertEqual(t.entry("\u{E9}")?.value, .integer(1))
        XCTAssertEqual(t.entry("\u{212A}")?.value, .integer(4))
        // Tables too, and dotted keys under them.
        let h = try XCTUnwrap(toml("[\"\u{E9}\"]\na = 1\n[\"e\u{301}\"]\na = 2\n"))
        XCTAssertEqual(h.count, 2)
        let d = try XCTUnwrap(toml("x.\"\u{E9}\" = 1\nx.\"e\u{301}\" = 2\n"))
        guard case .table(let x) = d["x"] else { return XCTFail() }
        XCTAssertEqual(x.count, 2)
        // The same scalars twice are still a duplicate.
        XCTAssertEqual(tomlError("\"e\u{301}\" = 1\n\"e\u{301}\" = 2\n"),
                       "t.toml:2:1: duplicate key `\"e\u{301}\"` (first defined on line 1)")
        XCTAssertEqual(tomlError("\"\u{212A}\" = 1\n'\u{212A}' = 2\n").prefix(21), "t.toml:2:1: duplicate")
    }

    func testSchemaNamesMatchOnlyTheExactScalars() {
        // A KELVIN SIGN is not a K, so this is not [bluetooth] and not a known table.
        XCTAssertTrue(configError(minimalBeacon + "[\"\u{212A}\"]").hasPrefix("config.toml:6:2: unknown table"))
        XCTAssertTrue(configError(minimalBeacon + "\"m\u{E1}jor\" = 1").hasPrefix("config.toml:6:1: unknown key"))
    }

    /// Long runs of combining marks with different combining classes make canonical
    /// normalization (String hashing and ==) quadratic; the parser must stay linear. Prints
    /// figures; asserts only the results.
    func testCombiningMarkRunsBenchmark() {
        let clock = ContinuousClock()
        // (quadratic until the validator's set of reported problems hashed the messages as
        // Strings: 14/49/187/680 ms at these sizes in an x86_64 debug build, 68 s of aarch64's run)
        let sizes = [4000, 8000, 16000, 31000]
        for n in sizes {
            let marks = String(repeating: "\u{316}\u{301}", count: n / 2)
            let docs: [(String, String)] = [
                ("root key", "\"e\(marks)\" = 1\n"),
                ("header", "[\"e\(marks)\"]\n"),
                ("[beacon] key", "[beacon]\n\"e\(marks)\" = 1\n"),
                ("duplicate", "\"e\(marks)\" = 1\n\"e\(marks)\" = 1\n"),
            ]
            var line = "combining marks n=\(n):"
            for (name, doc) in docs {
                let bytes = Array(doc.utf8)
                guard bytes.count <= TOML.maxInputBytes else { continue }
                var result: Result<BeaconConfig, ConfigDiagnostic>?
                let t = clock.measure { result = ConfigFile.parse(bytes, path: "c") }
                if case .success = result { XCTFail("accepted \(name)") }
                let ms = Double(t.components.seconds) * 1000 + Double(t.components.attoseconds / 1_000_000_000_000) / 1000
                line += " \(name) \(ms) ms;"
            }
            print(line)
        }
    }
}
