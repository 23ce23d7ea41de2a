import XCTest
@testable import BeaconKit

/// The HCI commands and events of the GATT identity's connectable advertising, against bytes
/// worked out from the Core specification (Vol 4 Part E 7.8.5, 7.8.8, 7.8.53, 7.8.55, 7.7.5, 7.7.65.1).
final class HCIConnectableTests: XCTestCase {
    func testConnectableLegacyParametersUseADVIND() {
        XCTAssertEqual(LESetAdvertisingParameters(intervalMs: 100, connectable: true).packet,
                       [0x01, 0x06, 0x20, 0x0f, 0xa0, 0x00, 0xa0, 0x00, 0x00, 0x00, 0, 0, 0, 0, 0, 0, 0, 0x07, 0x00])
        XCTAssertEqual(LESetAdvertisingParameters(intervalMs: 100).parameters[4], 0x03, "the frames stay ADV_NONCONN_IND")
    }

    func testConnectableExtendedParametersAreLegacyADVIND() {
        let p = LESetExtendedAdvertisingParameters(handle: 1, intervalMs: 100, txPowerDbm: nil, connectable: true).parameters
        XCTAssertEqual(Array(p[0..<3]), [0x01, 0x13, 0x00], "handle 1, properties connectable|scannable|legacy")
        XCTAssertEqual(Array(LESetExtendedAdvertisingParameters(handle: 1, intervalMs: 100, txPowerDbm: nil).parameters[1..<3]), [0x10, 0x00])
    }

    func testScanResponseCommands() {
        let name = GATTIdentity(identifier: "x").scanResponse
        XCTAssertEqual(name, [0x0a, 0x09, 0x41, 0x6c, 0x74, 0x42, 0x65, 0x61, 0x63, 0x6f, 0x6e])
        let legacy = LESetScanResponseData(data: name).packet
        XCTAssertEqual(Array(legacy[0..<5]), [0x01, 0x09, 0x20, 0x20, 0x0b])
        XCTAssertEqual(legacy.count, 4 + 32)
        XCTAssertEqual(LESetExtendedScanResponseData(handle: 0, data: name).packet,
                       [0x01, 0x38, 0x20, 0x0f, 0x00, 0x03, 0x01, 0x0b] + name)
    }

    func testLEConnectionCompleteAsPeripheral() {
        // LE Meta, Connection Complete: status 0, handle 0x002a, role 1 (peripheral), peer type 0,
        // peer 00:AA:01:01:00:00 (on-air order), interval, latency, timeout, accuracy.
        let packet: [UInt8] = [0x04, 0x3e, 0x13, 0x01, 0x00, 0x2a, 0x00, 0x01, 0x00,
                               0x00, 0x00, 0x01, 0x01, 0xaa, 0x00, 0x28, 0x00, 0x00, 0x00, 0xd0, 0x07, 0x00]
        XCTAssertEqual(try HCIEvent.decode(packet[...]).get(),
                       .leConnectionComplete(status: .success, handle: 42, peripheral: true, peer: [0, 0, 1, 1, 0xaa, 0], peerRandom: false))
        // Enhanced (0x0a), random peer, as a central.
        var enhanced: [UInt8] = [0x04, 0x3e, 0x1f, 0x0a, 0x00, 0x01, 0x00, 0x00, 0x01, 1, 2, 3, 4, 5, 0xc6]
        enhanced += [UInt8](repeating: 0, count: 19)
        XCTAssertEqual(try HCIEvent.decode(enhanced[...]).get(),
                       .leConnectionComplete(status: .success, handle: 1, peripheral: false, peer: [1, 2, 3, 4, 5, 0xc6], peerRandom: true))
        // Cut short: an error, never a trap.
        XCTAssertEqual(HCIEvent.decode([0x04, 0x3e, 0x05, 0x01, 0x00, 0x2a, 0x00, 0x01][...]),
                       .failure(.truncated(needed: 12, had: 5)), "had: what followed the event header")
    }

    func testDisconnectionComplete() {
        XCTAssertEqual(try HCIEvent.decode([0x04, 0x05, 0x04, 0x00, 0x2a, 0x00, 0x13][...]).get(),
                       .disconnectionComplete(status: .success, handle: 42, reason: 0x13))
        XCTAssertEqual(HCIEvent.decode([0x04, 0x05, 0x02, 0x00, 0x2a][...]), .failure(.truncated(needed: 4, had: 2)))
    }
}
