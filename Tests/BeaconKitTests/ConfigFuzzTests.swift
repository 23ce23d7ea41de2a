import XCTest
@testable import BeaconKit

/// A deterministic, seeded mutation loop over valid configs, so `swift test` exercises the
/// parser's robustness without libFuzzer (deploy/fuzz/run is the real fuzzer).
final class ConfigFuzzTests: XCTestCase {
    /// SplitMix64: small, deterministic, Sendable.
    struct SeededRandom: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    static let seeds: [String] = [
        minimalBeacon,
        """
        \u{FEFF}[beacon]\r
        uuid = "2F234454CF6D4A0FADF2F4911BA9FFA6"  # c\r
        major = 0xFF_FF\r
        minor = 0o17\r
        power = -0\r
        company_id = 0b1\r
        "reserved" = +255\r
        [bluetooth]\r
        adapter = 'hci3'\r
        interval_ms = 1_000\r
        tx_power_dbm = -20\r
        """,
        """
        beacon.uuid = "2f234454-cf6d-4a0f-adf2-f4911ba9ffa6"
        beacon . major = 1
        'beacon'."minor" = 2
        [leds]
        chip = "pinctrl-bcm2711"
        status = "GPIO\\u0031\\U00000037"
        fault = 27
        active_low = false
        [watchdog]
        check_interval_s = 10
        """,
    ]

    /// Tokens worth splicing in: TOML syntax, escapes, boundary values, unsupported forms.
    static let fragments: [String] = [
        "[", "]", "[[", "]]", ".", "=", "\"", "'", "\"\"\"", "'''", "#", "\n", "\r\n", "\r", "\t", " ",
        "\\u", "\\U0010FFFF", "\\uD800", "\\e", "\\", "0x", "0o", "0b", "_", "-", "+", "9223372036854775808",
        "1.5", "1979-05-27", "inf", "{", "}", ",", "true", "false", "[beacon]", "[leds]", "major", "é",
        "\u{FEFF}", "\u{0}", "\u{7F}", "a.b.c.d.e.f.g.h", "[a.b]",
    ]

    func testMutatedConfigsNeverTrapAndPointInsideTheInput() {
        var rng = SeededRandom(state: 0xA17B_EAC0)
        var accepted = 0, refused = 0
        for round in 0..<4000 {
            var bytes = Array(Self.seeds[round % Self.seeds.count].utf8)
            for _ in 0..<Int.random(in: 1...4, using: &rng) { mutate(&bytes, using: &rng) }
            switch ConfigFile.parse(bytes, path: "m.toml") {
            case .success(let c):
                accepted += 1
                XCTAssertEqual(c.beacon.uuid.count, 16)
                XCTAssertTrue((20...10240).contains(c.bluetooth.intervalMs))
            case .failure(let d):
                refused += 1
                checkInside(d, bytes)
            }
            if case .failure(let d) = TOML.parse(bytes, path: "m.toml") { checkInside(d, bytes) }
        }
        XCTAssertGreaterThan(accepted, 50)
        XCTAssertGreaterThan(refused, 1000)
    }

    func testRandomBytesNeverTrap() {
        var rng = SeededRandom(state: 7)
        for _ in 0..<2000 {
            let n = Int.random(in: 0...200, using: &rng)
            let bytes = (0..<n).map { _ in UInt8.random(in: 0...255, using: &rng) }
            if case .failure(let d) = ConfigFile.parse(bytes, path: "r") { checkInside(d, bytes) }
        }
    }

    func testLargeInputsStayLinear() {
        // Many keys, long strings, long lines: all must finish quickly (the cap bounds the rest).
        var text = minimalBeacon
        for i in 0..<3000 { text += "[t\(i)]\n" }
        if case .success = ConfigFile.parse(text, path: "big") { XCTFail("unknown tables accepted") }
        let longString = "[beacon]\nuuid = \"" + String(repeating: "\\u00e9", count: 10_000) + "\""
        if case .success = ConfigFile.parse(longString, path: "big") { XCTFail() }
        let deep = String(repeating: "a.", count: 20_000) + "b = 1"
        guard case .failure(let d) = TOML.parse(Array(deep.utf8), path: "deep") else { return XCTFail() }
        XCTAssertTrue(d.message.contains("nested too deeply"), d.message)
    }

    private func checkInside(_ d: ConfigDiagnostic, _ bytes: [UInt8], file: StaticString = #filePath, line: UInt = #line) {
        let body = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? Array(bytes.dropFirst(3)) : bytes
        // Split on LF bytes (a String would treat CRLF as one Character).
        let lines = body.split(separator: 0x0A, omittingEmptySubsequences: false).map { String(decoding: $0, as: UTF8.self) }
        XCTAssertGreaterThanOrEqual(d.line, 1, file: file, line: line)
        XCTAssertGreaterThanOrEqual(d.column, 1, file: file, line: line)
        guard d.line <= lines.count else {
            return XCTFail("line \(d.line) beyond \(lines.count): \(d)", file: file, line: line)
        }
        // The caret may sit one past the end of the line (end of line / end of file).
        let width = lines[d.line - 1].unicodeScalars.count
        XCTAssertLessThanOrEqual(d.column, width + 1, "\(d)", file: file, line: line)
        XCTAssertFalse(d.message.isEmpty, file: file, line: line)
        XCTAssertTrue(d.description.hasPrefix("m.toml:") || d.description.hasPrefix("r:") || d.description.hasPrefix("deep:"))
    }

    private func mutate(_ bytes: inout [UInt8], using rng: inout SeededRandom) {
        let at = bytes.isEmpty ? 0 : Int.random(in: 0..<bytes.count, using: &rng)
        switch Int.random(in: 0..<6, using: &rng) {
        case 0 where !bytes.isEmpty:
            bytes[at] = UInt8.random(in: 0...255, using: &rng)
        case 1 where !bytes.isEmpty:
            bytes.remove(at: at)
        case 2:
            bytes.insert(UInt8.random(in: 0...127, using: &rng), at: at)
        case 3, 4:
            let f = Self.fragments[Int.random(in: 0..<Self.fragments.count, using: &rng)]
            bytes.insert(contentsOf: Array(f.utf8), at: at)
        default:
            if !bytes.isEmpty {
                let len = Int.random(in: 1...min(16, bytes.count - at), using: &rng)
                bytes.insert(contentsOf: bytes[at..<(at + len)], at: Int.random(in: 0...bytes.count, using: &rng))
            }
        }
    }
}
