/// A packet from the kernel's HCI monitor channel (what btmon reads): every command, event and
/// index change of every controller, whoever caused it.
public struct MonitorPacket: Equatable, Sendable {
    public enum Kind: UInt16, Sendable {
        case newIndex = 0, deleteIndex = 1, command = 2, event = 3
        case aclTx = 4, aclRx = 5, scoTx = 6, scoRx = 7
        case openIndex = 8, closeIndex = 9, indexInfo = 10, vendorDiagnostic = 11
        case systemNote = 12, userLogging = 13
        case controlOpen = 14, controlClose = 15, controlCommand = 16, controlEvent = 17
    }
    public var opcode: UInt16
    /// HCI_DEV_NONE (0xffff) for packets not about one controller.
    public var index: UInt16
    public var payload: [UInt8]
    public var kind: Kind? { Kind(rawValue: opcode) }

    public static let headerLength = 6

    /// struct hci_mon_hdr { le16 opcode; le16 index; le16 len; } then len bytes.
    public static func decode(_ bytes: ArraySlice<UInt8>) -> Result<MonitorPacket, HCIDecodeError> {
        var r = ByteReader(bytes)
        guard let op = r.u16(), let idx = r.u16(), let len = r.u16() else {
            return .failure(.truncated(needed: headerLength, had: bytes.count))
        }
        guard r.remaining == Int(len) else { return .failure(.lengthMismatch(declared: Int(len), actual: r.remaining)) }
        return .success(MonitorPacket(opcode: op, index: idx, payload: r.rest()))
    }

    /// For `command` packets: the opcode and parameters (the payload has no H4 type byte).
    public var command: (opcode: HCIOpcode, parameters: [UInt8])? {
        guard kind == .command else { return nil }
        var r = ByteReader(payload[...])
        guard let op = r.u16(), let plen = r.u8(), let params = r.bytes(Int(plen)) else { return nil }
        return (HCIOpcode(rawValue: op), params)
    }

    /// For `event` packets: the event decoded as from an HCI socket.
    public var event: HCIEvent? {
        guard kind == .event else { return nil }
        return try? HCIEvent.decode([0x04] + payload).get()
    }
}
