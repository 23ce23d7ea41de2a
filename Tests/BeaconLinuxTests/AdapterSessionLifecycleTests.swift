import BeaconKit
import XCTest
@testable import BeaconLinux

/// Edits, stops, adapter moves, restarts after SIGKILL, rotation and telemetry, end to end on a
/// scripted controller.
final class AdapterSessionLifecycleTests: ScriptedTestCase {
    func testEditDuringASlowArmEndsWithTheNewIdentityConfirmed() {
        let c = controller(legacy: true)
        c.answerDelayMs = 20
        let p = session(c, TestBeacons.config(major: 1))
        p.session.start()
        loop.run(forMs: 50)
        XCTAssertNotNil(p.session.policy.armInFlight)
        p.session.configChanged(TestBeacons.config(major: 2), generation: 2)
        XCTAssertNotNil(msUntil(c, airs: [TestBeacons.payload(major: 2)], atMostMs: 5000), dumpLog())
        loop.run(forMs: 10_000)
        XCTAssertEqual(c.onAir, [TestBeacons.payload(major: 2)])
        XCTAssertEqual(p.confirmed, [2], "generation 1 never confirmed: it never was what the config says")
        XCTAssertEqual(p.phase, .advertising)
    }

    func testEditWhileTheControllerIsSilentNeverPutsTheOldIdentityOnAir() {
        let c = controller()
        c.silent = true
        let p = session(c, TestBeacons.config(TestBeacons.three(major: 1)))
        p.session.start()
        loop.run(forMs: 100)
        p.session.configChanged(TestBeacons.config(TestBeacons.three(major: 2), major: 2), generation: 2)
        loop.run(forMs: 5000)
        c.silent = false
        let new = TestBeacons.payloads(TestBeacons.three(major: 2))
        XCTAssertNotNil(msUntil(c, airs: new, atMostMs: 10_000), dumpLog())
        loop.run(forMs: 10_000)
        XCTAssertEqual(c.onAir, new)
        XCTAssertEqual(p.confirmed, [2])
        let old = Set(TestBeacons.payloads(TestBeacons.three(major: 1))).subtracting(new)
        XCTAssertFalse(c.airHistory.contains { !old.isDisjoint(with: $0.air) }, "the old identity was on air")
    }

    func testEditWhileOnAirChangesOnlyTheData() {
        let c = controller()
        let p = session(c, TestBeacons.config(TestBeacons.three(major: 1)))
        p.session.start()
        loop.run(forMs: 3000)
        let writtenBefore = c.log.count
        p.session.configChanged(TestBeacons.config(TestBeacons.three(major: 2), major: 2), generation: 2)
        let new = TestBeacons.payloads(TestBeacons.three(major: 2))
        XCTAssertNotNil(msUntil(c, airs: new, atMostMs: 2000))
        loop.run(forMs: 100)
        XCTAssertEqual(p.confirmed, [1, 2])
        XCTAssertEqual(Array(c.log[writtenBefore...].prefix(2)), [.leSetExtendedAdvertisingData, .leSetExtendedAdvertisingData],
                       "AltBeacon and iBeacon changed; UID did not")
    }

    /// A SIGKILLed process with three frames left three sets enabled; the new one sends one frame.
    func restartWithFewerFrames(strictClear: Bool, enforcesKinds: Bool) -> [[UInt8]] {
        let c = controller(sets: 4)
        c.strictClear = strictClear
        c.enforcesCommandKinds = enforcesKinds
        for (h, payload) in zip([3, 2, 1] as [UInt8], TestBeacons.payloads(TestBeacons.three(major: 9))) {
            c.preload(handle: h, data: payload)
        }
        let p = session(c, TestBeacons.config(major: 1))
        p.session.start()
        loop.run(atMostMs: 10_000) { p.confirmed == [1] }
        loop.run(forMs: 3000)
        return c.onAir
    }

    func testRestartWithFewerFramesLeavesOnlyTheNewFrameOnAir() {
        XCTAssertEqual(restartWithFewerFrames(strictClear: false, enforcesKinds: false), [TestBeacons.payload()])
        freshLoop()
        XCTAssertEqual(restartWithFewerFrames(strictClear: false, enforcesKinds: true), [TestBeacons.payload()])
    }

    /// Core v5.x Vol 4 Part E §7.8.60: LE Clear Advertising Sets is refused while any set is enabled.
    func testRestartWithFewerFramesOnAControllerThatRefusesClearWhileSetsAreEnabled() {
        XCTAssertEqual(restartWithFewerFrames(strictClear: true, enforcesKinds: false), [TestBeacons.payload()])
        freshLoop()
        XCTAssertEqual(restartWithFewerFrames(strictClear: true, enforcesKinds: true), [TestBeacons.payload()])
    }

    func testStopDuringAnArmLeavesNothingOnAirAndCallsDoneOnce() {
        for legacy in [true, false] {
            let c = controller(legacy: legacy)
            c.answerDelayMs = 10
            let p = session(c, TestBeacons.config(TestBeacons.three()))
            p.session.start()
            loop.run(atMostMs: 5000) { c.log.contains(legacy ? .leSetAdvertiseEnable : .leSetExtendedAdvertisingEnable) && !c.onAir.isEmpty }
            XCTAssertNotNil(p.session.policy.armInFlight, "legacy \(legacy)")
            var done: [Bool] = []
            p.session.retire(commandTimeoutMs: 1000, deadlineMs: 3000) { done.append($0) }
            p.session.retire(commandTimeoutMs: 1000, deadlineMs: 3000) { _ in }
            loop.run(forMs: 10_000)
            XCTAssertEqual(done, [true], "legacy \(legacy)")
            XCTAssertEqual(c.onAir, [], "legacy \(legacy)")
            XCTAssertEqual(p.confirmed, [], "legacy \(legacy)")
            XCTAssertEqual(c.openTransports, 0)
            freshLoop()
        }
    }

    func testAdapterChangeDuringAHangPutsTheNewAdapterOnAirRegardlessOfTheOld() {
        for hangMs in [500, 8000] as [Int64] {
            let a = controller(index: 0), b = controller(index: 1)
            let pa = session(a, TestBeacons.config(TestBeacons.three(), adapter: 0))
            pa.session.start()
            loop.run(forMs: 3000)
            XCTAssertEqual(a.onAir.count, 3)
            a.silent = true
            loop.run(forMs: hangMs)
            let start = loop.now
            var retired: [Int64] = []
            pa.session.retire(commandTimeoutMs: 1000, deadlineMs: 10_000) { [weak self] _ in
                guard let self else { return }
                retired.append(loop.now - start)
            }
            let config = TestBeacons.config(TestBeacons.three(), adapter: 1)
            let pb = session(b, config, generation: 2)
            pb.session.start()
            let ms = msUntil(b, airs: TestBeacons.payloads(config.frames), atMostMs: 20_000)
            XCTAssertLessThanOrEqual(ms ?? .max, 5000, "hang \(hangMs)")
            loop.run(forMs: 15_000)
            XCTAssertEqual(retired.count, 1, "hang \(hangMs)")
            XCTAssertLessThanOrEqual(retired.first ?? .max, 10_000, "hang \(hangMs)")
            XCTAssertEqual(pb.confirmed, [2])
            XCTAssertEqual(b.onAir.count, 3)
            freshLoop()
        }
    }

    func testFramesRotateEveryRotationMsOnALegacyController() {
        let c = controller(legacy: true)
        let frames = TestBeacons.three()
        let payloads = TestBeacons.payloads(frames)
        let p = session(c, TestBeacons.config(frames, rotationMs: 300, checkS: 5))
        p.session.start()
        XCTAssertNotNil(msUntil(c, airs: [payloads[0]], atMostMs: 2000))
        let start = loop.now
        let dataBefore = c.count(.leSetAdvertisingData)
        loop.run(forMs: 9000)
        let changes = c.airHistory.filter { $0.at > start }
        XCTAssertEqual(changes.count, 30, "one frame switch every 300 ms")
        XCTAssertEqual(c.count(.leSetAdvertisingData) - dataBefore, 30 + 1, "switches, and the probe at 5 s")
        let gaps = zip(changes.dropFirst(), changes).map { $0.at - $1.at }
        XCTAssertTrue(gaps.allSatisfy { $0 == 300 }, "\(gaps)")
        let order = changes.prefix(6).map { payloads.firstIndex(of: $0.air.first ?? []) ?? -1 }
        XCTAssertEqual(order, [1, 2, 0, 1, 2, 0])
    }

    /// A probe due at the same moment as a frame switch (5 s is a multiple of 500 ms) delays it
    /// at most by the probe's own commands, never by a whole rotation.
    func testFrameSwitchIsNotSkippedWhenAProbeIsDueAtTheSameMoment() {
        let c = controller(legacy: true)
        let frames = TestBeacons.three()
        let p = session(c, TestBeacons.config(frames, rotationMs: 500, checkS: 5))
        p.session.start()
        XCTAssertNotNil(msUntil(c, airs: [TestBeacons.payloads(frames)[0]], atMostMs: 2000))
        let start = loop.now
        loop.run(forMs: 12_000)
        let changes = c.airHistory.filter { $0.at > start }
        let gaps = zip(changes.dropFirst(), changes).map { $0.at - $1.at }
        XCTAssertLessThanOrEqual(gaps.max() ?? 0, 550, "a frame stayed on air \(gaps.max() ?? 0) ms: \(gaps)")
    }

    /// The board is read by the runner, only for a config with a frame that carries telemetry,
    /// and the TLM frame's uptime is that reading plus the time since (the procedure reads nothing).
    func testTheBoardIsReadByTheRunnerOnlyForTLM() {
        final class CountingBoard: BoardReader, @unchecked Sendable {
            var reads = 0
            func read(now: Int64) -> BoardReading { reads += 1; return BoardReading(uptimeDeciseconds: 500, temperature: nil, readAtMs: now) }
        }
        let plain = CountingBoard()
        let p1 = session(controller(), TestBeacons.config([TestBeacons.altBeacon()], intervalMs: 100), board: plain)
        p1.session.start()
        loop.run(forMs: 35_000)
        XCTAssertEqual(plain.reads, 0, "no TLM frame: the board is never read")
        let board = CountingBoard()
        let c = controller()
        let p2 = session(c, TestBeacons.config([TestBeacons.altBeacon(), TestBeacons.tlm()], intervalMs: 100), board: board)
        p2.session.start()
        loop.run(forMs: 35_000)
        XCTAssertGreaterThan(board.reads, 0)
        let uptimes = c.written.filter { $0.opcode == .leSetExtendedAdvertisingData }
            .compactMap { TestBeacons.tlmUptime(Array($0.parameters.dropFirst(4))) }
        XCTAssertFalse(uptimes.isEmpty)
        XCTAssertTrue(uptimes.allSatisfy { $0 >= 500 && $0 <= 500 + 360 }, "the reading (50 s) plus at most the 35 s since: \(uptimes)")
    }

    func testTLMAdvertisingCountNeverDecreasesAcrossRearms() {
        let c = controller()
        let config = TestBeacons.config([TestBeacons.altBeacon(), TestBeacons.tlm()], intervalMs: 100)
        let p = session(c, config, board: FixedBoard(uptimeDeciseconds: 1))
        p.session.start()
        loop.run(forMs: 35_000)
        var slower = config
        slower.bluetooth.intervalMs = 1000
        p.session.configChanged(slower, generation: 2)
        loop.run(forMs: 35_000)
        c.foreign(Reset())
        loop.run(forMs: 35_000)
        var faster = config
        faster.bluetooth.intervalMs = 500
        p.session.configChanged(faster, generation: 3)
        loop.run(forMs: 35_000)
        XCTAssertEqual(p.confirmed.last, 3)
        XCTAssertEqual(p.confirmed, p.confirmed.sorted(), "generations confirmed in order")
        let counts = c.written.filter { $0.opcode == .leSetExtendedAdvertisingData }
            .compactMap { TestBeacons.tlmCount(Array($0.parameters.dropFirst(4))) }
        XCTAssertGreaterThan(counts.count, 10)
        XCTAssertEqual(counts, counts.sorted(), "never decreasing: \(counts)")
        XCTAssertGreaterThan(counts.last ?? 0, 350 * 2, "about 2 slots × 350 events at 100 ms in the first 35 s alone")
    }
}
