/// An HCI command opcode: OGF (6 bits) and OCF (10 bits).
public struct HCIOpcode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }
    public init(ogf: UInt8, ocf: UInt16) { rawValue = UInt16(ogf) << 10 | (ocf & 0x3ff) }
    public var ogf: UInt8 { UInt8(rawValue >> 10) }
    public var ocf: UInt16 { rawValue & 0x3ff }

    public static let disconnect = HCIOpcode(ogf: 0x01, ocf: 0x0006)
    public static let reset = HCIOpcode(ogf: 0x03, ocf: 0x0003)
    public static let readLocalVersion = HCIOpcode(ogf: 0x04, ocf: 0x0001)
    public static let leSetEventMask = HCIOpcode(ogf: 0x08, ocf: 0x0001)
    public static let leReadLocalFeatures = HCIOpcode(ogf: 0x08, ocf: 0x0003)
    public static let leSetRandomAddress = HCIOpcode(ogf: 0x08, ocf: 0x0005)
    public static let leSetAdvertisingParameters = HCIOpcode(ogf: 0x08, ocf: 0x0006)
    public static let leSetAdvertisingData = HCIOpcode(ogf: 0x08, ocf: 0x0008)
    public static let leSetScanResponseData = HCIOpcode(ogf: 0x08, ocf: 0x0009)
    public static let leSetAdvertiseEnable = HCIOpcode(ogf: 0x08, ocf: 0x000a)
    public static let leSetScanParameters = HCIOpcode(ogf: 0x08, ocf: 0x000b)
    public static let leSetScanEnable = HCIOpcode(ogf: 0x08, ocf: 0x000c)
    public static let leSetAdvertisingSetRandomAddress = HCIOpcode(ogf: 0x08, ocf: 0x0035)
    public static let leSetExtendedAdvertisingParameters = HCIOpcode(ogf: 0x08, ocf: 0x0036)
    public static let leSetExtendedAdvertisingData = HCIOpcode(ogf: 0x08, ocf: 0x0037)
    public static let leSetExtendedScanResponseData = HCIOpcode(ogf: 0x08, ocf: 0x0038)
    public static let leSetExtendedAdvertisingEnable = HCIOpcode(ogf: 0x08, ocf: 0x0039)
    public static let leReadNumberOfSupportedAdvertisingSets = HCIOpcode(ogf: 0x08, ocf: 0x003b)
    public static let leRemoveAdvertisingSet = HCIOpcode(ogf: 0x08, ocf: 0x003c)
    public static let leClearAdvertisingSets = HCIOpcode(ogf: 0x08, ocf: 0x003d)
    public static let leSetExtendedScanParameters = HCIOpcode(ogf: 0x08, ocf: 0x0041)
    public static let leSetExtendedScanEnable = HCIOpcode(ogf: 0x08, ocf: 0x0042)

    /// Table-driven names for logs.
    static let names: [UInt16: String] = [
        disconnect.rawValue: "Disconnect",
        reset.rawValue: "Reset",
        readLocalVersion.rawValue: "Read Local Version Information",
        leSetEventMask.rawValue: "LE Set Event Mask",
        leReadLocalFeatures.rawValue: "LE Read Local Supported Features",
        leSetRandomAddress.rawValue: "LE Set Random Address",
        leSetAdvertisingParameters.rawValue: "LE Set Advertising Parameters",
        leSetAdvertisingData.rawValue: "LE Set Advertising Data",
        leSetScanResponseData.rawValue: "LE Set Scan Response Data",
        leSetAdvertiseEnable.rawValue: "LE Set Advertise Enable",
        leSetScanParameters.rawValue: "LE Set Scan Parameters",
        leSetScanEnable.rawValue: "LE Set Scan Enable",
        leSetAdvertisingSetRandomAddress.rawValue: "LE Set Advertising Set Random Address",
        leSetExtendedAdvertisingParameters.rawValue: "LE Set Extended Advertising Parameters",
        leSetExtendedAdvertisingData.rawValue: "LE Set Extended Advertising Data",
        leSetExtendedScanResponseData.rawValue: "LE Set Extended Scan Response Data",
        leSetExtendedAdvertisingEnable.rawValue: "LE Set Extended Advertising Enable",
        leReadNumberOfSupportedAdvertisingSets.rawValue: "LE Read Number of Supported Advertising Sets",
        leRemoveAdvertisingSet.rawValue: "LE Remove Advertising Set",
        leClearAdvertisingSets.rawValue: "LE Clear Advertising Sets",
        leSetExtendedScanParameters.rawValue: "LE Set Extended Scan Parameters",
        leSetExtendedScanEnable.rawValue: "LE Set Extended Scan Enable",
    ]

    public var name: String { Self.names[rawValue] ?? "Unknown" }
    /// e.g. `LE Set Advertising Data (0x2008)`.
    public var description: String {
        "\(name) (0x\(hexString([UInt8(rawValue >> 8), UInt8(rawValue & 0xff)])))"
    }
}

/// A command the host sends: an opcode and its parameter bytes, and what its Command Complete
/// returns (`Reply`; most commands return their status alone).
public protocol HCICommand: Sendable {
    associatedtype Reply: HCIReply = HCIStatusReply
    static var opcode: HCIOpcode { get }
    var parameters: [UInt8] { get }
}

extension HCICommand {
    public var opcode: HCIOpcode { Self.opcode }
    /// The H4 packet written to an HCI socket: type 0x01, opcode (LE), length, parameters.
    public var packet: [UInt8] {
        let p = parameters
        return [0x01, UInt8(Self.opcode.rawValue & 0xff), UInt8(Self.opcode.rawValue >> 8), UInt8(p.count)] + p
    }
    /// `hcitool -i hciN cmd 0xOGF 0xOCF p1 p2 ...` as the study guide writes it.
    public func hcitoolLine(adapter: String) -> String {
        let ogf = "0x" + hexString([Self.opcode.ogf])
        let ocf = "0x" + hexString([UInt8(Self.opcode.ocf >> 8), UInt8(Self.opcode.ocf & 0xff)])
        let params = parameters.isEmpty ? "" : " " + spacedHex(parameters)
        return "hcitool -i \(adapter) cmd \(ogf) \(ocf)\(params)"
    }
}

@inline(__always) func le16(_ v: UInt16) -> [UInt8] { [UInt8(v & 0xff), UInt8(v >> 8)] }
@inline(__always) func le24(_ v: UInt32) -> [UInt8] { [UInt8(v & 0xff), UInt8((v >> 8) & 0xff), UInt8((v >> 16) & 0xff)] }

/// Advertising intervals travel in units of 0.625 ms.
public enum AdvertisingInterval {
    public static func units(milliseconds ms: UInt32) -> UInt32 { ms * 8 / 5 }
    public static func milliseconds(units: UInt32) -> UInt32 { units * 5 / 8 }
    /// Bluetooth 4.x controllers refuse non-connectable intervals under 100 ms.
    public static let legacyNonConnectableMinimumMs: UInt16 = 100
}
