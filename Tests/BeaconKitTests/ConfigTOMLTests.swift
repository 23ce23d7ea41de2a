import XCTest
@testable import BeaconKit

/// The generic TOML-subset layer: what it accepts means what TOML says; the rest is refused.
final class ConfigTOMLTests: XCTestCase {
    func testKeysTablesAndPositions() throws {
        let t = try XCTUnwrap(toml("a = 1\n[x.y]\n\"q k\" = 'lit'\nb.c = true\n"))
        XCTAssertEqual(t.keys, ["a", "x"])
        XCTAssertEqual(t["a"], .integer(1))
        let a = try XCTUnwrap(t.entry("a"))
        XCTAssertEqual(a.keyPosition, SourcePosition(line: 1, column: 1))
        XCTAssertEqual(a.valuePosition, SourcePosition(line: 1, column: 5))
        guard case .table(let x) = t["x"], case .table(let y) = x["y"] else { return XCTFail("tables") }
        XCTAssertEqual(y.position, SourcePosition(line: 2, column: 1))
        XCTAssertEqual(y["q k"], .string("lit"))
        guard case .table(let b) = y["b"] else { return XCTFail("dotted") }
        XCTAssertEqual(b["c"], .bool(true))
        XCTAssertEqual(y.entry("b")?.keyPosition, SourcePosition(line: 4, column: 1))
    }

    func testWhitespaceAndComments() throws {
        let t = try XCTUnwrap(toml("# c\n\t a\t=\t1 # after\n[ s . t ] # c\n  k = \"#not\" #x\n#end"))
        XCTAssertEqual(t["a"], .integer(1))
        guard case .table(let s) = t["s"], case .table(let tt) = s["t"] else { return XCTFail() }
        XCTAssertEqual(tt["k"], .string("#not"))
        XCTAssertEqual(toml("")?.isEmpty, true)
        XCTAssertEqual(toml("# only a comment")?.isEmpty, true)
    }

    func testQuotedKeys() throws {
        let t = try XCTUnwrap(toml("\"\" = 1\n'a.b' = 2\n\"\\u00e9\" = 3\n1234 = 4\n-_ = 5\ntrue = 6\n"))
        XCTAssertEqual(t.keys, ["", "a.b", "é", "1234", "-_", "true"])
        XCTAssertEqual(tomlError("'a' = 1\na = 2"), "t.toml:2:1: duplicate key `a` (first defined on line 1)")
    }

    func testCRLFAndBOM() throws {
        let t = try XCTUnwrap(toml("a = 1\r\n[b]\r\nc = 'x' # c\r\n"))
        XCTAssertEqual(t["a"], .integer(1))
        let bom: [UInt8] = [0xEF, 0xBB, 0xBF] + Array("a = \"é\"\nb = c".utf8)
        guard case .failure(let d) = TOML.parse(bom, path: "t.toml") else { return XCTFail() }
        XCTAssertEqual(d.headline, "t.toml:2:5: invalid value `c`: strings must be quoted")
        guard case .success(let ok) = TOML.parse([0xEF, 0xBB, 0xBF] + Array("a = 1".utf8), path: "t") else { return XCTFail() }
        XCTAssertEqual(ok["a"], .integer(1))
        XCTAssertEqual(tomlError("a = 1\rb = 2"), "t.toml:1:6: a carriage return must be followed by a line feed")
        XCTAssertEqual(tomlError("a = 1 # x\r"), "t.toml:1:10: a carriage return must be followed by a line feed")
        XCTAssertEqual(tomlError("a = \"x\ry\""), "t.toml:1:7: control character U+000D must be escaped in a string")
        XCTAssertEqual(tomlError("a = 1\n\u{FEFF}b = 2"), "t.toml:2:1: expected a key or a [table] header, found `\\u{feff}`")
    }

    func testEveryEscape() throws {
        let t = try XCTUnwrap(toml(#"s = "\b\t\n\f\r\"\\\u00E9\U0001F600\u0000/""#))
        XCTAssertEqual(t["s"], .string("\u{08}\t\n\u{0C}\r\"\\é😀\u{0}/"))
        XCTAssertEqual(toml(#"s = 'C:\path\n'"#)?["s"], .string(#"C:\path\n"#))
        XCTAssertEqual(tomlError(#"s = "\q""#), "t.toml:1:6: unknown escape `\\q` in a string")
        XCTAssertEqual(tomlError(#"s = "a\x41""#), "t.toml:1:7: unknown escape `\\x` in a string")
        XCTAssertEqual(tomlError(#"s = "\u12""#), "t.toml:1:6: `\\u` must be followed by exactly 4 hex digits")
        XCTAssertEqual(tomlError(#"s = "\U0000123""#), "t.toml:1:6: `\\U` must be followed by exactly 8 hex digits")
        XCTAssertEqual(tomlError(#"s = "\uD800""#), "t.toml:1:6: escape U+D800 is not a Unicode scalar value")
        XCTAssertEqual(tomlError(#"s = "\U00110000""#), "t.toml:1:6: escape U+110000 is not a Unicode scalar value")
        XCTAssertEqual(tomlError(#"s = "\e""#), "t.toml:1:6: the `\\e` escape (TOML 1.1) is not supported in this config file; use `\\u001B`")
        XCTAssertEqual(tomlError("s = \"\\\n\""), "t.toml:1:6: incomplete escape: `\\` must be followed by one of b t n f r \" \\ u U")
    }

    func testStringErrors() {
        XCTAssertEqual(tomlError("s = \"abc\nt = 1"), "t.toml:1:5: unterminated string: a string must end with `\"` on the line where it starts")
        XCTAssertEqual(tomlError("s = 'abc"), "t.toml:1:5: unterminated string: a literal string must end with `'` on the line where it starts")
        XCTAssertEqual(tomlError("s = \"a\u{7F}\""), "t.toml:1:7: control character U+007F must be escaped in a string")
        XCTAssertEqual(tomlError("s = 'a\u{1F}'"), "t.toml:1:7: control character U+001F is not allowed in a literal string")
        XCTAssertEqual(toml("s = \"a\tb\"")?["s"], .string("a\tb"))
        XCTAssertEqual(tomlError("# a\u{0}b"), "t.toml:1:4: control character U+0000 is not allowed in a comment")
        XCTAssertEqual(tomlError("s = \"a\" \"b\""), "t.toml:1:9: expected a comment or the end of the line, found `\"`")
        XCTAssertEqual(tomlError([0x61, 0x3D, 0x22, 0xC3, 0x28, 0x22]), "t.toml:1:4: invalid UTF-8 (byte 0xc3)")
        XCTAssertEqual(tomlError([0x23, 0xED, 0xA0, 0x80]), "t.toml:1:2: invalid UTF-8 (byte 0xed)")
        XCTAssertEqual(tomlError([0x61, 0x0A, 0xC0, 0x80]), "t.toml:2:1: invalid UTF-8 (byte 0xc0)")
    }

    func testEveryIntegerForm() throws {
        let cases: [(String, Int64)] = [
            ("0", 0), ("+0", 0), ("-0", 0), ("42", 42), ("+42", 42), ("-17", -17), ("1_000", 1000),
            ("5_349_221", 5_349_221), ("0xDEADbeef", 0xDEADBEEF), ("0xdead_beef", 0xDEADBEEF),
            ("0o755", 0o755), ("0o0_1", 1), ("0b1101_0110", 0b1101_0110), ("0x00", 0),
            ("9223372036854775807", Int64.max), ("-9223372036854775808", Int64.min),
            ("0x7FFFFFFFFFFFFFFF", Int64.max), ("0o777777777777777777777", Int64.max),
        ]
        for (text, value) in cases {
            XCTAssertEqual(toml("n = \(text)")?["n"], .integer(value), text)
        }
    }

    func testIntegerErrors() {
        let cases: [(String, String)] = [
            ("01", "invalid integer `01`: leading zeros are not allowed"),
            ("-01", "invalid integer `-01`: leading zeros are not allowed"),
            ("0_0", "invalid integer `0_0`: leading zeros are not allowed"),
            ("1__0", "invalid integer `1__0`: `_` must be between two digits"),
            ("_1", "invalid value `_1`: strings must be quoted"),
            ("1_", "invalid integer `1_`: `_` must be between two digits"),
            ("0x_1", "invalid integer `0x_1`: `_` must be between two digits"),
            ("0x1_", "invalid integer `0x1_`: `_` must be between two digits"),
            ("0x", "invalid integer `0x`: digits expected after the prefix"),
            ("0xG", "invalid hexadecimal integer `0xG`"),
            ("0o8", "invalid octal integer `0o8`"),
            ("0b2", "invalid binary integer `0b2`"),
            ("0X1", "invalid integer `0X1`"),
            ("-0x1", "invalid integer `-0x1`: a hexadecimal integer cannot have a sign"),
            ("+0b1", "invalid integer `+0b1`: a binary integer cannot have a sign"),
            ("--1", "invalid integer `--1`"),
            ("+", "invalid integer `+`: digits expected"),
            ("9223372036854775808", "integer `9223372036854775808` is out of range for a 64-bit signed integer"),
            ("-9223372036854775809", "integer `-9223372036854775809` is out of range for a 64-bit signed integer"),
            ("0x8000000000000000", "integer `0x8000000000000000` is out of range for a 64-bit signed integer"),
            ("99999999999999999999999", "integer `99999999999999999999999` is out of range for a 64-bit signed integer"),
            ("12a", "invalid integer `12a`"),
        ]
        for (text, message) in cases {
            XCTAssertEqual(tomlError("n = \(text)"), "t.toml:1:5: " + message, text)
        }
    }

    func testBooleans() {
        XCTAssertEqual(toml("a = true\nb = false")?["b"], .bool(false))
        XCTAssertEqual(tomlError("a = True"), "t.toml:1:5: invalid value `True`: booleans are written `true` or `false`")
        XCTAssertEqual(tomlError("a = truex"), "t.toml:1:5: invalid value `truex`: strings must be quoted")
        XCTAssertEqual(tomlError("a = tru"), "t.toml:1:5: invalid value `tru`: strings must be quoted")
    }

    func testUnsupportedFeaturesAreRefusedNotMisread() {
        let cases: [(String, String)] = [
            ("a = [1, 2]", "1:5: an array is not supported in this config file"),
            ("a = { b = 1 }", "1:5: an inline table is not supported in this config file"),
            ("[[a]]\nb = 1", "1:1: an array of tables ([[...]]) is not supported in this config file"),
            ("a = 1.5", "1:5: a float is not supported in this config file; use an integer"),
            ("a = 1e3", "1:5: a float is not supported in this config file; use an integer"),
            ("a = -inf", "1:5: a float is not supported in this config file; use an integer"),
            ("a = nan", "1:5: a float is not supported in this config file; use an integer"),
            ("a = 1979-05-27", "1:5: a date or time is not supported in this config file"),
            ("a = 1979-05-27 07:32:00", "1:5: a date or time is not supported in this config file"),
            ("a = 07:32:00", "1:5: a date or time is not supported in this config file"),
            ("a = \"\"\"x\"\"\"", "1:5: a multi-line string is not supported in this config file"),
            ("a = '''x'''", "1:5: a multi-line literal string is not supported in this config file"),
        ]
        for (text, message) in cases {
            XCTAssertEqual(tomlError(text), "t.toml:" + message, text)
        }
        XCTAssertEqual(toml("a = \"\"")?["a"], .string(""))
        XCTAssertEqual(toml("a = ''")?["a"], .string(""))
    }

    func testDuplicatesAndTableRules() {
        XCTAssertEqual(tomlError("a = 1\na = 2"), "t.toml:2:1: duplicate key `a` (first defined on line 1)")
        XCTAssertEqual(tomlError("[t]\n[t]"), "t.toml:2:1: table [t] is defined twice (first on line 1)")
        XCTAssertEqual(tomlError("a = 1\n[a]"), "t.toml:2:2: `a` is already a value (line 1), so it cannot be a table")
        XCTAssertEqual(tomlError("a.b = 1\na.b.c = 2"), "t.toml:2:3: `a.b` is already a value (line 1), so it cannot be a table")
        XCTAssertEqual(tomlError("[f]\napple.color = 1\n[f.apple]"),
                       "t.toml:3:1: table [f.apple] was already defined with dotted keys (line 2)")
        XCTAssertEqual(tomlError("[a.b.c]\nz = 9\n[a]\nb.c.t = 1"),
                       "t.toml:4:1: dotted keys cannot add to table [a.b], which is defined by a [table] header (line 1)")
        XCTAssertEqual(tomlError("[a]\nb = 1\n[a.b]"), "t.toml:3:4: `a.b` is already a value (line 2), so it cannot be a table")
        XCTAssertEqual(tomlError("a.b = 1\na.b = 2"), "t.toml:2:3: duplicate key `a.b` (first defined on line 1)")
        XCTAssertEqual(tomlError("[\"a b\"]\nc = 1\n[\"a b\"]"), "t.toml:3:1: table [\"a b\"] is defined twice (first on line 1)")
        // Valid: a super-table after its sub-table, and sub-tables of dotted-key tables.
        XCTAssertNotNil(toml("[x.y.z]\n[x]\na = 1"))
        XCTAssertNotNil(toml("[f]\napple.color = 1\n[f.apple.texture]\nsmooth = true"))
        XCTAssertNotNil(toml("a.b = 1\na.c = 2"))
    }

    func testLineShapeErrors() {
        XCTAssertEqual(tomlError("a"), "t.toml:1:2: expected `=` after the key, found end of file")
        XCTAssertEqual(tomlError("a b = 1"), "t.toml:1:3: expected `=` after the key, found `b`")
        XCTAssertEqual(tomlError("a ="), "t.toml:1:4: expected a value after `=`, found end of file")
        XCTAssertEqual(tomlError("a = # c"), "t.toml:1:5: expected a value after `=`, found `#`")
        XCTAssertEqual(tomlError("= 1"), "t.toml:1:1: expected a key or a [table] header, found `=`")
        XCTAssertEqual(tomlError("a. = 1"), "t.toml:1:4: expected a key, found `=`")
        XCTAssertEqual(tomlError("[a"), "t.toml:1:3: expected `.` or `]` in the table header, found end of file")
        XCTAssertEqual(tomlError("[]"), "t.toml:1:2: expected a table name, found `]`")
        XCTAssertEqual(tomlError("[a..b]"), "t.toml:1:4: expected a table name, found `.`")
        XCTAssertEqual(tomlError("[a] b = 1"), "t.toml:1:5: expected a comment or the end of the line, found `b`")
        XCTAssertEqual(tomlError("a = 1 b = 2"), "t.toml:1:7: expected a comment or the end of the line, found `b`")
        XCTAssertEqual(tomlError("\"\"\"a\"\"\" = 1"), "t.toml:1:1: a key cannot be a multi-line string")
        XCTAssertEqual(tomlError("é = 1"), "t.toml:1:1: expected a key or a [table] header, found `é`")
        XCTAssertEqual(tomlError("k = \"é\" x"), "t.toml:1:9: expected a comment or the end of the line, found `x`")
    }

    func testNestingAndSizeCaps() {
        let deep = "[" + Array(repeating: "a", count: TOML.maxDepth + 1).joined(separator: ".") + "]"
        XCTAssertTrue(tomlError(deep).contains("nested too deeply"))
        XCTAssertNotNil(toml("[" + Array(repeating: "a", count: TOML.maxDepth).joined(separator: ".") + "]"))
        let big = [UInt8](repeating: 0x23, count: TOML.maxInputBytes + 1)
        XCTAssertEqual(tomlError(big), "t.toml:1:1: the file is too large (65537 bytes; the limit is 65536)")
    }
}
