/// The legacy PDU a frame goes out as: ADV_NONCONN_IND (the study guide's), ADV_SCAN_IND (a
/// frame with the beacon's name in its scan response), ADV_IND (the GATT identity).
public enum LegacyPDU: Equatable, Sendable {
    case nonConnectable, scannable, connectable

    /// Advertising_Type of LE Set Advertising Parameters.
    public var advertisingType: UInt8 {
        switch self {
        case .nonConnectable: 0x03
        case .scannable: 0x02
        case .connectable: 0x00
        }
    }

    /// Advertising_Event_Properties of LE Set Extended Advertising Parameters.
    public var eventProperties: UInt16 {
        switch self {
        case .nonConnectable: AdvertisingEventProperties.legacyNonConnectable
        case .scannable: AdvertisingEventProperties.legacyScannable
        case .connectable: AdvertisingEventProperties.legacyConnectable
        }
    }

    /// As `check` names it.
    public var pduName: String {
        switch self {
        case .nonConnectable: "ADV_NONCONN_IND"
        case .scannable: "ADV_SCAN_IND"
        case .connectable: "ADV_IND"
        }
    }
}

/// Advertising event properties for extended commands with a legacy PDU.
public enum AdvertisingEventProperties {
    /// Bit 4 alone: legacy ADV_NONCONN_IND.
    public static let legacyNonConnectable: UInt16 = 0x0010
    /// Bits 1 and 4: legacy ADV_SCAN_IND (scannable, undirected).
    public static let legacyScannable: UInt16 = 0x0012
    /// Bits 0, 1 and 4: legacy ADV_IND (connectable, scannable, undirected).
    public static let legacyConnectable: UInt16 = 0x0013
}
