import XCTest
@testable import BeaconKit

/// Parses TOML text with the generic layer; fails the test on refusal.
func toml(_ text: String, file: StaticString = #filePath, line: UInt = #line) -> TOMLTable? {
    switch TOML.parse(Array(text.utf8), path: "t.toml") {
    case .success(let t): return t
    case .failure(let d):
        XCTFail("unexpected refusal: \(d)", file: file, line: line)
        return nil
    }
}

/// The refusal of TOML text by the generic layer, as `t.toml:L:C: message`.
func tomlError(_ text: String, file: StaticString = #filePath, line: UInt = #line) -> String {
    tomlError(Array(text.utf8), file: file, line: line)
}

func tomlError(_ bytes: [UInt8], file: StaticString = #filePath, line: UInt = #line) -> String {
    switch TOML.parse(bytes, path: "t.toml") {
    case .success(let t):
        XCTFail("accepted: \(t)", file: file, line: line)
        return ""
    case .failure(let d): return d.headline
    }
}

/// The refusal of a config file, as `config.toml:L:C: message`.
func configError(_ text: String, file: StaticString = #filePath, line: UInt = #line) -> String {
    switch ConfigFile.parse(Array(text.utf8), path: "config.toml") {
    case .success(let c):
        XCTFail("accepted: \(c)", file: file, line: line)
        return ""
    case .failure(let d): return d.headline
    }
}

func config(_ text: String, file: StaticString = #filePath, line: UInt = #line) -> BeaconConfig? {
    switch ConfigFile.parse(Array(text.utf8), path: "config.toml") {
    case .success(let c): return c
    case .failure(let d):
        XCTFail("unexpected refusal:\n\(d)", file: file, line: line)
        return nil
    }
}

let minimalBeacon = """
    [beacon]
    uuid = "2f234454-cf6d-4a0f-adf2-f4911ba9ffa6"
    major = 1
    minor = 2


    """

let studyGuideUUID: [UInt8] = [0x2f, 0x23, 0x44, 0x54, 0xcf, 0x6d, 0x4a, 0x0f,
                               0xad, 0xf2, 0xf4, 0x91, 0x1b, 0xa9, 0xff, 0xa6]
