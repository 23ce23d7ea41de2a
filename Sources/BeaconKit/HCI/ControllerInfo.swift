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
}
