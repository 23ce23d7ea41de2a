import XCTest
@testable import BeaconKit

final class MonitorNodeClashTests: XCTestCase {
    let ours = MonitorNodeClash.clientID(machine: "serial:1000000012345678", adapter: "hci0")

    func announcement(_ id: String, retain: Bool = false) throws -> MQTTPublish {
        try MQTTPublish(topic: "altbeacond/raspberrypi/monitor", payload: Array(id.utf8), retain: retain)
    }
    func said(_ actions: [MonitorNodeClash.Action]) -> [String] {
        actions.compactMap { if case .say(let s) = $0 { return s } else { return nil } }
    }
    func published(_ actions: [MonitorNodeClash.Action]) -> [MQTTPublish] {
        actions.compactMap { if case .publish(let p) = $0 { return p } else { return nil } }
    }

    /// Issue 30: two Pis named raspberrypi shared "altbeacond-monitor-raspberrypi" and took the
    /// session from each other. The ID is one per machine and adapter, stable, at most 23 bytes.
    func testTheClientIDIsOnePerMachineAndAdapterAndFitsMQTT311() {
        XCTAssertEqual(ours, MonitorNodeClash.clientID(machine: "serial:1000000012345678", adapter: "hci0"), "stable")
        XCTAssertTrue(ours.hasPrefix("altbeacond-"))
        XCTAssertEqual(ours.utf8.count, 23)
        XCTAssertTrue(ours.dropFirst(11).allSatisfy { "0123456789abcdef".contains($0) }, ours)
        let others = [MonitorNodeClash.clientID(machine: "serial:1000000012345679", adapter: "hci0"),
                      MonitorNodeClash.clientID(machine: "serial:1000000012345678", adapter: "hci1"),
                      MonitorNodeClash.clientID(machine: "hostname:raspberrypi", adapter: "hci0")]
        XCTAssertEqual(Set(others + [ours]).count, 4)
    }

    func testConnectedSubscribesThenAnnounces() throws {
        let c = MonitorNodeClash(node: "raspberrypi", clientID: ours)
        let a = c.connected(packetID: 2)
        guard a.count == 2, case .subscribe(let s) = a[0] else { return XCTFail("\(a)") }
        XCTAssertEqual(s, try MQTTSubscribe(packetID: 2, subscriptions: [MQTTSubscription("altbeacond/raspberrypi/monitor")]))
        XCTAssertEqual(published(a), [try announcement(ours)])
        XCTAssertFalse(published(a)[0].retain, "only monitors connected now may see it")
    }

    /// Another monitor's live announcement: said once, answered once (so that it hears of us too).
    func testAnotherMonitorUnderOurNodeIsSaidOnceAndAnsweredOnce() throws {
        var c = MonitorNodeClash(node: "raspberrypi", clientID: ours)
        XCTAssertEqual(said(c.received(try announcement(ours))), [], "our own, echoed by the broker")
        XCTAssertFalse(c.nodeClash)
        let first = c.received(try announcement("altbeacond-0123456789ab"))
        XCTAssertEqual(said(first).count, 1)
        XCTAssertTrue(said(first)[0].contains("another monitor (client ID altbeacond-0123456789ab) publishes as node 'raspberrypi'"), said(first)[0])
        XCTAssertTrue(said(first)[0].contains("[monitor] node"))
        XCTAssertEqual(published(first), [try announcement(ours)])
        XCTAssertTrue(c.nodeClash)
        let again = c.received(try announcement("altbeacond-0123456789ab"))
        XCTAssertTrue(said(again).isEmpty && published(again).isEmpty, "once, or the two would answer each other for ever")
    }

    /// A retained message there is from the past (not ours: we never retain it), not a monitor now.
    func testARetainedMessageIsNotAClash() throws {
        var c = MonitorNodeClash(node: "raspberrypi", clientID: ours)
        XCTAssertTrue(c.received(try announcement("altbeacond-0123456789ab", retain: true)).isEmpty)
        XCTAssertFalse(c.nodeClash)
    }

    /// The same client ID: the broker ends each session right after accepting it.
    func testSessionsEndedRightAfterAcceptanceThreeTimesInARowAreSaidOnce() {
        var c = MonitorNodeClash(node: "raspberrypi", clientID: ours)
        XCTAssertTrue(c.sessionEnded(connectedForMs: 800).isEmpty)
        XCTAssertTrue(c.sessionEnded(connectedForMs: 60_000).isEmpty, "a long session starts the count again")
        XCTAssertTrue(c.sessionEnded(connectedForMs: 800).isEmpty)
        XCTAssertTrue(c.sessionEnded(connectedForMs: 1200).isEmpty)
        let third = said(c.sessionEnded(connectedForMs: 900))
        XCTAssertEqual(third.count, 1)
        XCTAssertTrue(third[0].contains("3 times in a row") && third[0].contains(ours), third[0])
        XCTAssertTrue(c.sessionEnded(connectedForMs: 900).isEmpty, "once")
    }
}
