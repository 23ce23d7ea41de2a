/// An HCI error code (Core Spec Vol 1 Part F), named for logs.
public struct HCIStatus: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let success = HCIStatus(rawValue: 0x00)
    public static let unknownCommand = HCIStatus(rawValue: 0x01)
    public static let unknownConnection = HCIStatus(rawValue: 0x02)
    public static let hardwareFailure = HCIStatus(rawValue: 0x03)
    public static let memoryCapacityExceeded = HCIStatus(rawValue: 0x07)
    public static let commandDisallowed = HCIStatus(rawValue: 0x0c)
    public static let unsupportedFeature = HCIStatus(rawValue: 0x11)
    public static let invalidParameters = HCIStatus(rawValue: 0x12)
    public static let unspecifiedError = HCIStatus(rawValue: 0x1f)
    public static let controllerBusy = HCIStatus(rawValue: 0x3a)
    public static let unknownAdvertisingIdentifier = HCIStatus(rawValue: 0x42)

    static let names: [UInt8: String] = [
        0x00: "Success", 0x01: "Unknown HCI Command", 0x02: "Unknown Connection Identifier",
        0x03: "Hardware Failure", 0x04: "Page Timeout", 0x05: "Authentication Failure",
        0x07: "Memory Capacity Exceeded", 0x0c: "Command Disallowed",
        0x0d: "Connection Rejected due to Limited Resources", 0x11: "Unsupported Feature or Parameter Value",
        0x12: "Invalid HCI Command Parameters", 0x1e: "Invalid LMP/LL Parameters",
        0x1f: "Unspecified Error", 0x20: "Unsupported LMP/LL Parameter Value",
        0x3a: "Controller Busy", 0x42: "Unknown Advertising Identifier", 0x43: "Limit Reached",
        0x45: "Packet Too Long",
    ]
    public var name: String { Self.names[rawValue] ?? "Unknown Error" }
    public var description: String { "\(name) (0x\(hexString(CollectionOfOne(rawValue))))" }
}
