import Glibc
import XCTest
@testable import BeaconKit
@testable import BeaconLinux

/// `machineIdentity` reading a /sys/class/net made by the test: links to device directories, as
/// the kernel makes them.
final class MachineIdentityReadTests: XCTestCase {
    var dir = ""

    override func setUp() {
        var template = Array("/tmp/altbeacond-netid-XXXXXX".utf8CString)
        dir = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)) }
    }

    override func tearDown() {
        // Small and ours: removed file by file.
        for p in ["class/net/eth0", "class/net/lo", "class/net/br0", "class/net/wlan0", "class/net"] { _ = unlink(dir + "/" + p); _ = rmdir(dir + "/" + p) }
        for d in ["pci/net/eth0", "pci/net/wlan0", "virtual/net/lo", "virtual/net/br0"] {
            for f in ["address", "addr_assign_type"] { _ = unlink("\(dir)/devices/\(d)/\(f)") }
        }
        for d in ["devices/pci/net/eth0", "devices/pci/net/wlan0", "devices/pci/net", "devices/pci", "devices/virtual/net/lo", "devices/virtual/net/br0",
                  "devices/virtual/net", "devices/virtual", "devices", "class", "machine-id", ""] { _ = unlink(dir + "/" + d); _ = rmdir(dir + "/" + d) }
    }

    func write(_ path: String, _ text: String) {
        let fd = open(dir + "/" + path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        _ = text.withCString { Glibc.write(fd, $0, strlen($0)) }
        close(fd)
    }

    func device(_ path: String, _ name: String, address: String, assign: String) {
        var p = dir
        for part in "\(path)/\(name)".split(separator: "/") { p += "/" + part; mkdir(p, 0o755) }
        write("\(path)/\(name)/address", address + "\n")
        write("\(path)/\(name)/addr_assign_type", assign + "\n")
        XCTAssertEqual(symlink("../../\(path)/\(name)", "\(dir)/class/net/\(name)"), 0)
    }

    func testTheNetworkHardwareIsReadWhereThereIsNoSerial() {
        mkdir(dir + "/class", 0o755); mkdir(dir + "/class/net", 0o755)
        device("devices/pci/net", "eth0", address: "dc:a6:32:01:02:03", assign: "0")
        device("devices/pci/net", "wlan0", address: "3a:00:00:00:00:01", assign: "1")
        device("devices/virtual/net", "lo", address: "00:00:00:00:00:00", assign: "0")
        device("devices/virtual/net", "br0", address: "02:00:00:00:00:01", assign: "3")
        write("machine-id", "0123456789abcdef0123456789abcdef\n")
        let saved = environment("ALTBEACOND_BOARD_SERIAL")
        setenv("ALTBEACOND_BOARD_SERIAL", dir + "/no-serial", 1)
        defer { if let saved { setenv("ALTBEACOND_BOARD_SERIAL", saved, 1) } else { unsetenv("ALTBEACOND_BOARD_SERIAL") } }
        let m = machineIdentity(netPath: dir + "/class/net", machineIDPath: dir + "/machine-id")
        XCTAssertEqual(m.id, "machine-id:0123456789abcdef0123456789abcdef/mac:dc:a6:32:01:02:03")
        XCTAssertEqual(m.from, "/etc/machine-id and the network hardware addresses of eth0")

        write("serial", "10000000aaaa0001\n")
        setenv("ALTBEACOND_BOARD_SERIAL", dir + "/serial", 1)
        defer { _ = unlink(dir + "/serial") }
        XCTAssertEqual(machineIdentity(netPath: dir + "/class/net", machineIDPath: dir + "/machine-id").from, "the board serial")
    }
}
