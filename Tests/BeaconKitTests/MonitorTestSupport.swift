import XCTest
@testable import BeaconKit

/// The refusal of a monitor config, as `monitor.toml:L:C: message`.
func monitorError(_ text: String, file: StaticString = #filePath, line: UInt = #line) -> String {
    switch MonitorConfigFile.parse(Array(text.utf8), path: "monitor.toml") {
    case .success(let c):
        XCTFail("accepted: \(c)", file: file, line: line)
        return ""
    case .failure(let d): return d.headline
    }
}

func monitorConfig(_ text: String, file: StaticString = #filePath, line: UInt = #line) -> MonitorConfig? {
    switch MonitorConfigFile.parse(Array(text.utf8), path: "monitor.toml") {
    case .success(let c): return c
    case .failure(let d):
        XCTFail("unexpected refusal:\n\(d)", file: file, line: line)
        return nil
    }
}

/// A sighting of `hex` (one frame) from 11:22:33:44:55:66, or another address.
func monitorSighting(_ hex: String, rssi: Int8 = -60, atMs: Int64 = 0,
                     address: [UInt8] = [0x66, 0x55, 0x44, 0x33, 0x22, 0x11]) -> Sighting {
    let r = AdvertisingReport(eventType: 3, addressType: 0, address: address, rssi: rssi, data: bytes(hex))
    let all = Sighting.all(in: r, atMs: atMs)
    precondition(all.count == 1, "not one frame: \(hex)")
    return all[0]
}

/// The study guide's beacon, expected as `[expect.lobby]`; 5 lines.
let lobbyExpectation = """
    [expect.lobby]
    type = "altbeacon"
    uuid = "2f234454-cf6d-4a0f-adf2-f4911ba9ffa6"
    major = 1
    minor = 2

    """

extension String {
    /// `self` with its start `prefix` replaced (the test's own text: fails loudly otherwise).
    func replacingPrefix(_ prefix: String, with new: String) -> String {
        precondition(hasPrefix(prefix), "\(self) does not start with \(prefix)")
        return new + dropFirst(prefix.count)
    }
}

extension Expectation {
    func with(name: String) -> Expectation { Expectation(name: name, type: type, fields: fields) }
}
