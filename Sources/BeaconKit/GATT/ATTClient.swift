// The ATT client's half of the protocol (Core Vol 3 Part F) as pure code: the requests a GATT
// client sends to discover a service and read a characteristic, and decoders for the responses.
// The responses come from whatever device answered a connection: every decoder checks the opcode
// and every length before it reads an octet, and says what was wrong instead of trapping.

/// Request PDUs, each exactly as Part F 3.4 lays it out.
public enum ATTRequest {
    /// ATT_EXCHANGE_MTU_REQ: Client Rx MTU.
    public static func exchangeMTU(clientRxMTU: Int) -> [UInt8] {
        var pdu: [UInt8] = [ATTOpcode.exchangeMTURequest]
        pdu.appendATTLE16(UInt16(clamping: clientRxMTU))
        return pdu
    }

    /// ATT_FIND_BY_TYPE_VALUE_REQ: range, a 16-bit attribute type, the value to match.
    /// GATT's Discover Primary Service by Service UUID: type «Primary Service», value the UUID.
    public static func findByTypeValue(start: UInt16, end: UInt16, type: UInt16, value: [UInt8]) -> [UInt8] {
        var pdu: [UInt8] = [ATTOpcode.findByTypeValueRequest]
        pdu.appendATTLE16(start)
        pdu.appendATTLE16(end)
        pdu.appendATTLE16(type)
        pdu.append(contentsOf: value)
        return pdu
    }

    /// ATT_READ_BY_TYPE_REQ: range and type (Discover All Characteristics: «Characteristic»).
    public static func readByType(start: UInt16, end: UInt16, type: GATTUUID) -> [UInt8] {
        ranged(ATTOpcode.readByTypeRequest, start, end, type)
    }

    /// ATT_READ_BY_GROUP_TYPE_REQ: range and group type (Discover All Primary Services).
    public static func readByGroupType(start: UInt16, end: UInt16, type: GATTUUID) -> [UInt8] {
        ranged(ATTOpcode.readByGroupTypeRequest, start, end, type)
    }

    /// ATT_READ_REQ: Attribute Handle.
    public static func read(handle: UInt16) -> [UInt8] {
        var pdu: [UInt8] = [ATTOpcode.readRequest]
        pdu.appendATTLE16(handle)
        return pdu
    }

    /// ATT_READ_BLOB_REQ: Attribute Handle, Value Offset.
    public static func readBlob(handle: UInt16, offset: UInt16) -> [UInt8] {
        var pdu: [UInt8] = [ATTOpcode.readBlobRequest]
        pdu.appendATTLE16(handle)
        pdu.appendATTLE16(offset)
        return pdu
    }

    /// ATT_HANDLE_VALUE_CFM: what a client owes a server for each indication.
    public static let handleValueConfirmation: [UInt8] = [ATTOpcode.handleValueConfirmation]

    private static func ranged(_ opcode: UInt8, _ start: UInt16, _ end: UInt16, _ type: GATTUUID) -> [UInt8] {
        var pdu: [UInt8] = [opcode]
        pdu.appendATTLE16(start)
        pdu.appendATTLE16(end)
        pdu.append(contentsOf: type.wire)
        return pdu
    }
}

/// A response that does not say what its opcode promises.
public struct ATTMalformed: Error, Equatable, Sendable, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// ATT_ERROR_RSP's three fields.
public struct ATTErrorResponse: Equatable, Sendable, CustomStringConvertible {
    public let request: UInt8
    public let handle: UInt16
    public let code: UInt8

    /// "Attribute Not Found (0x0a) to Read By Type Request, handle 0x0007".
    public var description: String {
        "\(attErrorName(code)) (0x\(hexString(CollectionOfOne(code)))) to \(attOpcodeName(request)), handle 0x"
            + hexString([UInt8(handle >> 8), UInt8(handle & 0xff)])
    }
}

/// One characteristic declaration's value (Part G 3.3.1): properties, value handle, UUID.
public struct CharacteristicDeclaration: Equatable, Sendable {
    public let handle: UInt16
    public let properties: UInt8
    public let valueHandle: UInt16
    public let uuid: GATTUUID
}

/// Response decoders. Each takes a whole PDU, opcode first.
public enum ATTResponse {
    /// ATT_ERROR_RSP: exactly 5 octets.
    public static func error(_ p: ArraySlice<UInt8>) -> Result<ATTErrorResponse, ATTMalformed> {
        guard p.first == ATTOpcode.errorResponse else { return .failure(opcodeMismatch(p, ATTOpcode.errorResponse)) }
        guard p.count == 5 else { return .failure(ATTMalformed("Error Response of \(p.count) octets, not 5")) }
        return .success(ATTErrorResponse(request: p[p.startIndex + 1], handle: p.attLE16(at: 2), code: p[p.startIndex + 4]))
    }

    /// ATT_EXCHANGE_MTU_RSP: exactly 3 octets, the Server Rx MTU.
    public static func exchangeMTU(_ p: ArraySlice<UInt8>) -> Result<Int, ATTMalformed> {
        guard p.first == ATTOpcode.exchangeMTUResponse else { return .failure(opcodeMismatch(p, ATTOpcode.exchangeMTUResponse)) }
        guard p.count == 3 else { return .failure(ATTMalformed("Exchange MTU Response of \(p.count) octets, not 3")) }
        return .success(Int(p.attLE16(at: 1)))
    }

    /// ATT_FIND_BY_TYPE_VALUE_RSP: one or more (found handle, group end) pairs, each with
    /// 1 <= found <= end.
    public static func findByTypeValue(_ p: ArraySlice<UInt8>) -> Result<[ClosedRange<UInt16>], ATTMalformed> {
        guard p.first == ATTOpcode.findByTypeValueResponse else { return .failure(opcodeMismatch(p, ATTOpcode.findByTypeValueResponse)) }
        guard p.count >= 5, (p.count - 1) % 4 == 0 else {
            return .failure(ATTMalformed("Find By Type Value Response of \(p.count) octets: not 1 + 4n, n >= 1"))
        }
        var out: [ClosedRange<UInt16>] = []
        for at in stride(from: 1, to: p.count, by: 4) {
            let found = p.attLE16(at: at), end = p.attLE16(at: at + 2)
            guard found >= 1, found <= end else { return .failure(ATTMalformed("Find By Type Value Response with handles \(found)-\(end)")) }
            out.append(found...end)
        }
        return .success(out)
    }

    /// ATT_READ_BY_GROUP_TYPE_RSP: Length (4 + value), then whole (handle, group end, value)
    /// entries, at least one, each with 1 <= handle <= end.
    public static func readByGroupType(_ p: ArraySlice<UInt8>) -> Result<[(range: ClosedRange<UInt16>, value: ArraySlice<UInt8>)], ATTMalformed> {
        switch entries(p, opcode: ATTOpcode.readByGroupTypeResponse, header: 4, name: "Read By Group Type Response") {
        case .failure(let e): return .failure(e)
        case .success(let list):
            var out: [(range: ClosedRange<UInt16>, value: ArraySlice<UInt8>)] = []
            for e in list {
                let handle = e.attLE16(at: 0), end = e.attLE16(at: 2)
                guard handle >= 1, handle <= end else { return .failure(ATTMalformed("Read By Group Type Response with handles \(handle)-\(end)")) }
                out.append((handle...end, e.dropFirst(4)))
            }
            return .success(out)
        }
    }

    /// ATT_READ_BY_TYPE_RSP: Length (2 + value), then whole (handle, value) entries, at least one.
    public static func readByType(_ p: ArraySlice<UInt8>) -> Result<[(handle: UInt16, value: ArraySlice<UInt8>)], ATTMalformed> {
        entries(p, opcode: ATTOpcode.readByTypeResponse, header: 2, name: "Read By Type Response")
            .map { $0.map { (handle: $0.attLE16(at: 0), value: $0.dropFirst(2)) } }
    }

    /// A «Characteristic» declaration's value: properties (1), value handle (2), UUID (2 or 16).
    public static func characteristic(handle: UInt16, _ v: ArraySlice<UInt8>) -> Result<CharacteristicDeclaration, ATTMalformed> {
        guard v.count == 5 || v.count == 19, let uuid = GATTUUID(wire: v.dropFirst(3)) else {
            return .failure(ATTMalformed("characteristic declaration of \(v.count) octets, not 5 or 19"))
        }
        return .success(CharacteristicDeclaration(handle: handle, properties: v[v.startIndex], valueHandle: v.attLE16(at: 1), uuid: uuid))
    }

    /// ATT_READ_RSP or ATT_READ_BLOB_RSP (`opcode`): the value octets after the opcode (any
    /// number, none included).
    public static func value(_ p: ArraySlice<UInt8>, opcode: UInt8) -> Result<ArraySlice<UInt8>, ATTMalformed> {
        guard p.first == opcode else { return .failure(opcodeMismatch(p, opcode)) }
        return .success(p.dropFirst())
    }

    /// Length, then entries of exactly Length octets (`header` of them handles) filling the rest.
    private static func entries(_ p: ArraySlice<UInt8>, opcode: UInt8, header: Int, name: String) -> Result<[ArraySlice<UInt8>], ATTMalformed> {
        guard p.first == opcode else { return .failure(opcodeMismatch(p, opcode)) }
        guard p.count >= 2 else { return .failure(ATTMalformed("\(name) of \(p.count) octets, without a Length")) }
        let length = Int(p[p.startIndex + 1])
        let body = p.count - 2
        guard length >= header, body >= length, body % length == 0 else {
            return .failure(ATTMalformed("\(name) with Length \(length) and \(body) octets of entries"))
        }
        return .success(stride(from: 2, to: p.count, by: length).map {
            p[(p.startIndex + $0)..<(p.startIndex + $0 + length)]
        })
    }

    private static func opcodeMismatch(_ p: ArraySlice<UInt8>, _ wanted: UInt8) -> ATTMalformed {
        guard let got = p.first else { return ATTMalformed("an empty PDU where \(attOpcodeName(wanted)) was due") }
        return ATTMalformed("\(attOpcodeName(got)) where \(attOpcodeName(wanted)) was due")
    }
}

/// The name Part F 3.4.1.1 gives an error code, for one-line failure reasons.
public func attErrorName(_ code: UInt8) -> String {
    switch code {
    case 0x01: "Invalid Handle"
    case 0x02: "Read Not Permitted"
    case 0x03: "Write Not Permitted"
    case 0x04: "Invalid PDU"
    case 0x05: "Insufficient Authentication"
    case 0x06: "Request Not Supported"
    case 0x07: "Invalid Offset"
    case 0x08: "Insufficient Authorization"
    case 0x09: "Prepare Queue Full"
    case 0x0A: "Attribute Not Found"
    case 0x0B: "Attribute Not Long"
    case 0x0C: "Encryption Key Size Too Short"
    case 0x0D: "Invalid Attribute Value Length"
    case 0x0E: "Unlikely Error"
    case 0x0F: "Insufficient Encryption"
    case 0x10: "Unsupported Group Type"
    case 0x11: "Insufficient Resources"
    case 0x12: "Database Out Of Sync"
    case 0x13: "Value Not Allowed"
    case 0x80...0x9F: "Application Error"
    case 0xFC: "Write Request Rejected"
    case 0xFD: "Client Characteristic Configuration Descriptor Improperly Configured"
    case 0xFE: "Procedure Already in Progress"
    case 0xFF: "Out of Range"
    case 0xE0...0xFB: "Common Profile and Service Error"
    default: "Reserved error"
    }
}

/// The name of an ATT PDU's opcode ("Read By Type Request"), or its hex for an unknown one.
public func attOpcodeName(_ opcode: UInt8) -> String {
    attOpcodeNames[opcode] ?? "opcode 0x" + hexString(CollectionOfOne(opcode))
}

private let attOpcodeNames: [UInt8: String] = [
    ATTOpcode.errorResponse: "Error Response",
    ATTOpcode.exchangeMTURequest: "Exchange MTU Request", ATTOpcode.exchangeMTUResponse: "Exchange MTU Response",
    ATTOpcode.findInformationRequest: "Find Information Request", ATTOpcode.findInformationResponse: "Find Information Response",
    ATTOpcode.findByTypeValueRequest: "Find By Type Value Request", ATTOpcode.findByTypeValueResponse: "Find By Type Value Response",
    ATTOpcode.readByTypeRequest: "Read By Type Request", ATTOpcode.readByTypeResponse: "Read By Type Response",
    ATTOpcode.readRequest: "Read Request", ATTOpcode.readResponse: "Read Response",
    ATTOpcode.readBlobRequest: "Read Blob Request", ATTOpcode.readBlobResponse: "Read Blob Response",
    ATTOpcode.readByGroupTypeRequest: "Read By Group Type Request", ATTOpcode.readByGroupTypeResponse: "Read By Group Type Response",
    ATTOpcode.handleValueNotification: "Handle Value Notification", ATTOpcode.handleValueIndication: "Handle Value Indication",
]
