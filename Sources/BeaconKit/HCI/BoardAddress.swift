/// A Bluetooth device address. `bytes` in on-air order (least significant first), as HCI, mgmt
/// and the kernel's bdaddr_t carry it; `description` most significant first (AA:BB:CC:DD:EE:FF).
public struct BluetoothAddress: Equatable, Hashable, Sendable, CustomStringConvertible {
    public let bytes: [UInt8]

    /// nil unless exactly six bytes.
    public init?(bytes: [UInt8]) {
        guard bytes.count == 6 else { return nil }
        self.bytes = bytes
    }

    /// From text as printed (`43:45:C0:00:1F:AC`, either case).
    public init?(_ text: String) {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 6 else { return nil }
        var b: [UInt8] = []
        for p in parts.reversed() {
            guard p.utf8.count == 2, let v = UInt8(p, radix: 16) else { return nil }
            b.append(v)
        }
        bytes = b
    }

    /// The 48-bit value (most significant byte first in `description`).
    public init(value: UInt64) {
        bytes = (0..<6).map { UInt8(truncatingIfNeeded: value >> (8 * UInt64($0))) }
    }

    public var description: String { bluetoothAddressText(bytes) }

    /// A static random address: the two most significant bits are 1, and the other 46 bits are
    /// neither all 0 nor all 1 (Core Spec Vol 6 Part B 1.3.2.1).
    public var isStaticRandom: Bool {
        let rest = value & 0x3fff_ffff_ffff
        return value >> 46 == 0b11 && rest != 0 && rest != 0x3fff_ffff_ffff
    }

    public var value: UInt64 {
        bytes.enumerated().reduce(0) { $0 | UInt64($1.element) << (8 * UInt64($1.offset)) }
    }
}

/// Which addresses are not the board's own, and what to give a board instead.
public enum BoardAddress {
    /// Addresses a controller reports when nobody gave it one: the same on every board with that
    /// chip, so two beacons would share it. From the Linux kernel's drivers/bluetooth/btbcm.c
    /// (btbcm_check_bdaddr: BDADDR_BCM20702A0, _BCM20702A1, _BCM2076B1, _BCM43430A0, _BCM43430A1,
    /// _BCM4324B3, _BCM4330B1, _BCM4334B0, _BCM4345C5, _BCM43341B, _BCM4384B0, printed here most
    /// significant first); plus all zeros and all ones, and 43:45:C0:00:1F:AC, which the kernel
    /// does not list but several Pi 3B+ report (BCM4345C0, SPEC §11).
    public static let chipDefaults: [BluetoothAddress] = [
        "00:00:00:00:00:00", "FF:FF:FF:FF:FF:FF",
        "00:20:70:02:A0:00", "20:70:02:A0:00:00", "20:76:A0:00:56:79", "43:43:A0:12:1F:AC",
        "AA:AA:AA:AA:AA:AA", "43:24:B3:00:00:00", "43:30:B1:00:00:00", "43:34:B0:00:00:00",
        "43:45:C5:00:1F:AC", "43:34:1B:00:1F:AC", "43:84:B0:00:76:93",
        "43:45:C0:00:1F:AC",
    ].compactMap { BluetoothAddress($0) }

    public static func isChipDefault(_ a: BluetoothAddress) -> Bool { chipDefaults.contains(a) }

    /// The board's serial from /proc/device-tree/serial-number: hex text (16 digits on a Pi),
    /// NUL-terminated. nil when it is not hex or is zero (an emulator's board has none).
    public static func serial(fromDeviceTree bytes: [UInt8]) -> UInt64? {
        var text = bytes[...]
        while let last = text.last, last == 0 || last == 0x0a || last == 0x20 { text = text.dropLast() }
        guard (1...16).contains(text.count) else { return nil }
        var v: UInt64 = 0
        for c in text {
            let d: UInt8
            switch c {
            case 0x30...0x39: d = c - 0x30
            case 0x41...0x46: d = c - 0x41 + 10
            case 0x61...0x66: d = c - 0x61 + 10
            default: return nil
            }
            v = v << 4 | UInt64(d)
        }
        return v == 0 ? nil : v
    }

    /// Raspberry Pi OS's own address for the on-board controller (pi-bluetooth's `bthelper` and
    /// the older `btuart`): the Foundation's OUI B8:27:EB, then the serial's three low bytes each
    /// XOR 0xAA. The same board gets the same address under either OS.
    public static func raspberryPi(serial: UInt64) -> BluetoothAddress {
        let low = serial & 0xff_ffff
        return BluetoothAddress(value: 0xb8_27_eb_00_00_00 | (low ^ 0xaa_aa_aa))
    }

    /// A static random address of this board, for a controller whose public address cannot be
    /// set: stable across boots (a hash of the serial, not random), top two bits 11.
    public static func staticRandom(serial: UInt64) -> BluetoothAddress {
        // FNV-1a 64 over a label and the serial's bytes: the label keeps it apart from any other
        // use of the same hash on the serial.
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in Array("altbeacond static address".utf8) + (0..<8).map({ UInt8(truncatingIfNeeded: serial >> (56 - 8 * UInt64($0))) }) {
            h = (h ^ UInt64(b)) &* 0x0000_0100_0000_01b3
        }
        var v = (h ^ (h >> 48)) & 0x3fff_ffff_ffff
        if v == 0 || v == 0x3fff_ffff_ffff { v ^= 1 }
        return BluetoothAddress(value: 0xc000_0000_0000 | v)
    }
}
