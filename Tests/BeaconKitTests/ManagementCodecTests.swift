import XCTest
@testable import BeaconKit

/// Golden bytes of the management packets, laid out as BlueZ's doc/mgmt-api.txt gives them:
/// a header of Command/Event Code, Controller Index and Parameter Length (little-endian), then
/// the parameters.
final class ManagementCodecTests: XCTestCase {
    let piAddress = BluetoothAddress("B8:27:EB:18:69:7E")!

    func testCommands() {
        // Read Unconfigured Controller Index List: Controller Index <non-controller> (0xFFFF).
        XCTAssertEqual(ManagementCommand.readUnconfiguredIndexList().bytes, [0x36, 0x00, 0xff, 0xff, 0x00, 0x00])
        XCTAssertEqual(ManagementCommand.readConfigurationInfo(index: 0).bytes, [0x37, 0x00, 0x00, 0x00, 0x00, 0x00])
        // Set Public Address: Address (6 Octets), least significant first.
        XCTAssertEqual(ManagementCommand.setPublicAddress(index: 0, address: piAddress).bytes,
                       [0x39, 0x00, 0x00, 0x00, 0x06, 0x00, 0x7e, 0x69, 0x18, 0xeb, 0x27, 0xb8])
        let s = BluetoothAddress("C2:1F:BD:14:B4:B8")!
        XCTAssertEqual(ManagementCommand.setStaticAddress(index: 0x0102, address: s).bytes,
                       [0x2b, 0x00, 0x02, 0x01, 0x06, 0x00, 0xb8, 0xb4, 0x14, 0xbd, 0x1f, 0xc2])
        // Disconnect (0x0014): address, then LE public (1) or LE random (2)
        XCTAssertEqual(ManagementCommand.disconnect(index: 0, address: s, random: true).bytes,
                       [0x14, 0x00, 0x00, 0x00, 0x07, 0x00, 0xb8, 0xb4, 0x14, 0xbd, 0x1f, 0xc2, 0x02])
        XCTAssertEqual(ManagementCommand.disconnect(index: 1, address: s, random: false).bytes.suffix(8),
                       [0x07, 0x00, 0xb8, 0xb4, 0x14, 0xbd, 0x1f, 0xc2, 0x01].suffix(8))
    }

    func testCommandCompleteOfConfigurationInfo() {
        // Manufacturer 15 (Broadcom), Supported_Options public address, Missing_Options public address.
        let packet: [UInt8] = [0x01, 0x00, 0x00, 0x00, 0x0d, 0x00, 0x37, 0x00, 0x00,
                               0x0f, 0x00, 0x02, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00]
        guard case .success(.commandComplete(let op, let index, let status, let p)) = ManagementEvent.decode(packet[...]) else {
            return XCTFail("not a Command Complete")
        }
        XCTAssertEqual(op, ManagementOpcode.readConfigurationInfo.rawValue)
        XCTAssertEqual(index, 0)
        XCTAssertEqual(status, .success)
        let info = ManagementReply.configurationInfo(p)
        XCTAssertEqual(info?.manufacturer, 15)
        XCTAssertEqual(info?.supported, .publicAddress)
        XCTAssertEqual(info?.missing, .publicAddress)
        XCTAssertEqual(info?.missing.description, "public address")
        XCTAssertNil(ManagementReply.configurationInfo(Array(p.dropLast())))
    }

    func testCommandStatusAndReplies() {
        XCTAssertEqual(ManagementEvent.decode([0x02, 0x00, 0x00, 0x00, 0x03, 0x00, 0x39, 0x00, 0x0c][...]),
                       .success(.commandStatus(opcode: 0x0039, index: 0, status: .notSupported)))
        XCTAssertEqual(ManagementStatus.notSupported.description, "Not Supported (0x0c)")
        XCTAssertEqual(ManagementStatus(rawValue: 0x42).description, "0x42")
        XCTAssertEqual(ManagementReply.indexList([0x02, 0x00, 0x00, 0x00, 0x03, 0x00]), [0, 3])
        XCTAssertEqual(ManagementReply.indexList([0x00, 0x00]), [])
        XCTAssertNil(ManagementReply.indexList([0x02, 0x00, 0x00, 0x00, 0x03]))
        XCTAssertNil(ManagementReply.indexList([0x01]))
        XCTAssertEqual(ManagementReply.missingOptions([0x00, 0x00, 0x00, 0x00]), [])
        XCTAssertEqual(ManagementReply.missingOptions([0x01, 0x00, 0x00, 0x00]), .externalConfiguration)
        XCTAssertNil(ManagementReply.missingOptions([0x01, 0x00, 0x00]))
        XCTAssertEqual(ManagementReply.currentSettings([0x81, 0x02, 0x00, 0x00]), 0x0281)
        XCTAssertEqual(ManagementOptions(rawValue: 3).description, "external configuration, public address")
        XCTAssertEqual(ManagementOptions(rawValue: 4).description, "other options 4")
    }

    func testIndexEvents() {
        XCTAssertEqual(ManagementEvent.decode([0x1d, 0x00, 0x00, 0x00, 0x00, 0x00][...]), .success(.unconfiguredIndexAdded(index: 0)))
        XCTAssertEqual(ManagementEvent.decode([0x1e, 0x00, 0x01, 0x00, 0x00, 0x00][...]), .success(.unconfiguredIndexRemoved(index: 1)))
        XCTAssertEqual(ManagementEvent.decode([0x1f, 0x00, 0x00, 0x00, 0x04, 0x00, 0x00, 0x00, 0x00, 0x00][...]),
                       .success(.newConfigurationOptions(index: 0, missing: [])))
        // Index Added (0x0004): read, not interpreted.
        XCTAssertEqual(ManagementEvent.decode([0x04, 0x00, 0x00, 0x00, 0x00, 0x00][...]), .success(.other(code: 4, index: 0)))
    }

    func testEveryLengthIsChecked() {
        XCTAssertEqual(ManagementEvent.decode([0x01, 0x00, 0x00][...]), .failure(.truncated(needed: 6, had: 3)))
        XCTAssertEqual(ManagementEvent.decode([0x01, 0x00, 0x00, 0x00, 0x04, 0x00, 0x37, 0x00][...]),
                       .failure(.lengthMismatch(declared: 4, actual: 2)))
        XCTAssertEqual(ManagementEvent.decode([0x01, 0x00, 0x00, 0x00, 0x02, 0x00, 0x37, 0x00][...]),
                       .failure(.truncated(needed: 3, had: 2)))
        XCTAssertEqual(ManagementEvent.decode([0x02, 0x00, 0x00, 0x00, 0x00, 0x00][...]),
                       .failure(.truncated(needed: 3, had: 0)))
        XCTAssertEqual(ManagementEvent.decode([0x1f, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00][...]),
                       .failure(.truncated(needed: 4, had: 2)))
        // Every prefix of a valid packet is refused, never trapped on.
        let full: [UInt8] = [0x01, 0x00, 0x00, 0x00, 0x07, 0x00, 0x39, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00]
        for n in 0..<full.count {
            if case .success = ManagementEvent.decode(full[0..<n]) { XCTFail("prefix of \(n) bytes accepted") }
        }
        XCTAssertEqual(ManagementEvent.decode(full[...]),
                       .success(.commandComplete(opcode: 0x39, index: 0, status: .success, parameters: [0, 0, 0, 0])))
    }
}
