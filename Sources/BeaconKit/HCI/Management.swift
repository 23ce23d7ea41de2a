/// The kernel's Bluetooth management interface (an HCI_CHANNEL_CONTROL socket), as far as
/// altbeacond uses it: giving a controller without a usable address one. Layouts from BlueZ's
/// doc/mgmt-api.txt ("Packet Structures", "Read Unconfigured Controller Index List Command",
/// "Read Controller Configuration Information Command", "Set Public Address Command", "Set Static
/// Address Command", and the events "Command Complete", "Command Status", "Unconfigured Index
/// Added/Removed", "New Configuration Options"). Every field is little-endian.

/// Command and event codes (mgmt-api.txt).
public enum ManagementOpcode: UInt16, Sendable {
    case disconnect = 0x0014
    case setStaticAddress = 0x002b
    case readUnconfiguredIndexList = 0x0036
    case readConfigurationInfo = 0x0037
    case setExternalConfiguration = 0x0038
    case setPublicAddress = 0x0039
}

/// The controller index of commands that concern no controller (MGMT_INDEX_NONE).
public let managementIndexNone: UInt16 = 0xffff

/// A management status (mgmt-api.txt, "Status codes"): 0 is success.
public struct ManagementStatus: RawRepresentable, Equatable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let success = ManagementStatus(rawValue: 0x00)
    public static let busy = ManagementStatus(rawValue: 0x0a)
    public static let rejected = ManagementStatus(rawValue: 0x0b)
    public static let notSupported = ManagementStatus(rawValue: 0x0c)
    public static let invalidParameters = ManagementStatus(rawValue: 0x0d)
    public static let invalidIndex = ManagementStatus(rawValue: 0x11)
    public static let permissionDenied = ManagementStatus(rawValue: 0x14)

    private static let names: [UInt8: String] = [
        0x00: "Success", 0x01: "Unknown Command", 0x03: "Failed", 0x07: "No Resources", 0x08: "Timeout",
        0x0a: "Busy", 0x0b: "Rejected", 0x0c: "Not Supported", 0x0d: "Invalid Parameters",
        0x0f: "Not Powered", 0x11: "Invalid Index", 0x12: "RFKilled", 0x14: "Permission Denied",
    ]
    public var description: String {
        let hex = "0x" + hexString(CollectionOfOne(rawValue))
        return Self.names[rawValue].map { "\($0) (\(hex))" } ?? hex
    }
}

/// Controller configuration options (Supported_Options / Missing_Options bits).
public struct ManagementOptions: OptionSet, Equatable, Sendable, CustomStringConvertible {
    public var rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    public static let externalConfiguration = ManagementOptions(rawValue: 1 << 0)
    public static let publicAddress = ManagementOptions(rawValue: 1 << 1)

    public var description: String {
        var words: [String] = []
        if contains(.externalConfiguration) { words.append("external configuration") }
        if contains(.publicAddress) { words.append("public address") }
        let rest = rawValue & ~(Self.externalConfiguration.rawValue | Self.publicAddress.rawValue)
        if rest != 0 { words.append("other options \(rest)") }
        return words.isEmpty ? "none" : words.joined(separator: ", ")
    }
}

/// One command packet: the 6-byte header (opcode, index, parameter length), then the parameters.
public struct ManagementCommand: Equatable, Sendable {
    public var opcode: ManagementOpcode
    public var index: UInt16
    public var parameters: [UInt8]
    public init(_ opcode: ManagementOpcode, index: UInt16, parameters: [UInt8] = []) {
        self.opcode = opcode; self.index = index; self.parameters = parameters
    }

    public var bytes: [UInt8] { le16(opcode.rawValue) + le16(index) + le16(UInt16(parameters.count)) + parameters }

    public static func readUnconfiguredIndexList() -> ManagementCommand {
        ManagementCommand(.readUnconfiguredIndexList, index: managementIndexNone)
    }
    public static func readConfigurationInfo(index: UInt16) -> ManagementCommand {
        ManagementCommand(.readConfigurationInfo, index: index)
    }
    /// `address`: on-air byte order (least significant first), as the kernel's bdaddr_t.
    public static func setPublicAddress(index: UInt16, address: BluetoothAddress) -> ManagementCommand {
        ManagementCommand(.setPublicAddress, index: index, parameters: address.bytes)
    }
    public static func setStaticAddress(index: UInt16, address: BluetoothAddress) -> ManagementCommand {
        ManagementCommand(.setStaticAddress, index: index, parameters: address.bytes)
    }
    /// Disconnect (mgmt-api.txt): the peer's address (on-air byte order) and its type, LE public
    /// (1) or LE random (2).
    public static func disconnect(index: UInt16, address: BluetoothAddress, random: Bool) -> ManagementCommand {
        ManagementCommand(.disconnect, index: index, parameters: address.bytes + [random ? 2 : 1])
    }
}

/// Why a management packet could not be read. Decoders return these; they never trap.
public enum ManagementDecodeError: Error, Equatable, Sendable {
    case truncated(needed: Int, had: Int)
    case lengthMismatch(declared: Int, actual: Int)
}

/// The management events altbeacond reads.
public enum ManagementEvent: Equatable, Sendable {
    /// `opcode` is the raw command code: a reply to a command we do not know is still a reply.
    case commandComplete(opcode: UInt16, index: UInt16, status: ManagementStatus, parameters: [UInt8])
    case commandStatus(opcode: UInt16, index: UInt16, status: ManagementStatus)
    case unconfiguredIndexAdded(index: UInt16)
    case unconfiguredIndexRemoved(index: UInt16)
    case newConfigurationOptions(index: UInt16, missing: ManagementOptions)
    case other(code: UInt16, index: UInt16)

    public static let commandCompleteCode: UInt16 = 0x0001
    public static let commandStatusCode: UInt16 = 0x0002
    public static let unconfiguredIndexAddedCode: UInt16 = 0x001d
    public static let unconfiguredIndexRemovedCode: UInt16 = 0x001e
    public static let newConfigurationOptionsCode: UInt16 = 0x001f

    /// Decodes one event as read from the control socket (one packet per read), checking every
    /// length before reading.
    public static func decode(_ packet: ArraySlice<UInt8>) -> Result<ManagementEvent, ManagementDecodeError> {
        var r = ByteReader(packet)
        guard let code = r.u16(), let index = r.u16(), let plen = r.u16() else {
            return .failure(.truncated(needed: 6, had: packet.count))
        }
        guard r.remaining == Int(plen) else { return .failure(.lengthMismatch(declared: Int(plen), actual: r.remaining)) }
        switch code {
        case commandCompleteCode:
            guard let op = r.u16(), let st = r.u8() else { return .failure(.truncated(needed: 3, had: Int(plen))) }
            return .success(.commandComplete(opcode: op, index: index, status: ManagementStatus(rawValue: st), parameters: r.rest()))
        case commandStatusCode:
            guard let op = r.u16(), let st = r.u8() else { return .failure(.truncated(needed: 3, had: Int(plen))) }
            return .success(.commandStatus(opcode: op, index: index, status: ManagementStatus(rawValue: st)))
        case unconfiguredIndexAddedCode: return .success(.unconfiguredIndexAdded(index: index))
        case unconfiguredIndexRemovedCode: return .success(.unconfiguredIndexRemoved(index: index))
        case newConfigurationOptionsCode:
            guard let m = r.u32() else { return .failure(.truncated(needed: 4, had: Int(plen))) }
            return .success(.newConfigurationOptions(index: index, missing: ManagementOptions(rawValue: m)))
        default: return .success(.other(code: code, index: index))
        }
    }
}

/// Return parameters of the commands above, each length-checked (nil when short).
public enum ManagementReply {
    /// Read Unconfigured Controller Index List: Num_Controllers, then that many indices.
    public static func indexList(_ p: [UInt8]) -> [UInt16]? {
        var r = ByteReader(p[...])
        guard let n = r.u16(), r.remaining >= Int(n) * 2 else { return nil }
        return (0..<Int(n)).compactMap { _ in r.u16() }
    }

    /// Read Controller Configuration Information: Manufacturer, Supported_Options, Missing_Options.
    public static func configurationInfo(_ p: [UInt8]) -> (manufacturer: UInt16, supported: ManagementOptions, missing: ManagementOptions)? {
        var r = ByteReader(p[...])
        guard let m = r.u16(), let s = r.u32(), let x = r.u32() else { return nil }
        return (m, ManagementOptions(rawValue: s), ManagementOptions(rawValue: x))
    }

    /// Set Public Address and Set External Configuration: Missing_Options.
    public static func missingOptions(_ p: [UInt8]) -> ManagementOptions? {
        var r = ByteReader(p[...])
        return r.u32().map { ManagementOptions(rawValue: $0) }
    }

    /// Set Static Address: Current_Settings.
    public static func currentSettings(_ p: [UInt8]) -> UInt32? {
        var r = ByteReader(p[...])
        return r.u32()
    }
}

extension ByteReader {
    /// A little-endian 32-bit field (mgmt options and settings).
    public mutating func u32() -> UInt32? {
        guard remaining >= 4, let lo = u16(), let hi = u16() else { return nil }
        return UInt32(lo) | UInt32(hi) << 16
    }
}
