import XCTest
@testable import BeaconKit

/// SPEC §2: diagnostics that name the real mistake, all of them in one run, shown safely.
final class ConfigDiagnosticsTests: XCTestCase {
    func all(_ text: String) -> [String] {
        all(Array(text.utf8))
    }

    func all(_ bytes: [UInt8]) -> [String] {
        switch ConfigFile.parseAll(bytes, path: "c.toml") {
        case .success: XCTFail("accepted"); return []
        case .failure(let e): return e.all.map(\.headline)
        }
    }

    func testUnknownKeysComeBeforeMissingOnesAndExplainThem() {
        let text = "[beacon]\nuuid = \"2f234454-cf6d-4a0f-adf2-f4911ba9ffa6\"\nmjaor = 1\nminor = 2\n"
        XCTAssertEqual(configError(text), "config.toml:3:1: unknown key `beacon.mjaor`; did you mean `beacon.major`?")
        // The missing major is explained by the typo, so it is not reported at all.
        XCTAssertEqual(all(text), ["c.toml:3:1: unknown key `beacon.mjaor`; did you mean `beacon.major`?"])
        // A missing key nothing explains still is, after the unknown ones.
        XCTAssertEqual(all("[beacon]\nmjaor = 1\nminor = 2\nfoo = 1\n"), [
            "c.toml:2:1: unknown key `beacon.mjaor`; did you mean `beacon.major`?",
            "c.toml:4:1: unknown key `beacon.foo`; [beacon] takes uuid, major, minor, power, company_id, reserved, altbeacon, advertising, name",
            "c.toml:1:1: missing required key `beacon.uuid` in [beacon]",
        ])
        XCTAssertEqual(all("[beacn]\nuuid = 1\n"), ["c.toml:1:2: unknown table [beacn]; did you mean [beacon]?"])
    }

    func testAKeyInTheWrongTableSaysWhereItBelongs() {
        XCTAssertEqual(configError(minimalBeacon + "interval_ms = 100"),
                       "config.toml:6:1: unknown key `beacon.interval_ms`: interval_ms belongs in [bluetooth], not in [beacon]")
        XCTAssertEqual(configError(minimalBeacon + "[bluetooth]\npower = -59"),
                       "config.toml:7:1: unknown key `bluetooth.power`: power belongs in [beacon], not in [bluetooth]")
        // major under [bluetooth] explains the missing beacon.major.
        XCTAssertEqual(all("[beacon]\nuuid = '2f234454cf6d4a0fadf2f4911ba9ffa6'\nminor = 2\n[bluetooth]\nmajor = 1\n"),
                       ["c.toml:5:1: unknown key `bluetooth.major`: major belongs in [beacon], not in [bluetooth]"])
    }

    func testEverySyntaxErrorInOneRun() {
        let text = "[beacon]\nuuid = \"x\ny = \n= 3\nmajor = 1.5\nminor = 2\nminor = 3\n"
        XCTAssertEqual(all(text), [
            "c.toml:2:8: unterminated string: a string must end with `\"` on the line where it starts",
            "c.toml:3:5: expected a value after `=`, found end of line",
            "c.toml:4:1: expected a key or a [table] header, found `=`",
            "c.toml:5:9: a float is not supported in this config file; use an integer",
            "c.toml:7:1: duplicate key `beacon.minor` (first defined on line 6)",
        ])
        // Keys under a refused header are skipped, not reported again.
        XCTAssertEqual(all("[a]\nx = 1\n[a]\nx = 2\ny = 3\n"), ["c.toml:3:1: table [a] is defined twice (first on line 1)"])
        // At most 20.
        let many = String(repeating: "= 1\n", count: 100)
        XCTAssertEqual(all(many).count, 20)
        XCTAssertEqual(all(many).last, "c.toml:20:1: expected a key or a [table] header, found `=`")
    }

    func testCaretCountsDisplayWidth() throws {
        func caret(_ text: String) throws -> String {
            guard case .failure(let d) = ConfigFile.parse(text, path: "c") else { throw XCTSkip("accepted") }
            return d.caretLine
        }
        // Two wide CJK characters take 4 cells; a combining mark takes none.
        XCTAssertEqual(try caret("k = \"中文\" x"), String(repeating: " ", count: 11) + "^")
        XCTAssertEqual(try caret("k = \"e\u{301}\" x"), String(repeating: " ", count: 8) + "^")
        XCTAssertEqual(try caret("\t\"é\" = 1 x"), "\t        ^")
    }

    func testControlCharactersAreShownEscaped() throws {
        guard case .failure(let d) = ConfigFile.parse(Array("a = 1 \u{1B}[31mred\n".utf8), path: "c") else { return XCTFail() }
        XCTAssertEqual(d.headline, "c:1:7: expected a comment or the end of the line, found control character U+001B")
        XCTAssertEqual(d.shownLine, "a = 1 \\x1b[31mred")
        XCTAssertEqual(d.caretLine, "      ^")
        XCTAssertFalse(d.description.unicodeScalars.contains { $0.value == 0x1B })
        // In a comment, in a key name, and C1 / bidi controls.
        guard case .failure(let k) = ConfigFile.parse(Array("[beacon]\n\"\u{1B}]0;x\u{7}\" = 1\n# \u{202E}\u{85}\n\u{7F}".utf8), path: "c")
        else { return XCTFail() }
        XCTAssertFalse(k.description.unicodeScalars.contains { $0.value < 0x20 && $0 != "\n" || $0.value == 0x7F })
        switch ConfigFile.parseAll(Array("# \u{202E}x\u{85}\n\u{7F}".utf8), path: "c") {
        case .success: XCTFail()
        case .failure(let e):
            for d in e.all {
                XCTAssertFalse(d.description.unicodeScalars.contains { [0x7F, 0x85, 0x202E].contains($0.value) }, d.description)
            }
        }
    }

    func testUTF16AndSmartQuotesGetAHint() {
        let utf16le: [UInt8] = [0xFF, 0xFE] + Array("[beacon]\n".utf8).flatMap { [$0, 0] }
        XCTAssertEqual(all(utf16le), ["c.toml:1:1: the file is UTF-16 (byte order mark FF FE, little-endian); save it as UTF-8"])
        let utf16be: [UInt8] = [0xFE, 0xFF] + Array("[beacon]\n".utf8).flatMap { [0, $0] }
        XCTAssertEqual(all(utf16be), ["c.toml:1:1: the file is UTF-16 (byte order mark FE FF, big-endian); save it as UTF-8"])
        let noBOM: [UInt8] = Array("[beacon]\n".utf8).flatMap { [$0, 0] }
        XCTAssertEqual(all(noBOM), ["c.toml:1:1: the file has many NUL bytes, so it is probably UTF-16; save it as UTF-8"])
        XCTAssertEqual(configError("[beacon]\nuuid = \u{201C}2f234454-cf6d-4a0f-adf2-f4911ba9ffa6\u{201D}"),
                       "config.toml:2:8: expected a value, found `\u{201C}` (a typographic “smart” quote: TOML strings and keys take straight quotes, \" or ')")
        XCTAssertTrue(configError("\u{2018}a\u{2019} = 1").contains("smart"))
    }
}
