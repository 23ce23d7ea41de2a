import XCTest
@testable import BeaconKit

/// Issue 49: no downgrade or replay, waves from each card's identity, a rollout that stops
/// itself, and a failed download asked again after a back-off instead of refused for ever.
final class FleetRolloutTests: XCTestCase {
    static let topic = "altbeacond/fleet/release"
    static let now: Int64 = 1_764_244_000

    /// Golden results of `dpkg --compare-versions` (Debian 12's dpkg 1.21), the updater's order.
    func testVersionsAreOrderedAsDpkgOrdersThem() {
        for (a, b, r) in [
            ("1.0", "1.0.1", "<"), ("1.0~rc1", "1.0", "<"), ("1.0", "1.0+git1", "<"), ("1.2.10", "1.2.9", ">"),
            ("0.1.0", "0.1.0-1", "<"), ("1.0-1", "1.0-2", "<"), ("1.0a", "1.0", ">"), ("1.0a", "1.0+", "<"),
            ("01.2", "1.02", "="), ("1.0~~", "1.0~", "<"), ("2", "10", "<"), ("1.0.0", "1.0", ">"), ("a", "b", "<"),
            ("1.0-rc1", "1.0", ">"), ("1.0.B", "1.0.a", "<"), ("9", "9", "="),
        ] {
            let c = ReleaseVersion.compare(a, b), back = ReleaseVersion.compare(b, a)
            XCTAssertEqual(c < 0 ? "<" : c == 0 ? "=" : ">", r, "\(a) \(b)")
            XCTAssertEqual(back.signum(), -c.signum(), "\(b) \(a): the other way round")
        }
    }

    func testEachCardFindsItsWaveAlone() {
        XCTAssertEqual(FleetRollout.bucket(node: "altbeacon-0000000012345678", version: "1.3.0"),
                       FleetRollout.bucket(node: "altbeacon-0000000012345678", version: "1.3.0"), "the same every time")
        var counts = [Int](repeating: 0, count: 100)
        for n in 0..<10_000 { counts[FleetRollout.bucket(node: "altbeacon-\(n)", version: "1.3.0")] += 1 }
        XCTAssertLessThan(counts.max()! - counts.min()!, 80, "10,000 cards spread over the 100 buckets: \(counts.min()!)...\(counts.max()!)")
        let first = (0..<1000).filter { FleetRollout.inWave(node: "altbeacon-\($0)", release: FleetRelease(version: "1.3.0", url: "https://h/a", rollout: 10)) }
        let next = (0..<1000).filter { FleetRollout.inWave(node: "altbeacon-\($0)", release: FleetRelease(version: "1.4.0", url: "https://h/a", rollout: 10)) }
        XCTAssertTrue((70...130).contains(first.count), "\(first.count) of 1000 in a 10 % wave")
        XCTAssertNotEqual(first, next, "another release, other first cards")
        XCTAssertEqual((0..<1000).filter { FleetRollout.inWave(node: "n\($0)", release: FleetRelease(version: "1", url: "https://h/a")) }.count, 1000)
    }

    func fleetCard(node: String = "pi", installed: String = "1.2.0", state: UpdaterState? = nil) -> FirmwareUpdate {
        var f = FirmwareUpdate(node: node, control: .fleet, authenticated: true, monitorVersion: installed)
        f.capability = .ab(state ?? UpdaterState(installedVersion: installed, slot: "A", phaseWord: "idle", outcome: UpdaterState.Outcome.none))
        return f
    }

    func release(_ json: String) -> [UInt8] { Array(("{\"version\":\"1.3.0\",\"url\":\"https://h/a.raucb\",\"install\":true" + json + "}").utf8) }

    func testAnOlderReleaseIsRefusedUnlessTheOwnerSaysDowngrade() {
        var f = fleetCard(installed: "1.4.0")
        XCTAssertEqual(f.received(topic: Self.topic, payload: release(""), retained: true, nowS: Self.now),
                       .refuse("1.3.0 is older than the installed 1.4.0: a downgrade needs \"downgrade\": true in the release message"))
        XCTAssertEqual(f.received(topic: "altbeacond/pi/update/set", payload: Array("install".utf8), retained: false, nowS: Self.now),
                       .refuse("1.3.0 is older than the installed 1.4.0: a downgrade needs \"downgrade\": true in the release message"),
                       "Home Assistant's Install too")
        guard case .request(let r) = f.received(topic: Self.topic, payload: release(",\"downgrade\":true"), retained: true, nowS: Self.now) else {
            return XCTFail("the owner's downgrade is asked")
        }
        XCTAssertTrue(String(decoding: r.encoded ?? [], as: UTF8.self).contains("downgrade=yes\n"))
        var newer = fleetCard(installed: "1.3.0~rc1")
        if case .request = newer.received(topic: Self.topic, payload: release(""), retained: true, nowS: Self.now) {} else {
            XCTFail("1.3.0 is newer than 1.3.0~rc1")
        }
    }

    func testARolloutWaitsForItsWaveAndStopsAfterItsRollbacks() throws {
        // a node outside a 10 % wave, and one inside it
        let nodes = (0..<200).map { "altbeacon-\($0)" }
        let outside = try XCTUnwrap(nodes.first { FleetRollout.bucket(node: $0, version: "1.3.0") >= 10 })
        let inside = try XCTUnwrap(nodes.first { FleetRollout.bucket(node: $0, version: "1.3.0") < 10 })
        var late = fleetCard(node: outside)
        guard case .ignore(let why) = late.received(topic: Self.topic, payload: release(",\"rollout\":10"), retained: true, nowS: Self.now) else {
            return XCTFail("a card outside the wave waits")
        }
        XCTAssertTrue(why.hasPrefix("1.3.0: rolled out to 10 % of the fleet; this card's wave"), why)
        XCTAssertTrue(MonitorExport.releaseSummary(late).contains("Rollout at 10 %: this card waits for a wider one"))
        if case .request = late.received(topic: Self.topic, payload: release(",\"rollout\":100"), retained: true, nowS: Self.now) {} else {
            XCTFail("the wider rollout reaches it")
        }

        // two cards of the first wave roll it back: with halt_after 2, nobody else takes it
        var early = fleetCard(node: inside)
        XCTAssertTrue(early.handles(Self.topic + "/rolled-back/hall"))
        XCTAssertFalse(early.handles(Self.topic + "/rolled-back/hall/x"))
        _ = early.received(topic: Self.topic + "/rolled-back/hall", payload: Array(FleetRollout.report(version: "1.3.0", time: 1).utf8),
                           retained: true, nowS: Self.now)
        _ = early.received(topic: Self.topic + "/rolled-back/attic", payload: Array(FleetRollout.report(version: "1.2.9", time: 1).utf8),
                           retained: true, nowS: Self.now)
        if case .request = early.received(topic: Self.topic, payload: release(",\"rollout\":10,\"halt_after\":2"), retained: true, nowS: Self.now) {} else {
            XCTFail("one rollback of 1.3.0 (another version's does not count) is below halt_after 2")
        }
        var second = fleetCard(node: inside)
        for n in ["hall", "porch"] {
            _ = second.received(topic: Self.topic + "/rolled-back/\(n)", payload: Array(FleetRollout.report(version: "1.3.0", time: 1).utf8),
                                retained: true, nowS: Self.now)
        }
        XCTAssertEqual(second.received(topic: Self.topic, payload: release(",\"rollout\":10,\"halt_after\":2"), retained: true, nowS: Self.now),
                       .refuse("the rollout of 1.3.0 stopped itself: rolled back on 2 cards (halt_after 2); Install in Home Assistant still tries it"))
        XCTAssertTrue(MonitorExport.releaseSummary(second).contains("Rollout stopped: rolled back on 2 cards (halt_after 2)"))
        let person = second.received(topic: "altbeacond/\(inside)/update/set", payload: Array("install".utf8), retained: false, nowS: Self.now)
        if case .request = person {} else { XCTFail("a person's Install is not braked: \(person)") }
        // a withdrawn report (empty, retained) no longer counts
        _ = second.received(topic: Self.topic + "/rolled-back/porch", payload: [], retained: true, nowS: Self.now)
        XCTAssertEqual(second.rollbacks.count("1.3.0"), 1)
    }

    func testACardThatRolledBackSaysSoForTheFleet() {
        let rolled = UpdaterState(installedVersion: "1.2.0", slot: "A", phaseWord: "idle", outcome: .rolledBack, outcomeVersion: "1.3.0",
                                  message: "slot B did not become a beacon", time: Self.now)
        let f = fleetCard(node: "hall", state: rolled)
        XCTAssertEqual(f.rollbackReport?.topic, "altbeacond/fleet/release/rolled-back/hall")
        XCTAssertEqual(f.rollbackReport?.payload, "{\"version\":\"1.3.0\",\"time\":1764244000}")
        XCTAssertEqual(FleetRollout.reportedVersion(Array(f.rollbackReport!.payload.utf8)), "1.3.0")
        XCTAssertNil(fleetCard().rollbackReport, "nothing to say without a rollback")
    }

    func testAFailedDownloadIsAskedAgainAfterABackOff() {
        let failed = UpdaterState(installedVersion: "1.2.0", slot: "A", phaseWord: "idle", outcome: .downloadFailed, outcomeVersion: "1.3.0",
                                  message: "RAUC: Failed to download", time: Self.now)
        XCTAssertEqual(failed.outcomeText, "could not download 1.3.0: RAUC: Failed to download")
        var f = fleetCard(state: failed)
        XCTAssertEqual(f.received(topic: Self.topic, payload: release(""), retained: true, nowS: Self.now + 10),
                       .ignore("1.3.0: the download failed; asked again in 290 s"))
        XCTAssertEqual(f.retryDue(nowS: Self.now + 299), .nothing)
        guard case .request = f.retryDue(nowS: Self.now + 300) else { return XCTFail("asked again after 5 minutes") }
        XCTAssertEqual(FirmwareUpdate.retryDelayS(failures: 1), 300)
        XCTAssertEqual(FirmwareUpdate.retryDelayS(failures: 2), 600)
        XCTAssertEqual(FirmwareUpdate.retryDelayS(failures: 8), 6 * 3600, "at most 6 hours")
        // an install a power cut interrupted: asked again at once (the outcome is new), not before
        var cut = fleetCard(state: UpdaterState(installedVersion: "1.2.0", slot: "A", phaseWord: "idle", outcome: .interrupted,
                                                outcomeVersion: "1.3.0", message: "the install into slot B did not finish", time: Self.now))
        XCTAssertEqual(cut.updater?.outcomeText, "install interrupted 1.3.0: the install into slot B did not finish")
        guard case .request = cut.received(topic: Self.topic, payload: release(""), retained: true, nowS: Self.now + 1) else {
            return XCTFail("an interrupted install is asked again")
        }
        // a refusal is still for this version for ever (the fleet's words), a failed download is not
        var refused = fleetCard(state: UpdaterState(installedVersion: "1.2.0", slot: "A", phaseWord: "idle", outcome: .refused,
                                                    outcomeVersion: "1.3.0", time: Self.now))
        guard case .refuse = refused.received(topic: Self.topic, payload: release(""), retained: true, nowS: Self.now + 100_000) else {
            return XCTFail("a refused release is not asked again by the fleet")
        }
    }
}
