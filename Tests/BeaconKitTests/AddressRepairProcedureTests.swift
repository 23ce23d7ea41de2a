import Glibc
import XCTest
@testable import BeaconKit

/// The address repair's decisions without a loop or a kernel: each test feeds the outcomes a Pi's
/// kernel gives and checks every step the procedure asks for, in order.
final class AddressRepairProcedureTests: XCTestCase {
    typealias Step = AddressRepairProcedure.Step
    let serial: UInt64 = 0x0000_0000_a1b2_c3d4
    let path = "/proc/device-tree/serial-number"
    var board: BluetoothAddress { BoardAddress.raspberryPi(serial: serial) }
    var random: BluetoothAddress { BoardAddress.staticRandom(serial: serial) }
    let chipDefault = BluetoothAddress("43:45:C0:00:1F:AC")!
    let own = BluetoothAddress("DC:A6:32:01:02:03")!
    var memory = AddressRepairMemory()

    func procedure(_ reading: BoardSerialReading? = nil) -> AddressRepairProcedure {
        AddressRepairProcedure(index: 0, serial: reading ?? .serial(serial), serialPath: path)
    }
    /// Configuration info: manufacturer 15, supported public address, missing as given.
    func configurationInfo(missing: UInt32) -> [UInt8] {
        [0x0f, 0x00, 0x02, 0x00, 0x00, 0x00, UInt8(missing & 0xff), 0, 0, 0]
    }

    func testAnUnconfiguredAdapterIsGivenTheBoardsAddressAndBroughtUpAgain() {
        var p = procedure()
        XCTAssertEqual(p.start(), [.power(up: true)])
        XCTAssertEqual(p.powered(Errno(EOPNOTSUPP), address: nil, &memory), [.send(.readConfigurationInfo(index: 0))])
        XCTAssertEqual(p.answered(.success(configurationInfo(missing: 2)), &memory),
                       [.send(.setPublicAddress(index: 0, address: board))])
        XCTAssertEqual(p.answered(.success([0, 0, 0, 0]), &memory),
                       [.notice("hci0 had no usable address; gave it \(board) (from the board serial)"), .power(up: true)])
        XCTAssertEqual(p.powered(nil, address: board, &memory), [.finished(nil)])
        // The next bring-up says nothing again.
        var q = procedure()
        XCTAssertEqual(q.powered(Errno(EOPNOTSUPP), address: nil, &memory), [.send(.readConfigurationInfo(index: 0))])
        XCTAssertEqual(q.answered(.success(configurationInfo(missing: 2)), &memory), [.send(.setPublicAddress(index: 0, address: board))])
        XCTAssertEqual(q.answered(.success([0, 0, 0, 0]), &memory), [.power(up: true)])
    }

    func testAnUnconfiguredAdapterWithoutASerialWaitsAsAMissingOneSayingSoOnce() {
        var p = procedure(.unreadable("No such file or directory"))
        _ = p.powered(Errno(EOPNOTSUPP), address: nil, &memory)
        let steps = p.answered(.success(configurationInfo(missing: 2)), &memory)
        XCTAssertEqual(steps.count, 2)
        guard case .error(let m) = steps[0] else { return XCTFail("\(steps)") }
        XCTAssertTrue(m.hasPrefix("hci0 has no usable Bluetooth address (the kernel left it unconfigured) and there is no board serial"), m)
        XCTAssertTrue(m.hasSuffix("btmgmt --index 0 public-addr <address>"), m)
        XCTAssertEqual(steps[1], .finished(.noDevice))
        var q = procedure(.unreadable("No such file or directory"))
        _ = q.powered(Errno(EOPNOTSUPP), address: nil, &memory)
        XCTAssertEqual(q.answered(.success(configurationInfo(missing: 2)), &memory), [.finished(.noDevice)], "said once")
    }

    func testAnUnconfiguredAdapterMissingMoreThanAnAddressOrRefusingItStaysMissing() {
        var p = procedure()
        _ = p.powered(Errno(EOPNOTSUPP), address: nil, &memory)
        XCTAssertEqual(p.answered(.success(configurationInfo(missing: 1)), &memory),
                       [.error("hci0 is unconfigured (missing: external configuration); altbeacond can only give it an address"), .finished(.noDevice)])
        var q = procedure()
        _ = q.powered(Errno(EOPNOTSUPP), address: nil, &memory)
        XCTAssertEqual(q.answered(.failure(ManagementRefusal("Busy")), &memory),
                       [.error("hci0 is unconfigured (HCIDEVUP: not supported) and its configuration could not be read: Busy"), .finished(.noDevice)])
        var r = procedure()
        _ = r.powered(Errno(EOPNOTSUPP), address: nil, &memory)
        _ = r.answered(.success(configurationInfo(missing: 2)), &memory)
        XCTAssertEqual(r.answered(.failure(ManagementRefusal("Not Supported")), &memory),
                       [.error("hci0 has no usable address and refused \(board) (Set Public Address: Not Supported)"), .finished(.noDevice)])
        XCTAssertNil(memory.staticRandom[0], "an unconfigured adapter cannot advertise at all")
    }

    func testAChipDefaultIsReplacedByTheBoardsAddress() {
        var p = procedure()
        XCTAssertEqual(p.powered(nil, address: chipDefault, &memory), [.power(up: false)])
        XCTAssertEqual(p.powered(nil, address: chipDefault, &memory), [.send(.setPublicAddress(index: 0, address: board))])
        XCTAssertEqual(p.answered(.success([0, 0, 0, 0]), &memory),
                       [.notice("hci0 had no usable address; gave it \(board) (from the board serial)"), .power(up: true)])
        XCTAssertEqual(p.powered(nil, address: board, &memory), [.finished(nil)])
        XCTAssertNil(memory.staticRandom[0])
    }

    func testAChipDefaultThatCannotBeReplacedAdvertisesFromTheStaticRandomAddressOnce() {
        var p = procedure()
        _ = p.powered(nil, address: chipDefault, &memory)
        _ = p.powered(nil, address: chipDefault, &memory)
        XCTAssertEqual(p.answered(.failure(ManagementRefusal("Not Supported")), &memory), [
            .warning("hci0 reports \(chipDefault), a chip default address shared by many boards, and refused \(board) (Set Public Address: Not Supported); advertising from the static random address \(random) (from the board serial)"),
            .power(up: true),
        ])
        XCTAssertEqual(p.powered(nil, address: chipDefault, &memory), [.finished(nil)])
        XCTAssertEqual(memory.staticRandom[0], random)
        // Left alone from now on: no cycling at each bring-up.
        var q = procedure()
        XCTAssertEqual(q.powered(nil, address: chipDefault, &memory), [.finished(nil)])
    }

    func testAnAddressTakenButNotUsedIsNotAskedAgain() {
        var p = procedure()
        _ = p.powered(nil, address: chipDefault, &memory)
        _ = p.powered(nil, address: chipDefault, &memory)
        _ = p.answered(.success([0, 0, 0, 0]), &memory)
        XCTAssertEqual(p.powered(Errno(EALREADY), address: chipDefault, &memory), [
            .warning("hci0 still reports \(chipDefault), a chip default address shared by many boards, after being given \(board); advertising from the static random address \(random) (from the board serial)"),
            .finished(.alreadyInProgress),
        ])
        var q = procedure()
        XCTAssertEqual(q.powered(nil, address: chipDefault, &memory), [.finished(nil)])
    }

    func testAnAdapterThatReportsAnAddressOfItsOwnAgainIsForgotten() {
        var p = procedure()
        _ = p.powered(nil, address: chipDefault, &memory)
        _ = p.powered(nil, address: chipDefault, &memory)
        _ = p.answered(.failure(ManagementRefusal("Not Supported")), &memory)
        _ = p.powered(nil, address: chipDefault, &memory)
        var q = procedure()
        XCTAssertEqual(q.powered(nil, address: own, &memory),
                       [.notice("hci0 now reports \(own), an address of its own: advertising from it"), .finished(nil)])
        XCTAssertNil(memory.staticRandom[0])
        var r = procedure()
        XCTAssertEqual(r.powered(nil, address: chipDefault, &memory), [.power(up: false)], "a default again is repaired again")
    }

    func testWhatCannotBeTakenDownStaysUpWithItsDefault() {
        var p = procedure()
        _ = p.powered(nil, address: chipDefault, &memory)
        XCTAssertEqual(p.powered(Errno(EBUSY), address: chipDefault, &memory), [.finished(nil)])
    }

    func testAChipDefaultWithoutASerialIsLeftAloneSayingWhyOnce() {
        var p = procedure(.notASerial)
        let steps = p.powered(nil, address: chipDefault, &memory)
        XCTAssertEqual(steps.last, .finished(nil))
        guard case .error(let m)? = steps.first else { return XCTFail("\(steps)") }
        XCTAssertEqual(m, "hci0 reports \(chipDefault), a chip default address shared by many boards, and the board serial in \(path) is not a serial number; give it an address, e.g. btmgmt --index 0 public-addr <address>")
        var q = procedure(.notASerial)
        XCTAssertEqual(q.powered(nil, address: chipDefault, &memory), [.finished(nil)])
    }

    func testAnswersOutOfTurnAreIgnored() {
        var p = procedure()
        XCTAssertEqual(p.answered(.success([0, 0, 0, 0]), &memory), [])
        _ = p.powered(nil, address: own, &memory)
        XCTAssertEqual(p.powered(nil, address: own, &memory), [], "finished")
    }
}
