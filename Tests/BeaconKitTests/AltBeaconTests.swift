import XCTest
@testable import BeaconKit

final class AltBeaconTests: XCTestCase {
    /// SPEC §3: the study-guide beacon, byte for byte.
    func testStudyGuidePayload() {
        let id = BeaconIdentity(
            uuid: [0x2f, 0x23, 0x44, 0x54, 0xcf, 0x6d, 0x4a, 0x0f, 0xad, 0xf2, 0xf4, 0x91, 0x1b, 0xa9, 0xff, 0xa6],
            major: 1, minor: 2)
        XCTAssertEqual(hexString(AltBeacon.advertisingData(id)),
                       "0201061bff1801beac2f234454cf6d4a0fadf2f4911ba9ffa600010002c500")
    }
}
