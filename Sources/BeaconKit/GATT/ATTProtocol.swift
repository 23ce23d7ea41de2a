// The Attribute Protocol's vocabulary (Bluetooth Core Specification Vol 3 Part F): opcodes, error
// codes, UUIDs as ATT carries them. Pure values, no I/O.

/// ATT opcodes (Part F 3.4.8). Bit 6 is the Command Flag, bit 7 the Authentication Signature Flag.
public enum ATTOpcode {
    public static let errorResponse: UInt8 = 0x01
    public static let exchangeMTURequest: UInt8 = 0x02
    public static let exchangeMTUResponse: UInt8 = 0x03
    public static let findInformationRequest: UInt8 = 0x04
    public static let findInformationResponse: UInt8 = 0x05
    public static let findByTypeValueRequest: UInt8 = 0x06
    public static let findByTypeValueResponse: UInt8 = 0x07
    public static let readByTypeRequest: UInt8 = 0x08
    public static let readByTypeResponse: UInt8 = 0x09
    public static let readRequest: UInt8 = 0x0A
    public static let readResponse: UInt8 = 0x0B
    public static let readBlobRequest: UInt8 = 0x0C
    public static let readBlobResponse: UInt8 = 0x0D
    public static let readMultipleRequest: UInt8 = 0x0E
    public static let readMultipleResponse: UInt8 = 0x0F
    public static let readByGroupTypeRequest: UInt8 = 0x10
    public static let readByGroupTypeResponse: UInt8 = 0x11
    public static let writeRequest: UInt8 = 0x12
    public static let writeResponse: UInt8 = 0x13
    public static let prepareWriteRequest: UInt8 = 0x16
    public static let prepareWriteResponse: UInt8 = 0x17
    public static let executeWriteRequest: UInt8 = 0x18
    public static let executeWriteResponse: UInt8 = 0x19
    public static let handleValueNotification: UInt8 = 0x1B
    public static let handleValueIndication: UInt8 = 0x1D
    public static let handleValueConfirmation: UInt8 = 0x1E
    public static let readMultipleVariableRequest: UInt8 = 0x20
    public static let readMultipleVariableResponse: UInt8 = 0x21
    public static let multipleHandleValueNotification: UInt8 = 0x23
    public static let writeCommand: UInt8 = 0x52
    public static let signedWriteCommand: UInt8 = 0xD2

    /// Bit 6: a command, which a server that does not support it ignores (Part F 3.3).
    public static let commandFlag: UInt8 = 0x40

    /// PDUs a client may send that are neither requests nor commands: responses (to a server role
    /// we do not have), notifications, indications, the confirmation. None is answered.
    static let neverAnswered: Set<UInt8> = [
        errorResponse, exchangeMTUResponse, findInformationResponse, findByTypeValueResponse,
        readByTypeResponse, readResponse, readBlobResponse, readMultipleResponse,
        readByGroupTypeResponse, writeResponse, prepareWriteResponse, executeWriteResponse,
        handleValueNotification, handleValueIndication, handleValueConfirmation,
        readMultipleVariableResponse, multipleHandleValueNotification,
    ]
}

/// ATT error codes (Part F 3.4.1.1), the ones this server sends.
public enum ATTErrorCode: UInt8, Sendable, Equatable {
    case invalidHandle = 0x01
    case readNotPermitted = 0x02
    case writeNotPermitted = 0x03
    case invalidPDU = 0x04
    case requestNotSupported = 0x06
    case invalidOffset = 0x07
    case attributeNotFound = 0x0A
    case unsupportedGroupType = 0x10
}

/// ATT_MTU values for LE (Part F 3.2.8, Part G 5.2.1).
public enum ATTMTU {
    /// The default ATT_MTU on LE before (or without) an Exchange MTU.
    public static let leDefault = 23
    /// The largest ATT_MTU worth offering: an attribute value is at most 512 octets (Part F
    /// 3.2.9), so a Read Response (opcode + value) needs 513 and a Read By Type entry 517. BlueZ
    /// offers the same.
    public static let maximum = 517
}

/// A UUID as ATT carries it: 2 octets (a 16-bit Bluetooth UUID) or 16 octets, little-endian.
/// Two UUIDs are equal when their 128-bit forms are (a 16-bit UUID is the Bluetooth Base UUID
/// 00000000-0000-1000-8000-00805F9B34FB with its value in bits 96-111; Part B 2.5.1).
public struct GATTUUID: Hashable, Sendable, CustomStringConvertible {
    /// The octets in the order they go on air (little-endian): 2 or 16 of them.
    public let wire: [UInt8]

    /// The Bluetooth Base UUID, little-endian, with zero where a 16-bit value goes (octets 12-13).
    static let baseLittleEndian: [UInt8] = [0xFB, 0x34, 0x9B, 0x5F, 0x80, 0x00, 0x00, 0x80,
                                            0x00, 0x10, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00]

    public init(_ uuid16: UInt16) {
        wire = [UInt8(uuid16 & 0xff), UInt8(uuid16 >> 8)]
    }

    /// From the octets on air; nil unless there are 2 or 16 of them.
    public init?<C: Collection>(wire octets: C) where C.Element == UInt8 {
        guard octets.count == 2 || octets.count == 16 else { return nil }
        wire = Array(octets)
    }

    /// From the textual form, e.g. "8C422626-0C6E-4B86-8EC7-9147B233D97E" (hyphens optional, any
    /// case): the text is most significant first, the wire form the reverse.
    public init?(_ text: String) {
        var bytes: [UInt8] = []
        var high: UInt8? = nil
        for c in text.utf8 where c != UInt8(ascii: "-") {
            let nibble: UInt8
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): nibble = c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): nibble = c - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): nibble = c - UInt8(ascii: "A") + 10
            default: return nil
            }
            if let h = high { bytes.append(h << 4 | nibble); high = nil } else { high = nibble }
        }
        guard high == nil, bytes.count == 2 || bytes.count == 16 else { return nil }
        wire = bytes.reversed()
    }

    /// The 16-octet little-endian form.
    public var full: [UInt8] {
        if wire.count == 16 { return wire }
        var b = GATTUUID.baseLittleEndian
        b[12] = wire[0]
        b[13] = wire[1]
        return b
    }

    /// The 16-bit value, when this UUID is one (in either form).
    public var uuid16: UInt16? {
        let f = full
        guard Array(f[0..<12]) == Array(GATTUUID.baseLittleEndian[0..<12]), f[14] == 0, f[15] == 0 else { return nil }
        return UInt16(f[12]) | UInt16(f[13]) << 8
    }

    public static func == (a: GATTUUID, b: GATTUUID) -> Bool { a.full == b.full }
    public func hash(into hasher: inout Hasher) { hasher.combine(full) }

    /// "2800" for a 16-bit UUID, else the 8-4-4-4-12 uppercase form.
    public var description: String {
        if wire.count == 2 { return hexString(wire.reversed()).uppercased() }
        let h = hexString(wire.reversed()).uppercased()
        let c = Array(h)
        var s = String(c[0..<8])
        s += "-" + String(c[8..<12])
        s += "-" + String(c[12..<16])
        s += "-" + String(c[16..<20])
        s += "-" + String(c[20..<32])
        return s
    }
}

/// GATT's attribute types (Part G 3) and the characteristics this server holds.
public enum GATTType {
    public static let primaryService = GATTUUID(0x2800)
    public static let secondaryService = GATTUUID(0x2801)
    public static let include = GATTUUID(0x2802)
    public static let characteristic = GATTUUID(0x2803)
    public static let genericAccess = GATTUUID(0x1800)
    public static let genericAttribute = GATTUUID(0x1801)
    public static let deviceName = GATTUUID(0x2A00)
    public static let appearance = GATTUUID(0x2A01)
}

/// Characteristic properties (Part G 3.3.1.1), the bits this server uses.
public enum GATTProperty {
    public static let read: UInt8 = 0x02
    public static let writeWithoutResponse: UInt8 = 0x04
    public static let write: UInt8 = 0x08
}

extension ArraySlice where Element == UInt8 {
    /// The little-endian 16-bit value at `offset` octets from the start (bounds checked by the caller).
    func attLE16(at offset: Int) -> UInt16 {
        UInt16(self[startIndex + offset]) | UInt16(self[startIndex + offset + 1]) << 8
    }
}

extension Array where Element == UInt8 {
    mutating func appendATTLE16(_ v: UInt16) {
        append(UInt8(v & 0xff))
        append(UInt8(v >> 8))
    }
}
