import XCTest
@testable import BeaconKit

/// Issue 38: the first mDNS answer won from any source; a host elsewhere that answered first
/// became "the broker" and received the monitor's password. RFC 6762 §6 (port 5353) and §11 (the
/// source address check).
final class MulticastDNSSourceTests: XCTestCase {
    // lo (1): 127.0.0.1/8, ::1/128; eth0 (2): 192.168.1.20/24, 2001:db8:1::20/64, fe80::20/64;
    // docker0 (3): 172.17.0.1/16.
    let subnets = [
        LocalSubnet(interface: 1, address: [127, 0, 0, 1], netmask: [255, 0, 0, 0]),
        LocalSubnet(interface: 1, address: [UInt8](repeating: 0, count: 15) + [1], netmask: [UInt8](repeating: 0xff, count: 16)),
        LocalSubnet(interface: 2, address: [192, 168, 1, 20], netmask: [255, 255, 255, 0]),
        LocalSubnet(interface: 2, address: [0x20, 0x01, 0x0d, 0xb8, 0, 1] + [UInt8](repeating: 0, count: 9) + [0x20],
                    netmask: [UInt8](repeating: 0xff, count: 8) + [UInt8](repeating: 0, count: 8)),
        LocalSubnet(interface: 2, address: [0xfe, 0x80] + [UInt8](repeating: 0, count: 13) + [0x20],
                    netmask: [UInt8](repeating: 0xff, count: 8) + [UInt8](repeating: 0, count: 8)),
        LocalSubnet(interface: 3, address: [172, 17, 0, 1], netmask: [255, 255, 0, 0]),
    ]

    func judge(_ a: [UInt8], port: UInt16 = 5353, on interface: UInt32 = 2) -> MulticastDNSSource.Verdict {
        MulticastDNSSource.judge(address: a, port: port, interface: interface, subnets: subnets)
    }

    func v6(_ head: [UInt8], _ last: UInt8) -> [UInt8] { head + [UInt8](repeating: 0, count: 15 - head.count) + [last] }

    func testOnlyPort5353() {
        XCTAssertEqual(judge([192, 168, 1, 50]), .accepted)
        XCTAssertEqual(judge([192, 168, 1, 50], port: 53), .wrongPort)
        XCTAssertEqual(judge([127, 0, 0, 1], port: 40_000), .wrongPort, "even from this machine")
        XCTAssertEqual(MulticastDNSSource.judge(address: [127, 0, 0, 1], port: 40_000, interface: 1, subnets: [], expectedPort: 40_000), .accepted,
                       "the port asked (tests play the responder elsewhere)")
    }

    func testOnTheLinkItCameInOn() {
        XCTAssertEqual(judge([192, 168, 1, 50]), .accepted)
        XCTAssertEqual(judge([192, 168, 2, 50]), .offLink, "routed from another network")
        XCTAssertEqual(judge([8, 8, 8, 8]), .offLink)
        XCTAssertEqual(judge([172, 17, 0, 5]), .offLink, "a container's subnet, but the answer came in on eth0")
        XCTAssertEqual(judge([172, 17, 0, 5], on: 3), .accepted)
        XCTAssertEqual(judge([172, 17, 0, 5], on: 0), .accepted, "arrival interface unknown: any of ours")
        XCTAssertEqual(judge([10, 0, 0, 1], on: 0), .offLink)
    }

    /// The testbed's avahi answers from this machine's own address, delivered over loopback; a
    /// responder on 127.0.0.1 or ::1 is this machine too.
    func testThisMachineIsOnLink() {
        XCTAssertEqual(judge([192, 168, 1, 20], on: 1), .accepted, "our own address, over lo")
        XCTAssertEqual(judge([127, 0, 0, 1], on: 1), .accepted)
        XCTAssertEqual(judge([127, 0, 0, 53], on: 1), .accepted)
        XCTAssertEqual(judge(v6([], 1), on: 1), .accepted, "::1")
        XCTAssertEqual(MulticastDNSSource.judge(address: [127, 0, 0, 1], port: 5353, interface: 0, subnets: []), .accepted,
                       "loopback even when the addresses could not be listed")
    }

    func testIPv6() {
        XCTAssertEqual(judge(v6([0xfe, 0x80], 0x99)), .accepted, "link-local")
        XCTAssertEqual(judge(v6([0x20, 0x01, 0x0d, 0xb8, 0, 1], 0x99)), .accepted, "on eth0's prefix")
        XCTAssertEqual(judge(v6([0x20, 0x01, 0x0d, 0xb8, 0, 2], 0x99)), .offLink)
        XCTAssertEqual(judge([UInt8](repeating: 0, count: 10) + [0xff, 0xff, 192, 168, 1, 50]), .accepted, "IPv4-mapped, as IPv4")
        XCTAssertEqual(judge([UInt8](repeating: 0, count: 10) + [0xff, 0xff, 10, 1, 1, 1]), .offLink)
        XCTAssertEqual(judge([]), .offLink, "source unknown")
    }

    func testDescribe() {
        XCTAssertEqual(MulticastDNSSource.describe(address: [10, 1, 2, 3], port: 5353), "10.1.2.3:5353")
        XCTAssertEqual(MulticastDNSSource.describe(address: v6([0xfe, 0x80], 1), port: 5353), "[fe80::1]:5353")
    }

    func testIgnoredAnswersAreSaidWithTheFailure() throws {
        var j = ResolverJob(host: "broker.local", multicast: true, names: [try DNSName("broker.local")], servers: ["224.0.0.251", "ff02::fb"])
        j.startAttempt(id: 7)
        j.ignored("10.9.9.9:5353", .offLink)
        j.ignored("10.9.9.9:5353", .offLink)
        j.ignored("192.168.1.50:4444", .wrongPort)
        j.note(.silent)
        XCTAssertEqual(j.failure, "no answer to mDNS queries on 224.0.0.251, ff02::fb (answers ignored, RFC 6762: "
            + "from 10.9.9.9:5353, not on this machine's links; from 192.168.1.50:4444, not from port 5353)")
    }
}
