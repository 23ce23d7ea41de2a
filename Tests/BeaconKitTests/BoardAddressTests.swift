import XCTest
@testable import BeaconKit

/// The board's own address. Golden values of the Raspberry Pi convention were checked against
/// pi-bluetooth's `bthelper` run as a shell script on the same serials (its hcitool bytes are the
/// on-air order below).
final class BoardAddressTests: XCTestCase {
    func testSerialFromTheDeviceTree() {
        XCTAssertEqual(BoardAddress.serial(fromDeviceTree: Array("00000000a1b2c3d4".utf8) + [0]), 0xa1b2_c3d4)
        XCTAssertEqual(BoardAddress.serial(fromDeviceTree: Array("10000000E4F5A6B7".utf8) + [0]), 0x1000_0000_e4f5_a6b7)
        XCTAssertEqual(BoardAddress.serial(fromDeviceTree: Array("00000000a1b2c3d4\n".utf8)), 0xa1b2_c3d4)
        XCTAssertNil(BoardAddress.serial(fromDeviceTree: []))
        XCTAssertNil(BoardAddress.serial(fromDeviceTree: [0]))
        XCTAssertNil(BoardAddress.serial(fromDeviceTree: Array("0000000000000000".utf8) + [0]))
        XCTAssertNil(BoardAddress.serial(fromDeviceTree: Array("00000000a1b2c3dz".utf8) + [0]))
        XCTAssertNil(BoardAddress.serial(fromDeviceTree: Array("100000000a1b2c3d4".utf8) + [0]))
    }

    func testRaspberryPiConvention() {
        let a = BoardAddress.raspberryPi(serial: 0xa1b2_c3d4)
        XCTAssertEqual(a.description, "B8:27:EB:18:69:7E")
        XCTAssertEqual(a.bytes, [0x7e, 0x69, 0x18, 0xeb, 0x27, 0xb8])
        XCTAssertEqual(BoardAddress.raspberryPi(serial: 0x1000_0000_e4f5_a6b7).description, "B8:27:EB:5F:0C:1D")
        XCTAssertFalse(BoardAddress.isChipDefault(a))
    }

    func testStaticRandomAddress() {
        let a = BoardAddress.staticRandom(serial: 0xa1b2_c3d4)
        XCTAssertEqual(a.description, "FC:C6:7E:34:4D:0D")
        XCTAssertTrue(a.isStaticRandom)
        XCTAssertEqual(BoardAddress.staticRandom(serial: 0x1000_0000_e4f5_a6b7).description, "C2:1F:BD:14:B4:B8")
        XCTAssertEqual(BoardAddress.staticRandom(serial: 1).description, "D4:DC:E7:AA:63:C4")
        for s: UInt64 in [1, 2, 0xffff_ffff, 0xdead_beef, .max] {
            XCTAssertTrue(BoardAddress.staticRandom(serial: s).isStaticRandom, "\(s)")
        }
        XCTAssertFalse(BluetoothAddress("C0:00:00:00:00:00")!.isStaticRandom)
        XCTAssertFalse(BluetoothAddress("FF:FF:FF:FF:FF:FF")!.isStaticRandom)
        XCTAssertFalse(BluetoothAddress("B8:27:EB:18:69:7E")!.isStaticRandom)
    }

    func testChipDefaults() {
        for text in ["00:00:00:00:00:00", "AA:AA:AA:AA:AA:AA", "43:45:C0:00:1F:AC", "43:43:A0:12:1F:AC",
                     "20:70:02:A0:00:00", "43:45:c5:00:1f:ac"] {
            XCTAssertTrue(BoardAddress.isChipDefault(BluetoothAddress(text)!), text)
        }
        XCTAssertFalse(BoardAddress.isChipDefault(BluetoothAddress("00:AA:01:00:00:23")!))
        // btbcm.c's BDADDR_BCM43430A0 {0xac, 0x1f, 0x12, 0xa0, 0x43, 0x43}: bdaddr_t order.
        XCTAssertTrue(BoardAddress.isChipDefault(BluetoothAddress(bytes: [0xac, 0x1f, 0x12, 0xa0, 0x43, 0x43])!))
        XCTAssertEqual(BoardAddress.chipDefaults.count, 14)
    }

    func testAddressText() {
        XCTAssertNil(BluetoothAddress("B8:27:EB:18:69"))
        XCTAssertNil(BluetoothAddress("B8:27:EB:18:69:7"))
        XCTAssertNil(BluetoothAddress("B8:27:EB:18:69:7G"))
        XCTAssertNil(BluetoothAddress(bytes: [1, 2, 3]))
        XCTAssertEqual(BluetoothAddress(value: 0xb827_eb18_697e).description, "B8:27:EB:18:69:7E")
        XCTAssertEqual(BluetoothAddress("b8:27:eb:18:69:7e")!.value, 0xb827_eb18_697e)
    }
}
