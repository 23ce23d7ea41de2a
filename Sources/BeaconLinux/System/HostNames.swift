import BeaconKit
import Glibc

/// An IP address for `host`: a literal as it is, "localhost", or the first match in /etc/hosts
/// (`hostsPath`). Names elsewhere are the asynchronous `Resolver`'s (DNS, mDNS).
public func resolveHost(_ host: String, hostsPath: String = "/etc/hosts") -> String? {
    var v4 = in_addr(), v6 = in6_addr()
    if inet_pton(AF_INET, host, &v4) == 1 || inet_pton(AF_INET6, host, &v6) == 1 { return host }
    if host == "localhost" { return "127.0.0.1" }
    guard let bytes = try? readFile(hostsPath, limit: 1 << 20) else { return nil }
    for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") {
        let fields = line.prefix { $0 != "#" }.split(whereSeparator: { $0 == " " || $0 == "\t" })
        guard fields.count >= 2, fields.dropFirst().contains(where: { $0 == host }) else { continue }
        let address = String(fields[0])
        if inet_pton(AF_INET, address, &v4) == 1 || inet_pton(AF_INET6, address, &v6) == 1 { return address }
    }
    return nil
}

/// The machine's name as an MQTT topic level: letters, digits, '-' and '_' (others become '_').
public func hostName() -> String {
    var buf = [CChar](repeating: 0, count: 256)
    guard gethostname(&buf, buf.count - 1) == 0 else { return "altbeacond" }
    let cleaned = String(decoding: buf.prefix { $0 != 0 }.prefix(64).map { c -> UInt8 in
        let b = UInt8(bitPattern: c)
        let ok = (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5a) || (b >= 0x61 && b <= 0x7a) || b == 0x2d || b == 0x5f
        return ok ? b : 0x5f
    }, as: UTF8.self)
    return cleaned.isEmpty ? "altbeacond" : cleaned
}

/// The machine's hostname as the kernel has it (gethostname), for the beacon's name in its scan
/// response (`BeaconConfig.hostName`): unlike `hostName()`, not rewritten; nil when unreadable
/// or unset (the kernel's "(none)").
public func machineHostName() -> String? {
    var buf = [CChar](repeating: 0, count: 256)
    guard gethostname(&buf, buf.count - 1) == 0 else { return nil }
    let name = String(decoding: buf.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    return name.isEmpty || name == "(none)" ? nil : name
}

/// What tells this machine from others, for names that must differ between machines and stay
/// the same across reboots (the MQTT client ID), and where it came from (BeaconKit's
/// `MachineIdentity` decides): the board's serial (ALTBEACOND_BOARD_SERIAL names another file,
/// as for the address repair), else /etc/machine-id (a read-only root that leaves it empty gets a
/// new one at every boot, SPEC §12: hence second) with the permanent hardware addresses of the
/// network interfaces (`netPath`, /sys/class/net: a cloned card shares the machine-id, not the
/// hardware), else the hostname with them. The serial is read through /sys: /proc/device-tree is
/// a link that the units' ProcSubset=pid hides.
public func machineIdentity(netPath: String = "/sys/class/net", machineIDPath: String = "/etc/machine-id") -> (id: String, from: String) {
    let serialPath = environment("ALTBEACOND_BOARD_SERIAL") ?? "/sys/firmware/devicetree/base/serial-number"
    let serial = (try? readFile(serialPath, limit: 64)).flatMap { BoardAddress.serial(fromDeviceTree: $0) }
    let interfaces = serial == nil ? networkInterfaces(netPath) : []
    return MachineIdentity.choose(serial: serial, machineID: try? readFile(machineIDPath, limit: 64),
                                  interfaces: interfaces, hostname: hostName())
}

/// The board for Home Assistant's device registry (issue 48): the device tree's model and serial
/// (ALTBEACOND_BOARD_SERIAL names another serial file, as for `machineIdentity`), and `area`.
public func machineBoard(area: String?) -> DeviceBoard {
    let serialPath = environment("ALTBEACOND_BOARD_SERIAL") ?? "/sys/firmware/devicetree/base/serial-number"
    let serial = (try? readFile(serialPath, limit: 64)).flatMap { BoardAddress.serial(fromDeviceTree: $0) }
    let model = (try? readFile("/sys/firmware/devicetree/base/model", limit: 256)).flatMap(DeviceBoard.model(fromDeviceTree:))
    return DeviceBoard(model: model, serial: serial.map(DeviceBoard.serialText), area: area)
}

/// The entries of /sys/class/net (links to the devices), as read; empty when unreadable.
func networkInterfaces(_ netPath: String) -> [MachineIdentity.NetworkInterface] {
    guard let dir = opendir(netPath) else { return [] }
    var names: [String] = []
    while let entry = readdir(dir) {
        let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        if !name.hasPrefix(".") { names.append(name) }
    }
    closedir(dir)
    return names.sorted().map { name in
        let path = netPath + "/" + name
        var link = [CChar](repeating: 0, count: 4096)
        let n = readlink(path, &link, link.count - 1)
        let device = n > 0 ? String(decoding: link[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self) : ""
        func text(_ file: String) -> String? {
            (try? readFile(path + "/" + file, limit: 256)).map { String(decoding: $0, as: UTF8.self) }
        }
        return MachineIdentity.NetworkInterface(name: name, device: device, address: text("address"), assignType: text("addr_assign_type"))
    }
}

/// `address` (an IPv4 or IPv6 literal) and `port` as a socket address, its length and family;
/// nil when it is not a literal.
func ipSocketAddress(_ address: String, port: UInt16) -> (sockaddr_storage, socklen_t, Int32)? {
    var storage = sockaddr_storage()
    func store<A>(_ a: A) -> socklen_t {
        withUnsafeBytes(of: a) { src in withUnsafeMutableBytes(of: &storage) { $0.copyMemory(from: src) } }
        return socklen_t(MemoryLayout<A>.size)
    }
    if address.contains(":") {
        var a = sockaddr_in6()
        a.sin6_family = sa_family_t(AF_INET6)
        a.sin6_port = port.bigEndian
        guard inet_pton(AF_INET6, address, &a.sin6_addr) == 1 else { return nil }
        let length = store(a)
        return (storage, length, AF_INET6)
    }
    var a = sockaddr_in()
    a.sin_family = sa_family_t(AF_INET)
    a.sin_port = port.bigEndian
    guard inet_pton(AF_INET, address, &a.sin_addr) == 1 else { return nil }
    let length = store(a)
    return (storage, length, AF_INET)
}
