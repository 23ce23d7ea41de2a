// The commands altbeacond sends, as small value types (Core Spec v5.3 Vol 4 Part E §7).

public struct Reset: HCICommand {
    public static let opcode = HCIOpcode.reset
    public init() {}
    public var parameters: [UInt8] { [] }
}

public struct ReadLocalVersion: HCICommand {
    public typealias Reply = LocalVersionReply
    public static let opcode = HCIOpcode.readLocalVersion
    public init() {}
    public var parameters: [UInt8] { [] }
}

public struct LEReadLocalSupportedFeatures: HCICommand {
    public typealias Reply = LEFeaturesReply
    public static let opcode = HCIOpcode.leReadLocalFeatures
    public init() {}
    public var parameters: [UInt8] { [] }
}

public struct LEReadNumberOfSupportedAdvertisingSets: HCICommand {
    public typealias Reply = AdvertisingSetCountReply
    public static let opcode = HCIOpcode.leReadNumberOfSupportedAdvertisingSets
    public init() {}
    public var parameters: [UInt8] { [] }
}

/// Own Address Type of the advertising parameters: the controller's public address, or the
/// random address set with LE Set Random Address (legacy) or LE Set Advertising Set Random
/// Address (a set): a static random address where the public one cannot be made usable.
public enum OwnAddressType: UInt8, Sendable {
    case `public` = 0x00
    case random = 0x01
}

/// LE Set Advertising Parameters: min = max interval, ADV_NONCONN_IND (or ADV_SCAN_IND, ADV_IND),
/// public address (or the random one), all three channels, no filter — the study-guide setup.
public struct LESetAdvertisingParameters: HCICommand {
    public static let opcode = HCIOpcode.leSetAdvertisingParameters
    public static let nonConnectableUndirected: UInt8 = 0x03
    /// ADV_SCAN_IND: scannable undirected (a frame with the beacon's name).
    public static let scannableUndirected: UInt8 = 0x02
    /// ADV_IND: connectable and scannable undirected (the GATT identity).
    public static let connectableUndirected: UInt8 = 0x00
    public var intervalUnits: UInt16
    public var pdu: LegacyPDU
    public var ownAddress: OwnAddressType
    public init(intervalMs: UInt16, pdu: LegacyPDU, ownAddress: OwnAddressType = .public) {
        intervalUnits = UInt16(truncatingIfNeeded: AdvertisingInterval.units(milliseconds: UInt32(intervalMs)))
        self.pdu = pdu
        self.ownAddress = ownAddress
    }
    public init(intervalMs: UInt16, connectable: Bool = false, ownAddress: OwnAddressType = .public) {
        self.init(intervalMs: intervalMs, pdu: connectable ? .connectable : .nonConnectable, ownAddress: ownAddress)
    }
    public var connectable: Bool { pdu == .connectable }
    public var parameters: [UInt8] {
        le16(intervalUnits) + le16(intervalUnits) + [
            pdu.advertisingType,
            ownAddress.rawValue,                // own address type
            0x00, 0, 0, 0, 0, 0, 0,             // peer address type and address: unused
            0x07,                               // channels 37, 38, 39
            0x00,                               // no filter
        ]
    }
}

/// LE Set Random Address: the address legacy advertising with own address type random sends
/// from. Refused (Command Disallowed) while legacy advertising or scanning is on.
public struct LESetRandomAddress: HCICommand {
    public static let opcode = HCIOpcode.leSetRandomAddress
    public var address: BluetoothAddress
    public init(_ address: BluetoothAddress) { self.address = address }
    public var parameters: [UInt8] { address.bytes }
}

/// LE Set Advertising Set Random Address: the random address one extended set sends from.
public struct LESetAdvertisingSetRandomAddress: HCICommand {
    public static let opcode = HCIOpcode.leSetAdvertisingSetRandomAddress
    public var handle: UInt8
    public var address: BluetoothAddress
    public init(handle: UInt8, _ address: BluetoothAddress) { self.handle = handle; self.address = address }
    public var parameters: [UInt8] { [handle] + address.bytes }
}

/// LE Set Advertising Data: a length byte, then 31 bytes zero-padded.
public struct LESetAdvertisingData: HCICommand {
    public static let opcode = HCIOpcode.leSetAdvertisingData
    public var data: [UInt8]
    public init(data: [UInt8]) { self.data = Array(data.prefix(31)) }
    public var parameters: [UInt8] { legacyPayload(data) }
}

/// A legacy advertising or scan response payload as the commands carry it: a length byte, then
/// the data zero-padded to 31 bytes.
func legacyPayload(_ data: [UInt8]) -> [UInt8] {
    [UInt8(data.count)] + data + [UInt8](repeating: 0, count: 31 - data.count)
}

public struct LESetAdvertiseEnable: HCICommand {
    public static let opcode = HCIOpcode.leSetAdvertiseEnable
    public var enable: Bool
    public init(_ enable: Bool) { self.enable = enable }
    public var parameters: [UInt8] { [enable ? 1 : 0] }
}

/// LE Set Extended Advertising Parameters with legacy PDU properties (ADV_NONCONN_IND, ADV_SCAN_IND
/// for a frame with the beacon's name, or ADV_IND for the GATT identity).
public struct LESetExtendedAdvertisingParameters: HCICommand {
    public static let opcode = HCIOpcode.leSetExtendedAdvertisingParameters
    /// "Host has no preference" for TX power.
    public static let noTxPowerPreference: Int8 = 0x7f
    public var handle: UInt8
    public var intervalUnits: UInt32
    public var txPower: Int8
    public var pdu: LegacyPDU
    public var ownAddress: OwnAddressType
    public init(handle: UInt8, intervalMs: UInt16, txPowerDbm: Int8?, pdu: LegacyPDU,
                ownAddress: OwnAddressType = .public) {
        self.handle = handle
        self.pdu = pdu
        self.ownAddress = ownAddress
        intervalUnits = AdvertisingInterval.units(milliseconds: UInt32(intervalMs))
        txPower = txPowerDbm ?? Self.noTxPowerPreference
    }
    public init(handle: UInt8, intervalMs: UInt16, txPowerDbm: Int8?, connectable: Bool = false,
                ownAddress: OwnAddressType = .public) {
        self.init(handle: handle, intervalMs: intervalMs, txPowerDbm: txPowerDbm,
                  pdu: connectable ? .connectable : .nonConnectable, ownAddress: ownAddress)
    }
    public var connectable: Bool { pdu == .connectable }
    public var parameters: [UInt8] {
        [handle] + le16(pdu.eventProperties)
            + le24(intervalUnits) + le24(intervalUnits)
            + [0x07,                            // channels 37, 38, 39
               ownAddress.rawValue,             // own address type
               0x00, 0, 0, 0, 0, 0, 0,          // peer: unused
               0x00,                            // no filter
               UInt8(bitPattern: txPower),
               0x01,                            // primary PHY: LE 1M (legacy PDUs require it)
               0x00,                            // secondary max skip
               0x01,                            // secondary PHY: LE 1M
               0x00,                            // advertising SID
               0x00]                            // no scan request notifications
    }
}

/// LE Set Extended Advertising Data, the whole payload in one fragment.
public struct LESetExtendedAdvertisingData: HCICommand {
    public static let opcode = HCIOpcode.leSetExtendedAdvertisingData
    public var handle: UInt8
    public var data: [UInt8]
    public init(handle: UInt8, data: [UInt8]) { self.handle = handle; self.data = Array(data.prefix(251)) }
    public var parameters: [UInt8] {
        [handle,
         0x03,                                  // operation: complete data
         0x01,                                  // controller should not fragment
         UInt8(data.count)] + data
    }
}

/// LE Set Extended Advertising Enable for one set, no duration or event limit.
public struct LESetExtendedAdvertisingEnable: HCICommand {
    public static let opcode = HCIOpcode.leSetExtendedAdvertisingEnable
    public var enable: Bool
    public var handle: UInt8
    public init(_ enable: Bool, handle: UInt8) { self.enable = enable; self.handle = handle }
    public var parameters: [UInt8] { [enable ? 1 : 0, 1, handle, 0, 0, 0] }
}

/// LE Set Scan Response Data: a length byte, then 31 bytes zero-padded.
public struct LESetScanResponseData: HCICommand {
    public static let opcode = HCIOpcode.leSetScanResponseData
    public var data: [UInt8]
    public init(data: [UInt8]) { self.data = Array(data.prefix(31)) }
    public var parameters: [UInt8] { legacyPayload(data) }
}

/// LE Set Extended Scan Response Data, the whole response in one fragment.
public struct LESetExtendedScanResponseData: HCICommand {
    public static let opcode = HCIOpcode.leSetExtendedScanResponseData
    public var handle: UInt8
    public var data: [UInt8]
    public init(handle: UInt8, data: [UInt8]) { self.handle = handle; self.data = Array(data.prefix(251)) }
    public var parameters: [UInt8] { [handle, 0x03, 0x01, UInt8(data.count)] + data }
}

public struct LERemoveAdvertisingSet: HCICommand {
    public static let opcode = HCIOpcode.leRemoveAdvertisingSet
    public var handle: UInt8
    public init(handle: UInt8) { self.handle = handle }
    public var parameters: [UInt8] { [handle] }
}

/// LE Set Scan Parameters for the observer: passive, public address, accept all.
public struct LESetScanParameters: HCICommand {
    public static let opcode = HCIOpcode.leSetScanParameters
    public var active: Bool
    public var intervalUnits: UInt16
    public var windowUnits: UInt16
    public init(active: Bool = false, intervalUnits: UInt16 = 0x0010, windowUnits: UInt16 = 0x0010) {
        self.active = active; self.intervalUnits = intervalUnits; self.windowUnits = windowUnits
    }
    public var parameters: [UInt8] { [active ? 1 : 0] + le16(intervalUnits) + le16(windowUnits) + [0x00, 0x00] }
}

public struct LESetScanEnable: HCICommand {
    public static let opcode = HCIOpcode.leSetScanEnable
    public var enable: Bool
    public var filterDuplicates: Bool
    public init(_ enable: Bool, filterDuplicates: Bool = false) { self.enable = enable; self.filterDuplicates = filterDuplicates }
    public var parameters: [UInt8] { [enable ? 1 : 0, filterDuplicates ? 1 : 0] }
}

/// LE Set Extended Scan Parameters on the LE 1M PHY only.
public struct LESetExtendedScanParameters: HCICommand {
    public static let opcode = HCIOpcode.leSetExtendedScanParameters
    public var active: Bool
    public var intervalUnits: UInt16
    public var windowUnits: UInt16
    public init(active: Bool = false, intervalUnits: UInt16 = 0x0010, windowUnits: UInt16 = 0x0010) {
        self.active = active; self.intervalUnits = intervalUnits; self.windowUnits = windowUnits
    }
    public var parameters: [UInt8] {
        [0x00,                                  // own address: public
         0x00,                                  // accept all
         0x01,                                  // PHYs: LE 1M
         active ? 1 : 0] + le16(intervalUnits) + le16(windowUnits)
    }
}

public struct LESetExtendedScanEnable: HCICommand {
    public static let opcode = HCIOpcode.leSetExtendedScanEnable
    public var enable: Bool
    public var filterDuplicates: Bool
    public init(_ enable: Bool, filterDuplicates: Bool = false) { self.enable = enable; self.filterDuplicates = filterDuplicates }
    public var parameters: [UInt8] { [enable ? 1 : 0, filterDuplicates ? 1 : 0, 0, 0, 0, 0] }
}

/// LE Set Extended Advertising Enable with no sets: disables every set (LE Clear Advertising Sets
/// is refused while any set is enabled).
public struct LEDisableAllExtendedAdvertising: HCICommand {
    public static let opcode = HCIOpcode.leSetExtendedAdvertisingEnable
    public init() {}
    public var parameters: [UInt8] { [0, 0] }
}

/// LE Clear Advertising Sets: every extended set of the controller, at start, so that sets left by
/// a previous process (SIGKILL, a watchdog abort) never stay on air beside ours.
public struct LEClearAdvertisingSets: HCICommand {
    public static let opcode = HCIOpcode.leClearAdvertisingSets
    public init() {}
    public var parameters: [UInt8] { [] }
}
