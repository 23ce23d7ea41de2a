import XCTest
@testable import BeaconKit

/// `altbeacond check` with every frame: each `advertising-data[<name>]:` line, byte for byte.
final class FrameCheckReportTests: XCTestCase {
    func lines(_ text: String, file: StaticString = #filePath, line: UInt = #line) -> [String] {
        guard let c = config(text, file: file, line: line) else { return [] }
        return CheckReport.render(c, path: "/c.toml").split(separator: "\n").map(String.init)
    }

    func testEveryFrameLine() throws {
        let out = lines(minimalBeacon + FrameConfigTests.eddystoneUID + "url = 'https://www.example.com/'\ntlm = true\n[ibeacon]\nmajor = 7\n[overflow]\n")
        let data = out.filter { $0.hasPrefix("advertising-data") }
        XCTAssertEqual(data, [
            "advertising-data: 0201061bff1801beac2f234454cf6d4a0fadf2f4911ba9ffa600010002c500",
            "advertising-data[altbeacon]: 0201061bff1801beac2f234454cf6d4a0fadf2f4911ba9ffa600010002c500",
            "advertising-data[ibeacon]: 0201061aff4c0002152f234454cf6d4a0fadf2f4911ba9ffa600070002c5",
            "advertising-data[overflow-area]: 02010614ff4c000101aa0007000200000000000000000000",
            "advertising-data[eddystone-uid]: 0201060303aafe1716aafe00eeedd1ebeac04e5defa0170123456789ab0000",
            "advertising-data[eddystone-url]: 0201060303aafe0e16aafe10ee016578616d706c6500",
            "advertising-data[eddystone-tlm]: 0201060303aafe1116aafe2000000080000000000000000000",
        ])
        XCTAssertTrue(out.contains("frames:             altbeacon, ibeacon, overflow-area, eddystone-uid, eddystone-url, eddystone-tlm"), out.joined(separator: "\n"))
        // The Overflow Area frame decoded: the matching byte as people write it, and its position.
        let overflow = try XCTUnwrap(out.firstIndex(of: "overflow-area:"), out.joined(separator: "\n"))
        XCTAssertEqual(Array(out[(overflow + 1)...(overflow + 4)]), ["  matching_byte:    0xaa", "  major:            7", "  minor:            2", "  position:         0"])
        XCTAssertTrue(out.contains("  url:              https://www.example.com/"))
        XCTAssertTrue(out.contains("  namespace:        edd1ebeac04e5defa017"))
        // The hand-typed lines of each frame: LE Set Advertising Data, length byte, data, zero padding.
        XCTAssertTrue(out.contains("  hcitool -i hci0 cmd 0x08 0x0008 1e 02 01 06 1a ff 4c 00 02 15 2f 23 44 54 cf 6d 4a 0f ad f2 f4 91 1b a9 ff a6 00 07 00 02 c5 00   # ibeacon"),
                      out.joined(separator: "\n"))
    }

    /// The fused beacon alone: with AltBeacon off the plain line is the iBeacon, then the Overflow Area.
    func testFusedBeaconLines() {
        let data = lines(minimalBeacon + "altbeacon = false\n[overflow]\nmatching_byte = 0x01\n[ibeacon]\n").filter { $0.hasPrefix("advertising-data") }
        XCTAssertEqual(data, ["advertising-data: 0201061aff4c0002152f234454cf6d4a0fadf2f4911ba9ffa600010002c5",
                              "advertising-data[ibeacon]: 0201061aff4c0002152f234454cf6d4a0fadf2f4911ba9ffa600010002c5",
                              "advertising-data[overflow-area]: 02010614ff4c000101010001000200000000000000000000"])
    }

    /// With AltBeacon off, the plain `advertising-data:` line is the first frame on air.
    func testPrimaryLineWithoutAltBeacon() {
        let data = lines(minimalBeacon + "altbeacon = false\n[eddystone]\nurl = 'http://a.org'\n").filter { $0.hasPrefix("advertising-data") }
        XCTAssertEqual(data, ["advertising-data: 0201060303aafe0816aafe10ee026108",
                              "advertising-data[eddystone-url]: 0201060303aafe0816aafe10ee026108"])
    }

    func testAltBeaconAloneHasOneFrameLine() {
        let data = lines(minimalBeacon).filter { $0.hasPrefix("advertising-data") }
        XCTAssertEqual(data, ["advertising-data: 0201061bff1801beac2f234454cf6d4a0fadf2f4911ba9ffa600010002c500",
                              "advertising-data[altbeacon]: 0201061bff1801beac2f234454cf6d4a0fadf2f4911ba9ffa600010002c500"])
    }
}
