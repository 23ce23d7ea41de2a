import XCTest
@testable import BeaconKit

final class MQTTOutboxTests: XCTestCase {
    func retained(_ topic: String, _ v: UInt8) throws -> MQTTPacket { .publish(try MQTTPublish(topic: topic, payload: [v], retain: true)) }
    func other(_ v: UInt8) throws -> MQTTPacket { .publish(try MQTTPublish(topic: "altbeacond/pi/monitor", payload: [v])) }
    func drain(_ o: inout MQTTOutbox) -> [MQTTPacket] {
        var out: [MQTTPacket] = []
        while let p = o.next() { out.append(p) }
        return out
    }

    /// Issue 30: while the broker takes nothing, the newest retained state of each topic wins;
    /// it goes where the newest was queued.
    func testTheNewestRetainedStatePerTopicWins() throws {
        var o = MQTTOutbox()
        for v in UInt8(1)...100 {
            o.append(try retained("altbeacond/pi/beacons/a", v))
            o.append(try retained("altbeacond/pi/beacons/b", v))
        }
        o.append(try retained("altbeacond/pi/beacons/a", 101))
        XCTAssertEqual(o.count, 2)
        XCTAssertEqual(o.dropped, 199)
        XCTAssertEqual(drain(&o), [try retained("altbeacond/pi/beacons/b", 100), try retained("altbeacond/pi/beacons/a", 101)])
        XCTAssertTrue(o.isEmpty)
    }

    func testOtherPublishesAreBoundedOldestFirstAndControlPacketsKept() throws {
        var o = MQTTOutbox(maxOthers: 3)
        o.append(.pingReq)
        for v in UInt8(1)...5 { o.append(try other(v)) }
        o.append(try retained("t", 1))
        o.append(.pubAck(packetID: 7))
        XCTAssertEqual(o.dropped, 2)
        XCTAssertEqual(drain(&o), [.pingReq, try other(3), try other(4), try other(5), try retained("t", 1), .pubAck(packetID: 7)])
    }

    func testARetainedAndANonRetainedOnOneTopicAreDifferentThings() throws {
        var o = MQTTOutbox()
        let plain = MQTTPacket.publish(try MQTTPublish(topic: "t", payload: [9]))
        o.append(plain)
        o.append(try retained("t", 1))
        o.append(try retained("t", 2))
        XCTAssertEqual(drain(&o), [plain, try retained("t", 2)])
        XCTAssertEqual(o.dropped, 1)
    }
}
