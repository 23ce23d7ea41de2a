/// What tells this machine from others, for names that must differ between machines and stay the
/// same across reboots (the MQTT client ID, `MonitorNodeClash.clientID`), decided from what the
/// caller read. Pure.
///
/// The board's serial where there is one (a Pi's, burnt into the SoC). Else /etc/machine-id,
/// which a card copied with `dd` shares with every copy (issue 38: two cloned cards took one MQTT
/// session from each other 37 times in 40 s), so the permanent hardware addresses of the
/// machine's network interfaces go with it: they come with the hardware, not the card. Else the
/// hostname, with the same addresses.
public enum MachineIdentity {
    /// One entry of /sys/class/net, as read: the interface's name, where its link points
    /// (`../../devices/platform/.../net/eth0`; a virtual one's under `/devices/virtual/`), its
    /// `address` and its `addr_assign_type` (nil when unreadable).
    public struct NetworkInterface: Equatable, Sendable {
        public var name: String
        public var device: String
        public var address: String?
        public var assignType: String?
        public init(name: String, device: String, address: String?, assignType: String?) {
            self.name = name; self.device = device; self.address = address; self.assignType = assignType
        }
    }

    /// The hardware addresses that come with the machine, lowercase, sorted, each once, with the
    /// interfaces that carry them: not loopback, nothing under /sys/devices/virtual (bridges,
    /// veth, tunnels, docker), only addresses the kernel calls permanent (`addr_assign_type` 0,
    /// NET_ADDR_PERM: not random, not set by hand or by NetworkManager's MAC randomisation, not
    /// stolen from another device), and only unicast ones that are not all zeros.
    /// Under /sys/devices/virtual. By bytes: `String.contains(String)` comes from
    /// _StringProcessing, whose regex tables cost the static binary 1.3 MiB (SPEC §7).
    static func isVirtual(_ device: String) -> Bool {
        let needle = Array("/devices/virtual/".utf8), hay = Array(device.utf8)
        guard hay.count >= needle.count else { return false }
        return (0...(hay.count - needle.count)).contains { hay[$0..<($0 + needle.count)].elementsEqual(needle) }
    }

    public static func permanentAddresses(_ interfaces: [NetworkInterface]) -> [(address: String, interface: String)] {
        var out: [(address: String, interface: String)] = []
        for i in interfaces {
            guard i.name != "lo", !isVirtual(i.device),
                  i.assignType.map({ trimmed($0) == "0" }) ?? true,
                  let raw = i.address, let address = hardwareAddress(trimmed(raw)) else { continue }
            if let k = out.firstIndex(where: { $0.address == address }) {
                out[k].interface = min(out[k].interface, i.name)
            } else {
                out.append((address, i.name))
            }
        }
        return out.sorted { $0.address < $1.address }
    }

    /// The machine's identity (hashed by the caller) and where it came from, for the log.
    /// `serial`: the board's, nil without one. `machineID`: /etc/machine-id's bytes (nil when
    /// unreadable; anything but 32 lowercase hex digits and a newline is not taken).
    public static func choose(serial: UInt64?, machineID: [UInt8]?, interfaces: [NetworkInterface], hostname: String) -> (id: String, from: String) {
        // Decimal, as ever: a Pi keeps the client ID it had.
        if let serial { return ("serial:\(serial)", "the board serial") }
        let hardware = permanentAddresses(interfaces)
        let names = hardware.map(\.interface).sorted()
        let withHardware = hardware.isEmpty ? "" : "/mac:" + hardware.map(\.address).joined(separator: ",")
        let fromHardware = hardware.isEmpty
            ? " (no board serial, no permanent network address: a copy of this system gets the same)"
            : " and the network hardware addresses of \(names.joined(separator: ", "))"
        if let bytes = machineID {
            let id = bytes.prefix { $0 != 0x0a }
            if id.count == 32, id.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) }) {
                return ("machine-id:" + String(decoding: id, as: UTF8.self) + withHardware, "/etc/machine-id" + fromHardware)
            }
        }
        return ("hostname:" + hostname + withHardware, "the hostname" + fromHardware)
    }

    /// `aa:bb:cc:dd:ee:ff` (6 octets or more, as InfiniBand's 20), lowercase; nil when not hex
    /// pairs, all zeros, or a group address (the first octet's low bit).
    static func hardwareAddress(_ text: String) -> String? {
        let parts = text.lowercased().split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count >= 6, parts.allSatisfy({ $0.count == 2 && $0.allSatisfy(\.isHexDigit) }),
              let first = UInt8(parts[0], radix: 16), first & 1 == 0,
              parts.contains(where: { $0 != "00" }) else { return nil }
        return parts.joined(separator: ":")
    }

    private static func trimmed(_ s: String) -> String {
        String(s.unicodeScalars.filter { $0 != "\n" && $0 != " " && $0 != "\0" })
    }
}
