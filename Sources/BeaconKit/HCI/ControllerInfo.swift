/// What the controller said about itself (Read Local Version, LE Read Local Supported Features).
public struct ControllerInfo: Equatable, Sendable {
    /// HCI version: 6 = 4.0, 7 = 4.1, 8 = 4.2, 9 = 5.0, ...
    public var hciVersion: UInt8
    public var manufacturer: UInt16
    public var leFeatures: UInt64
    public var advertisingSets: UInt8

    public init(hciVersion: UInt8, manufacturer: UInt16, leFeatures: UInt64, advertisingSets: UInt8 = 0) {
        self.hciVersion = hciVersion; self.manufacturer = manufacturer
        self.leFeatures = leFeatures; self.advertisingSets = advertisingSets
    }

    /// LE feature bit 12: LE Extended Advertising.
    public var hasExtendedAdvertising: Bool { leFeatures & (1 << 12) != 0 }

    public var versionName: String {
        let names: [UInt8: String] = [0: "1.0b", 1: "1.1", 2: "1.2", 3: "2.0", 4: "2.1", 5: "3.0", 6: "4.0",
                                      7: "4.1", 8: "4.2", 9: "5.0", 10: "5.1", 11: "5.2", 12: "5.3", 13: "5.4", 14: "6.0"]
        return "Bluetooth " + (names[hciVersion] ?? "version \(hciVersion)")
    }

    /// Read Local Version return parameters: status, HCI version, HCI revision (2),
    /// LMP version, manufacturer (2), LMP subversion (2).
    public static func parseVersion(_ rp: [UInt8]) -> (hciVersion: UInt8, manufacturer: UInt16)? {
        guard rp.count >= 9, rp[0] == 0 else { return nil }
        return (rp[1], UInt16(rp[5]) | UInt16(rp[6]) << 8)
    }

    /// LE Read Local Supported Features return parameters: status, 8 feature bytes (LE).
    public static func parseLEFeatures(_ rp: [UInt8]) -> UInt64? {
        guard rp.count >= 9, rp[0] == 0 else { return nil }
        var v: UInt64 = 0
        for i in 0..<8 { v |= UInt64(rp[1 + i]) << (8 * UInt64(i)) }
        return v
    }

    /// LE Read Number of Supported Advertising Sets: status, count.
    public static func parseAdvertisingSets(_ rp: [UInt8]) -> UInt8? {
        guard rp.count >= 2, rp[0] == 0 else { return nil }
        return rp[1]
    }
}
