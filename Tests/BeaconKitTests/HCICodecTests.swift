import XCTest
@testable import BeaconKit

/// Golden bytes: the study-guide commands of SPEC §3 and the Core Spec layouts.
final class HCICodecTests: XCTestCase {
    let rig = BeaconIdentity(
        uuid: [0x2f, 0x23, 0x44, 0x54, 0xcf, 0x6d, 0x4a, 0x0f, 0xad, 0xf2, 0xf4, 0x91, 0x1b, 0xa9, 0xff, 0xa6],
        major: 1, minor: 2)

    func testLegacyCommandsMatchTheStudyGuide() {
        XCTAssertEqual(LESetAdvertisingParameters(intervalMs: 100).hcitoolLine(adapter: "hci0"),
                       "hcitool -i hci0 cmd 0x08 0x0006 a0 00 a0 00 03 00 00 00 00 00 00 00 00 07 00")
        // The guide's line has a 33rd byte (an extra 00); the command takes exactly 32.
        XCTAssertEqual(LESetAdvertisingData(data: AltBeacon.advertisingData(rig)).hcitoolLine(adapter: "hci0"),
                       "hcitool -i hci0 cmd 0x08 0x0008 1f 02 01 06 1b ff 18 01 be ac 2f 23 44 54 cf 6d 4a 0f ad f2 f4 91 1b a9 ff a6 00 01 00 02 c5 00")
        XCTAssertEqual(LESetAdvertiseEnable(true).hcitoolLine(adapter: "hci1"), "hcitool -i hci1 cmd 0x08 0x000a 01")
    }

    func testPacketFraming() {
        XCTAssertEqual(LESetAdvertiseEnable(false).packet, [0x01, 0x0a, 0x20, 0x01, 0x00])
        XCTAssertEqual(Reset().packet, [0x01, 0x03, 0x0c, 0x00])
        XCTAssertEqual(ReadLocalVersion().packet, [0x01, 0x01, 0x10, 0x00])
        XCTAssertEqual(LEReadLocalSupportedFeatures().packet, [0x01, 0x03, 0x20, 0x00])
        let data = LESetAdvertisingData(data: [0x02, 0x01, 0x06]).packet
        XCTAssertEqual(data.count, 4 + 32)
        XCTAssertEqual(Array(data[0..<8]), [0x01, 0x08, 0x20, 0x20, 0x03, 0x02, 0x01, 0x06])
        XCTAssertTrue(data[8...].allSatisfy { $0 == 0 })
    }

    func testIntervals() {
        XCTAssertEqual(LESetAdvertisingParameters(intervalMs: 20).intervalUnits, 0x20)
        XCTAssertEqual(LESetAdvertisingParameters(intervalMs: 10240).intervalUnits, 0x4000)
        XCTAssertEqual(AdvertisingInterval.milliseconds(units: 0xa0), 100)
    }

    func testExtendedCommandsWithLegacyPDU() {
        let p = LESetExtendedAdvertisingParameters(handle: 2, intervalMs: 100, txPowerDbm: -4).parameters
        XCTAssertEqual(p, [0x02, 0x10, 0x00, 0xa0, 0x00, 0x00, 0xa0, 0x00, 0x00, 0x07, 0x00, 0x00,
                           0, 0, 0, 0, 0, 0, 0x00, 0xfc, 0x01, 0x00, 0x01, 0x00, 0x00])
        XCTAssertEqual(LESetExtendedAdvertisingParameters(handle: 0, intervalMs: 100, txPowerDbm: nil).parameters[19], 0x7f)
        XCTAssertEqual(LESetExtendedAdvertisingData(handle: 2, data: [0xaa, 0xbb]).parameters, [0x02, 0x03, 0x01, 0x02, 0xaa, 0xbb])
        XCTAssertEqual(LESetExtendedAdvertisingEnable(true, handle: 2).parameters, [0x01, 0x01, 0x02, 0x00, 0x00, 0x00])
        XCTAssertEqual(LERemoveAdvertisingSet(handle: 2).packet, [0x01, 0x3c, 0x20, 0x01, 0x02])
        XCTAssertEqual(HCIOpcode.leSetExtendedAdvertisingParameters.rawValue, 0x2036)
    }

    /// The static random fallback (SPEC §11): Core v5.3 Vol 4 Part E §7.8.4 (opcode 0x2005, six
    /// address octets least significant first), §7.8.52 (0x2035, handle then address), and the
    /// Own_Address_Type octet of both parameter commands set to 0x01.
    func testRandomAddressCommands() throws {
        let a = try XCTUnwrap(BluetoothAddress("C3:12:34:56:78:9A"))
        XCTAssertEqual(LESetRandomAddress(a).packet, [0x01, 0x05, 0x20, 0x06, 0x9a, 0x78, 0x56, 0x34, 0x12, 0xc3])
        XCTAssertEqual(LESetAdvertisingSetRandomAddress(handle: 3, a).packet,
                       [0x01, 0x35, 0x20, 0x07, 0x03, 0x9a, 0x78, 0x56, 0x34, 0x12, 0xc3])
        XCTAssertEqual(LESetAdvertisingParameters(intervalMs: 100, ownAddress: .random).parameters,
                       [0xa0, 0x00, 0xa0, 0x00, 0x03, 0x01, 0x00, 0, 0, 0, 0, 0, 0, 0x07, 0x00])
        XCTAssertEqual(LESetExtendedAdvertisingParameters(handle: 2, intervalMs: 100, txPowerDbm: -4, ownAddress: .random).parameters,
                       [0x02, 0x10, 0x00, 0xa0, 0x00, 0x00, 0xa0, 0x00, 0x00, 0x07, 0x01, 0x00,
                        0, 0, 0, 0, 0, 0, 0x00, 0xfc, 0x01, 0x00, 0x01, 0x00, 0x00])
        XCTAssertEqual(HCIOpcode.leSetRandomAddress.name, "LE Set Random Address")
        XCTAssertEqual(HCIOpcode.leSetAdvertisingSetRandomAddress.name, "LE Set Advertising Set Random Address")
    }

    func testScanCommands() {
        XCTAssertEqual(LESetScanParameters().parameters, [0x00, 0x10, 0x00, 0x10, 0x00, 0x00, 0x00])
        XCTAssertEqual(LESetScanEnable(true).parameters, [0x01, 0x00])
        XCTAssertEqual(LESetExtendedScanParameters().parameters, [0x00, 0x00, 0x01, 0x00, 0x10, 0x00, 0x10, 0x00])
        XCTAssertEqual(LESetExtendedScanEnable(false).parameters, [0, 0, 0, 0, 0, 0])
    }

    func testOpcodeNamesAreTableDriven() {
        XCTAssertEqual(HCIOpcode.leSetAdvertisingData.description, "LE Set Advertising Data (0x2008)")
        XCTAssertEqual(HCIOpcode(rawValue: 0xfc01).name, "Unknown")
        XCTAssertEqual(HCIStatus.commandDisallowed.description, "Command Disallowed (0x0c)")
    }

    func testCommandCompleteAndStatus() {
        XCTAssertEqual(HCIEvent.decode([0x04, 0x0e, 0x04, 0x01, 0x0a, 0x20, 0x0c][...]),
                       .success(.commandComplete(opcode: .leSetAdvertiseEnable, returnParameters: [0x0c])))
        XCTAssertEqual(HCIEvent.decode([0x04, 0x0f, 0x04, 0x01, 0x01, 0x03, 0x0c][...]),
                       .success(.commandStatus(opcode: .reset, status: .unknownCommand)))
        XCTAssertEqual(HCIEvent.decode([0x04, 0x10, 0x01, 0x07][...]), .success(.hardwareError(code: 7)))
        XCTAssertEqual(HCIEvent.decode([0x04, 0xfd, 0x06, 0x01, 0x00, 0x04, 0x00, 0x00, 0x00][...]),
                       .success(.deviceEvent(kind: 4, index: 0)))
    }

    func testTruncatedAndOverlongEventsAreErrors() {
        XCTAssertEqual(HCIEvent.decode([][...]), .failure(.truncated(needed: 1, had: 0)))
        XCTAssertEqual(HCIEvent.decode([0x02, 0x00][...]), .failure(.notAnEvent(packetType: 2)))
        XCTAssertEqual(HCIEvent.decode([0x04, 0x0e][...]), .failure(.truncated(needed: 3, had: 2)))
        XCTAssertEqual(HCIEvent.decode([0x04, 0x0e, 0x05, 0x01, 0x0a][...]), .failure(.lengthMismatch(declared: 5, actual: 2)))
        XCTAssertEqual(HCIEvent.decode([0x04, 0x0e, 0x02, 0x01, 0x0a][...]), .failure(.truncated(needed: 3, had: 2)))
        XCTAssertEqual(HCIEvent.decode([0x04, 0x0f, 0x05, 0x00, 0x01, 0x03, 0x0c, 0x00][...]), .failure(.lengthMismatch(declared: 4, actual: 5)))
        // Every prefix of a valid advertising report either decodes or is an error: never a trap.
        let report: [UInt8] = [0x04, 0x3e, 0x0c, 0x02, 0x01, 0x03, 0x00, 1, 2, 3, 4, 5, 6, 0x00, 0xc5]
        for n in 0...report.count { _ = HCIEvent.decode(report[0..<n]) }
    }

    func testAdvertisingReportDecoding() {
        var pkt: [UInt8] = [0x04, 0x3e, 0, 0x02, 0x01, 0x03, 0x00, 1, 2, 3, 4, 5, 6, 31]
        pkt += AltBeacon.advertisingData(rig) + [0xc0]
        pkt[2] = UInt8(pkt.count - 3)
        guard case .success(.advertisingReports(let reports)) = HCIEvent.decode(pkt[...]) else { return XCTFail() }
        XCTAssertEqual(reports.count, 1)
        XCTAssertEqual(reports[0].addressString, "06:05:04:03:02:01")
        XCTAssertEqual(reports[0].rssi, -64)
        XCTAssertEqual(AltBeacon.find(inAdvertisingData: reports[0].data[...]), rig)
    }

    func testMonitorPackets() {
        let cmd: [UInt8] = [0x02, 0x00, 0x00, 0x00, 0x04, 0x00, 0x0a, 0x20, 0x01, 0x00]
        guard case .success(let p) = MonitorPacket.decode(cmd[...]) else { return XCTFail() }
        XCTAssertEqual(p.kind, .command)
        XCTAssertEqual(p.command?.opcode, .leSetAdvertiseEnable)
        XCTAssertEqual(p.command?.parameters, [0x00])
        XCTAssertEqual(MonitorPacket.decode([0x02, 0x00, 0x00][...]), .failure(.truncated(needed: 6, had: 3)))
        XCTAssertEqual(MonitorPacket.decode([0x02, 0x00, 0x00, 0x00, 0x09, 0x00, 0x01][...]),
                       .failure(.lengthMismatch(declared: 9, actual: 1)))
        // A command whose own length overruns the payload is not a command.
        let bad = MonitorPacket(opcode: 2, index: 0, payload: [0x0a, 0x20, 0x05, 0x00])
        XCTAssertNil(bad.command)
    }

    func testControllerInfo() {
        // Read Local Version: status, HCI 5.0 (9), revision, LMP 5.0, manufacturer 0x000f (Broadcom), subversion
        let version: [UInt8] = [0x00, 0x09, 0x00, 0x00, 0x09, 0x0f, 0x00, 0x00, 0x00]
        XCTAssertEqual(LocalVersionReply(returnParameters: version), LocalVersionReply(hciVersion: 9, manufacturer: 15))
        XCTAssertNil(LocalVersionReply(returnParameters: Array(version.prefix(8))))
        let features: [UInt8] = [0x00, 0x00, 0x10, 0, 0, 0, 0, 0, 0x80]
        XCTAssertEqual(LEFeaturesReply(returnParameters: features)?.bits, 1 << 12 | 1 << 63)
        XCTAssertNil(LEFeaturesReply(returnParameters: Array(features.prefix(8))))
        XCTAssertEqual(AdvertisingSetCountReply(returnParameters: [0x00, 0x10])?.count, 16)
        XCTAssertNil(AdvertisingSetCountReply(returnParameters: [0x00]))
        XCTAssertTrue(ReadLocalVersion.Reply.self == LocalVersionReply.self)
        XCTAssertTrue(LESetAdvertiseEnable.Reply.self == HCIStatusReply.self)
        XCTAssertTrue(ControllerInfo(hciVersion: 9, manufacturer: 0, leFeatures: 1 << 12).hasExtendedAdvertising)
        XCTAssertEqual(ControllerInfo(hciVersion: 6, manufacturer: 0, leFeatures: 0).versionName, "Bluetooth 4.0")
    }
}
