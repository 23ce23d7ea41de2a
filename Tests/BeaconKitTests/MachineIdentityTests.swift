import XCTest
@testable import BeaconKit

/// Issue 38: cards cloned with dd share /etc/machine-id; without a board serial (x86, VMs, some
/// boards) two of them got one MQTT client ID and took the session from each other.
final class MachineIdentityTests: XCTestCase {
    typealias NI = MachineIdentity.NetworkInterface
    let machineID = Array("0123456789abcdef0123456789abcdef\n".utf8)

    func eth(_ name: String, _ address: String, assign: String? = "0\n", device: String? = nil) -> NI {
        NI(name: name, device: device ?? "../../devices/pci0000:00/0000:00:03.0/net/\(name)", address: address + "\n", assignType: assign)
    }

    var board: [NI] {
        [NI(name: "lo", device: "../../devices/virtual/net/lo", address: "00:00:00:00:00:00\n", assignType: "0\n"),
         eth("eth0", "DC:A6:32:01:02:03"),
         eth("wlan0", "dc:a6:32:01:02:04"),
         eth("docker0", "02:42:ac:11:00:01", device: "../../devices/virtual/net/docker0"),
         eth("veth1", "be:ef:00:00:00:01", assign: "3\n", device: "../../devices/virtual/net/veth1"),
         eth("wlan1", "3a:11:22:33:44:55", assign: "1\n"),  // a random address (MAC randomisation)
         eth("usb0", "aa:bb:cc:dd:ee:ff", assign: "3\n"),   // set by hand
         eth("can0", "", assign: "0\n")]
    }

    func testThePermanentAddressesOfRealDevicesOnly() {
        let found = MachineIdentity.permanentAddresses(board)
        XCTAssertEqual(found.map(\.address), ["dc:a6:32:01:02:03", "dc:a6:32:01:02:04"])
        XCTAssertEqual(found.map(\.interface), ["eth0", "wlan0"])
        XCTAssertEqual(MachineIdentity.permanentAddresses([eth("eth0", "01:00:5e:00:00:01"), eth("eth1", "00:00:00:00:00:00"),
                                                           eth("eth2", "zz:00:00:00:00:01")]).count, 0, "group, zero, not hex")
        XCTAssertEqual(MachineIdentity.permanentAddresses([eth("eth0", "52:54:00:12:34:56", assign: nil)]).map(\.address),
                       ["52:54:00:12:34:56"], "a VM's (locally administered) address; no addr_assign_type (old kernels) is taken")
    }

    /// The serial wins, unchanged from before (a Pi keeps its client ID).
    func testTheBoardSerialWinsAsBefore() {
        let m = MachineIdentity.choose(serial: 0x1000_0000_1234_5678, machineID: machineID, interfaces: board, hostname: "raspberrypi")
        XCTAssertEqual(m.id, "serial:\(UInt64(0x1000_0000_1234_5678))")
        XCTAssertEqual(m.from, "the board serial")
    }

    /// Two clones: one machine-id, their own network hardware. The client IDs differ.
    func testClonesWithoutASerialGetClientIDsOfTheirOwn() {
        let a = MachineIdentity.choose(serial: nil, machineID: machineID, interfaces: board, hostname: "raspberrypi")
        let b = MachineIdentity.choose(serial: nil, machineID: machineID,
                                       interfaces: [eth("eth0", "dc:a6:32:09:09:09"), eth("wlan0", "dc:a6:32:09:09:0a")], hostname: "raspberrypi")
        XCTAssertEqual(a.id, "machine-id:0123456789abcdef0123456789abcdef/mac:dc:a6:32:01:02:03,dc:a6:32:01:02:04")
        XCTAssertEqual(a.from, "/etc/machine-id and the network hardware addresses of eth0, wlan0")
        XCTAssertNotEqual(MonitorNodeClash.clientID(machine: a.id, adapter: "hci0"), MonitorNodeClash.clientID(machine: b.id, adapter: "hci0"))
        XCTAssertEqual(a.id, MachineIdentity.choose(serial: nil, machineID: machineID, interfaces: board.reversed(), hostname: "x").id,
                       "the same whatever order the interfaces are listed in")
    }

    func testWithoutHardwareTheMachineIDThenTheHostnameAsBefore() {
        let m = MachineIdentity.choose(serial: nil, machineID: machineID, interfaces: [], hostname: "raspberrypi")
        XCTAssertEqual(m.id, "machine-id:0123456789abcdef0123456789abcdef", "the ID it had before")
        XCTAssertTrue(m.from.hasPrefix("/etc/machine-id (no board serial, no permanent network address"), m.from)
        let h = MachineIdentity.choose(serial: nil, machineID: Array("\n".utf8), interfaces: [eth("eth0", "dc:a6:32:01:02:03")], hostname: "pi")
        XCTAssertEqual(h.id, "hostname:pi/mac:dc:a6:32:01:02:03")
        XCTAssertEqual(h.from, "the hostname and the network hardware addresses of eth0")
        XCTAssertEqual(MachineIdentity.choose(serial: nil, machineID: nil, interfaces: [], hostname: "pi").id, "hostname:pi")
    }
}
