import XCTest
@testable import BeaconKit

/// Issue 32: a setting from afar written into config.toml's text, everything else kept.
final class ConfigTextEditTests: XCTestCase {
    private func edit(_ source: String, _ table: String, _ key: String, _ literal: String,
                      file: StaticString = #filePath, line: UInt = #line) -> String {
        edit(Array(source.utf8), table, key, literal, file: file, line: line)
    }

    private func edit(_ source: [UInt8], _ table: String, _ key: String, _ literal: String,
                      file: StaticString = #filePath, line: UInt = #line) -> String {
        switch ConfigTextEdit.setting(table: table, key: key, literal: literal, in: source) {
        case .success(let out): return String(decoding: out, as: UTF8.self)
        case .failure(let e):
            XCTFail("refused: \(e)", file: file, line: line)
            return ""
        }
    }

    private func refusal(_ source: String, _ table: String, _ key: String, _ literal: String) -> ConfigTextEditError? {
        if case .failure(let e) = ConfigTextEdit.setting(table: table, key: key, literal: literal, in: Array(source.utf8)) { return e }
        return nil
    }

    private let beacon = """
        # my beacon
        [beacon]
        uuid = "2f234454-cf6d-4a0f-adf2-f4911ba9ffa6"
        major = 1
        minor = 2
        power = -59    # measured at 1 m

        # the radio
        [bluetooth]
        interval_ms = 100

        """

    func testReplacesAValueAndKeepsItsComment() {
        let out = edit(beacon, "beacon", "power", "-40")
        XCTAssertEqual(out, beacon.replacingOccurrences(of: "power = -59    #", with: "power = -40    #"))
        XCTAssertEqual(config(out)?.beacon.power, -40)
    }

    func testReplacesAStringValueWithEscapesAndCommentInside() {
        let src = "[bluetooth]\nadapter = \"hc\\\"#i0\" # x\n[beacon]\nuuid = \"2f234454cf6d4a0fadf2f4911ba9ffa6\"\nmajor = 1\nminor = 2\n"
        XCTAssertEqual(edit(src, "bluetooth", "adapter", "\"hci1\""),
                       "[bluetooth]\nadapter = \"hci1\" # x\n[beacon]\nuuid = \"2f234454cf6d4a0fadf2f4911ba9ffa6\"\nmajor = 1\nminor = 2\n")
        XCTAssertEqual(edit("[b]\nk = 'lit' # c\n", "b", "k", "7"), "[b]\nk = 7 # c\n")
    }

    func testCRLFFileStaysCRLF() {
        let crlf = beacon.replacingOccurrences(of: "\n", with: "\r\n")
        XCTAssertEqual(edit(crlf, "beacon", "major", "7"), crlf.replacingOccurrences(of: "major = 1", with: "major = 7"))
        let inserted = edit(crlf, "bluetooth", "rotation_ms", "500")
        XCTAssertEqual(inserted, crlf.replacingOccurrences(of: "interval_ms = 100\r\n", with: "interval_ms = 100\r\nrotation_ms = 500\r\n"))
        let appended = edit(crlf, "ibeacon", "enabled", "true")
        XCTAssertEqual(appended, crlf + "\r\n[ibeacon]\r\nenabled = true\r\n")
    }

    func testBOMIsKept() {
        let bom: [UInt8] = [0xEF, 0xBB, 0xBF]
        let out = edit(bom + Array(beacon.utf8), "beacon", "minor", "9")
        XCTAssertEqual(Array(out.utf8), bom + Array(beacon.replacingOccurrences(of: "minor = 2", with: "minor = 9").utf8))
        let appended = edit(bom + Array("[beacon]\nmajor = 1".utf8), "beacon", "minor", "3")
        XCTAssertEqual(Array(appended.utf8), bom + Array("[beacon]\nmajor = 1\nminor = 3\n".utf8))
    }

    func testQuotedAndDottedKeys() {
        XCTAssertEqual(edit("[beacon]\n\"power\" = -59\n", "beacon", "power", "-1"), "[beacon]\n\"power\" = -1\n")
        XCTAssertEqual(edit("[\"beacon\"]\n'power'=-59#c\n", "beacon", "power", "-1"), "[\"beacon\"]\n'power'=-1#c\n")
        let dotted = "# top\nbeacon.major = 1\nbeacon . \"minor\" = 2\nbeacon.power = -59\n\n[bluetooth]\ninterval_ms = 100\n"
        XCTAssertEqual(edit(dotted, "beacon", "power", "-3"), dotted.replacingOccurrences(of: "-59", with: "-3"))
        // A new key of a dotted table goes after its last dotted key, as a dotted key.
        XCTAssertEqual(edit(dotted, "beacon", "altbeacon", "false"),
                       dotted.replacingOccurrences(of: "-59\n", with: "-59\nbeacon.altbeacon = false\n"))
    }

    func testNonASCIIBeforeTheValue() {
        // Positions count scalars; the edit works in bytes.
        XCTAssertEqual(edit("[b]\n\"é€\" = 1 # ü\nk = 2\n", "b", "é€", "3"), "[b]\n\"é€\" = 3 # ü\nk = 2\n")
    }

    func testInsertsAfterTheTablesLastKey() {
        // Before the comments and blank lines that end the section, indented as the last key.
        let src = "[beacon]\n  major = 1\n  # minor below\n  minor = 2\n\n# next\n[bluetooth]\n"
        XCTAssertEqual(edit(src, "beacon", "advertising", "false"),
                       "[beacon]\n  major = 1\n  # minor below\n  minor = 2\n  advertising = false\n\n# next\n[bluetooth]\n")
        // An empty table: right after its header.
        XCTAssertEqual(edit("[ibeacon]\n# nothing yet\n\n[beacon]\n", "ibeacon", "enabled", "false"),
                       "[ibeacon]\nenabled = false\n# nothing yet\n\n[beacon]\n")
        // A subtable's header ends the section.
        XCTAssertEqual(edit("[a]\nx = 1\n[a.b]\ny = 2\n", "a", "z", "3"), "[a]\nx = 1\nz = 3\n[a.b]\ny = 2\n")
    }

    func testAppendsAMissingTable() {
        XCTAssertEqual(edit(beacon, "overflow", "enabled", "false"), beacon + "\n[overflow]\nenabled = false\n")
        // No doubled blank line, and no blank line at the top of an empty file.
        XCTAssertEqual(edit("[beacon]\nmajor = 1\n\n", "ibeacon", "enabled", "true"), "[beacon]\nmajor = 1\n\n[ibeacon]\nenabled = true\n")
        XCTAssertEqual(edit("", "beacon", "major", "1"), "[beacon]\nmajor = 1\n")
        // A table only implied by a `[a.b]` header gets its own header.
        XCTAssertEqual(edit("[a.b]\ny = 2\n", "a", "z", "3"), "[a.b]\ny = 2\n\n[a]\nz = 3\n")
    }

    func testFileWithoutFinalNewline() {
        XCTAssertEqual(edit("[beacon]\npower = -59", "beacon", "power", "-60"), "[beacon]\npower = -60")
        XCTAssertEqual(edit("[beacon]\npower = -59", "beacon", "major", "1"), "[beacon]\npower = -59\nmajor = 1\n")
        XCTAssertEqual(edit("[beacon]\npower = -59 # c", "ibeacon", "enabled", "true"), "[beacon]\npower = -59 # c\n\n[ibeacon]\nenabled = true\n")
    }

    func testRefusals() {
        XCTAssertEqual(refusal("[beacon\nmajor = 1\n", "beacon", "major", "2"), .doesNotParse)
        XCTAssertEqual(refusal("[beacon]\nmajor = \"\"\"\nx\"\"\"\n", "beacon", "major", "2"), .doesNotParse)
        XCTAssertEqual(refusal("beacon = 1\n", "beacon", "major", "2"), .notATable("beacon"))
        XCTAssertEqual(refusal("[beacon.major]\n", "beacon", "major", "2"), .notAValue("beacon.major"))
        for bad in ["", " 1", "1 # c", "1\nx = 2", "\"a\" \"b\"", "[1]", "{a = 1}", "\"\"\"x\"\"\"", "yes", "\"open"] {
            XCTAssertEqual(refusal(beacon, "beacon", "power", bad), .badLiteral(bad), bad)
        }
        XCTAssertEqual(ConfigTextEditError.doesNotParse.description, "the config file does not parse, so it cannot be edited")
    }

    func testEveryRemoteSettingRoundTripsThroughTheLoader() throws {
        // The example config.toml at the repository's root, as shipped.
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let src = [UInt8](try Data(contentsOf: root.appendingPathComponent("config.toml")))
        let values: [RemoteSetting: String] = [
            .uuid: "0123456789abcdef0123456789ABCDEF", .major: "4242", .minor: "7", .power: "-40.0",
            .intervalMs: "250", .advertising: "OFF", .frameAltBeacon: "ON", .frameIBeacon: "ON",
            .frameOverflow: "ON", .frameEddystone: "off", .frameEddystoneTLM: "on",
        ]
        for s in RemoteSetting.allCases {
            let value = try XCTUnwrap(values[s], "\(s) has no test value")
            let literal = try s.literal(value).get()
            let (table, key, _) = s.configKey
            var bytes = try ConfigTextEdit.setting(table: table, key: key, literal: literal, in: src).get()
            // Setting it a second time replaces what the first one wrote.
            bytes = try ConfigTextEdit.setting(table: table, key: key, literal: literal, in: bytes).get()
            let c = try XCTUnwrap(config(String(decoding: bytes, as: UTF8.self)), "\(s)")
            let frames = c.frames.map(\.name)
            switch s {
            case .uuid: XCTAssertEqual(c.beacon.uuidString.lowercased(), "01234567-89ab-cdef-0123-456789abcdef")
            case .major: XCTAssertEqual(c.beacon.major, 4242)
            case .minor: XCTAssertEqual(c.beacon.minor, 7)
            case .power: XCTAssertEqual(c.beacon.power, -40)
            case .intervalMs: XCTAssertEqual(c.bluetooth.intervalMs, 250)
            case .advertising: XCTAssertFalse(c.advertising)
            case .frameAltBeacon: XCTAssertEqual(frames, ["altbeacon"])
            case .frameIBeacon: XCTAssertEqual(frames, ["altbeacon", "ibeacon"])
            case .frameOverflow: XCTAssertEqual(frames, ["altbeacon", "overflow-area"])
            case .frameEddystone: XCTAssertEqual(frames, ["altbeacon"])
            case .frameEddystoneTLM: XCTAssertEqual(frames, ["altbeacon", "eddystone-tlm"])
            default: XCTFail("\(s) has no check here")
            }
            // Nothing but the edited line and what was added changed: every original line is still there.
            let before = String(decoding: src, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
            let after = String(decoding: bytes, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
            XCTAssertLessThanOrEqual(Set(before).subtracting(after).count, 1, "\(s)")
        }
    }

    func testARefusedValueIsReportedWhereItWasWritten() throws {
        let out = try ConfigTextEdit.setting(table: "beacon", key: "power", literal: "5", in: Array(beacon.utf8)).get()
        XCTAssertEqual(configError(String(decoding: out, as: UTF8.self)), "config.toml:6:9: beacon.power must be between -127 and 0, found 5")
        let added = try ConfigTextEdit.setting(table: "bluetooth", key: "rotation_ms", literal: "5", in: Array(beacon.utf8)).get()
        XCTAssertEqual(configError(String(decoding: added, as: UTF8.self)), "config.toml:11:15: bluetooth.rotation_ms must be between 100 and 10000, found 5")
    }

    func testLinearOnALargeFile() throws {
        // 64 KiB of keys in one table: one edit at the end, one insertion (linear, so quick).
        var src = "[beacon]\n"
        var n = 0
        while src.utf8.count < TOML.maxInputBytes - 40 { src += "k\(n) = \(n)\n"; n += 1 }
        let out = edit(src, "beacon", "k\(n - 1)", "0")
        XCTAssertTrue(out.hasSuffix("k\(n - 1) = 0\n"))
        XCTAssertTrue(edit(src, "beacon", "new", "1").hasSuffix("\nnew = 1\n"))
    }
}
