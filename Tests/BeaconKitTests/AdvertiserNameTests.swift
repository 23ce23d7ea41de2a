import XCTest
@testable import BeaconKit

/// The advertiser with `[beacon] name` (SPEC §12): every non-connectable frame goes out ADV_SCAN_IND
/// with the name in its scan response, on legacy rotation and on extended sets, against the
/// controller model (`AdvertisingState`: a scan response on a set that is not scannable is refused).
final class AdvertiserNameTests: XCTestCase {
    static let hall: [UInt8] = [0x05, 0x09] + Array("hall".utf8)

    func named(_ extra: String = "", name: String = "hall") -> BeaconConfig {
        var c = BenchConfigs.make(extra)
        c.name = name
        return c
    }

    func testLegacyControllerSendsTheNameAsScanResponseOfAnADVSCANIND() throws {
        var b = AdvertiserBench(extended: false)
        XCTAssertNoThrow(try XCTUnwrap(b.arm(named())).get())
        XCTAssertEqual(b.ops, [.readLocalVersion, .leReadLocalFeatures, .leSetAdvertiseEnable, .leSetAdvertisingParameters,
                               .leSetAdvertisingData, .leSetScanResponseData, .leSetAdvertiseEnable])
        XCTAssertEqual(b.sent[3].params[4], 0x02, "ADV_SCAN_IND")
        XCTAssertEqual(b.sent[5].params, [0x06] + Self.hall + [UInt8](repeating: 0, count: 25))
        XCTAssertEqual(b.controller.legacy.scanResponse, Self.hall)
        XCTAssertTrue(b.controller.legacy.scannable)
        XCTAssertEqual(b.p.controller, b.controller)
    }

    func testWithoutANameTheStudyGuidesBytesAreUnchanged() throws {
        for name in ["", nil] as [String?] {
            var b = AdvertiserBench(extended: false)
            var c = BenchConfigs.make()
            c.name = name
            XCTAssertNoThrow(try XCTUnwrap(b.arm(c)).get())
            XCTAssertEqual(b.count(.leSetScanResponseData), 0)
            XCTAssertEqual(b.sent.first { $0.op == .leSetAdvertisingParameters }?.params, AdvertiserProcedureTests.studyGuideParameters)
        }
    }

    func testEachSetIsScannableWithTheNameAfterItsParametersBeforeItsEnable() throws {
        var b = AdvertiserBench(extended: true)
        let c = named("[ibeacon]\n[gatt_identity]\n")
        XCTAssertNoThrow(try XCTUnwrap(b.arm(c)).get())
        XCTAssertEqual(b.p.mode, "extended, sets 3 2 1")
        XCTAssertEqual(b.controller.sets[3]?.scanResponse, Self.hall)
        XCTAssertEqual(b.controller.sets[2]?.scanResponse, Self.hall)
        XCTAssertEqual(b.controller.sets[1]?.scanResponse, [0x0a, 0x09] + Array("AltBeacon".utf8), "the GATT identity keeps its own")
        for h: UInt8 in [3, 2] {
            let mine = b.sent.enumerated().filter { $0.element.params.first == h }
            let order = mine.map(\.element.op)
            let params = try XCTUnwrap(order.firstIndex(of: .leSetExtendedAdvertisingParameters))
            let response = try XCTUnwrap(order.firstIndex(of: .leSetExtendedScanResponseData))
            XCTAssertLessThan(params, response)
            XCTAssertEqual(Array(mine[params].element.params[1...2]), [0x12, 0x00], "set \(h): scannable legacy ADV_SCAN_IND")
            XCTAssertEqual(mine[response].element.params, [h, 0x03, 0x01, 0x06] + Self.hall)
        }
        XCTAssertEqual(b.p.controller, b.controller)
    }

    func testAScanResponseOnANonScannableSetIsRefusedByTheModel() {
        var s = AdvertisingState()
        s.apply(.leSetExtendedAdvertisingParameters, LESetExtendedAdvertisingParameters(handle: 1, intervalMs: 100, txPowerDbm: nil).parameters)
        XCTAssertEqual(s.refusal(.leSetExtendedScanResponseData, LESetExtendedScanResponseData(handle: 1, data: Self.hall).parameters, supportedSets: 4),
                       .invalidParameters)
        XCTAssertNil(s.refusal(.leSetExtendedScanResponseData, LESetExtendedScanResponseData(handle: 1, data: []).parameters, supportedSets: 4),
                     "discarding data is allowed")
        s.apply(.leSetExtendedAdvertisingParameters, LESetExtendedAdvertisingParameters(handle: 1, intervalMs: 100, txPowerDbm: nil, pdu: .scannable).parameters)
        XCTAssertNil(s.refusal(.leSetExtendedScanResponseData, LESetExtendedScanResponseData(handle: 1, data: Self.hall).parameters, supportedSets: 4))
        XCTAssertEqual(s.refusal(.leSetExtendedScanResponseData, LESetExtendedScanResponseData(handle: 1, data: Array(repeating: 1, count: 32)).parameters, supportedSets: 4),
                       .invalidParameters, "a legacy PDU holds 31 bytes")
    }

    func testLegacyRotationCarriesTheNameAndSwitchesPDUForTheGATTIdentitysTurn() throws {
        var b = AdvertiserBench(extended: false)
        let c = named("[ibeacon]\n[gatt_identity]\n")
        XCTAssertEqual(try XCTUnwrap(b.arm(c)).get(), AirSummary(rotates: true))
        XCTAssertEqual(b.controller.legacy.scanResponse, Self.hall)
        // AltBeacon -> iBeacon: same PDU, same name: the data alone.
        var before = b.sent.count
        b.run(b.p.rotate(now: 1000))
        XCTAssertEqual(b.sent[before...].map(\.op), [.leSetAdvertisingData])
        XCTAssertEqual(b.controller.onAir, [BenchConfigs.payloads(c)[1]])
        // iBeacon -> GATT identity: ADV_IND and its own scan response.
        before = b.sent.count
        b.run(b.p.rotate(now: 2000))
        XCTAssertEqual(b.sent[before...].map(\.op), [.leSetAdvertiseEnable, .leSetAdvertisingParameters, .leSetAdvertisingData,
                                                    .leSetScanResponseData, .leSetAdvertiseEnable])
        XCTAssertEqual(b.controller.legacy.scanResponse, [0x0a, 0x09] + Array("AltBeacon".utf8))
        XCTAssertTrue(b.controller.legacy.connectable)
        // Back to AltBeacon: ADV_SCAN_IND with the name again.
        before = b.sent.count
        b.run(b.p.rotate(now: 3000))
        XCTAssertEqual(b.sent[before...].map(\.op), [.leSetAdvertiseEnable, .leSetAdvertisingParameters, .leSetAdvertisingData,
                                                    .leSetScanResponseData, .leSetAdvertiseEnable])
        XCTAssertEqual(b.sent.last { $0.op == .leSetAdvertisingParameters }?.params[4], 0x02)
        XCTAssertEqual(b.controller.legacy.scanResponse, Self.hall)
        XCTAssertEqual(b.events.suffix(3), [.rotated(nil), .rotated(nil), .rotated(nil)])
    }

    func testTheProbeRestoresAScanResponseSomeoneOverwrote() throws {
        var b = AdvertiserBench(extended: false)
        XCTAssertNoThrow(try XCTUnwrap(b.arm(named())).get())
        b.controller.apply(.leSetScanResponseData, LESetScanResponseData(data: [0x04, 0x09, 0x61, 0x62, 0x63]).parameters)
        // One probe in `scanResponseProbeEvery` re-sends it (the HCI monitor repairs a write it sees
        // at once; this is the net for one it missed); the others cost no command for it.
        let every = FrameRotation.scanResponseProbeEvery
        for k in 1...every {
            let before = b.sent.count
            b.run(b.p.probe(now: 5000 * Int64(k)))
            XCTAssertEqual(b.events.last, .probed(nil))
            XCTAssertEqual(b.sent[before...].contains { $0.op == .leSetScanResponseData }, k == every, "probe \(k)")
        }
        XCTAssertEqual(b.controller.legacy.scanResponse, Self.hall)
    }

    func testAShortIntervalRefusedForADVSCANINDFallsBackTo100Ms() throws {
        var b = AdvertiserBench(extended: false)
        // Bluetooth 4.x: scannable and non-connectable undirected advertising under 100 ms refused.
        b.refuse = { op, p in op == .leSetAdvertisingParameters && p[4] == 0x02 && p[0] < 160 && p[1] == 0 ? .invalidParameters : nil }
        XCTAssertNoThrow(try XCTUnwrap(b.arm(named("[bluetooth]\ninterval_ms = 50"))).get())
        XCTAssertEqual(b.sent.filter { $0.op == .leSetAdvertisingParameters }.map { $0.params[0] }, [80, 160])
        XCTAssertEqual(b.controller.legacy.scanResponse, Self.hall)
    }

    func testARenameSendsOnlyTheScanResponses() throws {
        var b = AdvertiserBench(extended: true)
        XCTAssertNoThrow(try XCTUnwrap(b.arm(named("[ibeacon]\n"))).get())
        let before = b.sent.count
        XCTAssertNoThrow(try XCTUnwrap(b.arm(named("[ibeacon]\n", name: "lobby"), scope: .data, generation: 2)).get())
        XCTAssertEqual(Set(b.sent[before...].map(\.op)), [.leSetExtendedAdvertisingData, .leSetExtendedScanResponseData])
        XCTAssertEqual(b.controller.sets.values.map(\.scanResponse), [[0x06, 0x09] + Array("lobby".utf8), [0x06, 0x09] + Array("lobby".utf8)])
    }

    /// An edit of one frame's data leaves the name as it was: only that set's data goes.
    func testADataEditDoesNotSendTheUnchangedNameAgain() throws {
        var b = AdvertiserBench(extended: true)
        XCTAssertNoThrow(try XCTUnwrap(b.arm(named("[ibeacon]\nmajor = 7\n"))).get())
        let before = b.sent.count
        XCTAssertNoThrow(try XCTUnwrap(b.arm(named("[ibeacon]\nmajor = 8\n"), scope: .data, generation: 2)).get())
        XCTAssertEqual(b.sent[before...].map(\.op), [.leSetExtendedAdvertisingData])
    }

    func testAnotherProgramsScanResponseOverOursIsInterference() throws {
        var b = AdvertiserBench(extended: false)
        XCTAssertNoThrow(try XCTUnwrap(b.arm(named())).get())
        let ours = b.p.onAir
        XCTAssertNil(classifyForeignCommand(.leSetScanResponseData, LESetScanResponseData(data: Self.hall).parameters, onAir: ours))
        // The kernel's own local name (bluetoothd's) in the legacy scan response: ours is gone.
        XCTAssertEqual(classifyForeignCommand(.leSetScanResponseData, LESetScanResponseData(data: [0x06, 0x09, 0x42, 0x6c, 0x75, 0x65, 0x5a]).parameters, onAir: ours),
                       .advertisingOverwritten)
        // Without a name nothing of ours is scannable: a scan response changes nothing on air.
        var plain = AdvertiserBench(extended: false)
        XCTAssertNoThrow(try XCTUnwrap(plain.arm(named(name: ""))).get())
        XCTAssertNil(classifyForeignCommand(.leSetScanResponseData, LESetScanResponseData(data: [0x02, 0x09, 0x42]).parameters, onAir: plain.p.onAir))
        // On sets: only ours count.
        var sets = AdvertiserBench(extended: true)
        XCTAssertNoThrow(try XCTUnwrap(sets.arm(named("[ibeacon]\n"))).get())
        XCTAssertEqual(classifyForeignCommand(.leSetExtendedScanResponseData, [3, 0x03, 0x01, 0x02, 0x01, 0x42], onAir: sets.p.onAir), .advertisingOverwritten)
        XCTAssertNil(classifyForeignCommand(.leSetExtendedScanResponseData, [0, 0x03, 0x01, 0x02, 0x01, 0x42], onAir: sets.p.onAir))
        XCTAssertNil(classifyForeignCommand(.leSetExtendedScanResponseData, [3, 0x03, 0x01, 0x06] + Self.hall, onAir: sets.p.onAir))
    }
}
