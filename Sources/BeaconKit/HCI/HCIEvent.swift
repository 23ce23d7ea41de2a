/// Why an incoming HCI packet could not be read. Decoders return these; they never trap.
public enum HCIDecodeError: Error, Equatable, Sendable {
    case truncated(needed: Int, had: Int)
    case lengthMismatch(declared: Int, actual: Int)
    case notAnEvent(packetType: UInt8)
}

/// One advertising report heard by a scanner (legacy or extended).
public struct AdvertisingReport: Equatable, Sendable {
    public var eventType: UInt16
    public var addressType: UInt8
    /// Address bytes in over-the-air order (least significant first), as HCI carries them.
    public var address: [UInt8]
    public var rssi: Int8
    public var data: [UInt8]
    public init(eventType: UInt16, addressType: UInt8, address: [UInt8], rssi: Int8, data: [UInt8]) {
        self.eventType = eventType; self.addressType = addressType; self.address = address
        self.rssi = rssi; self.data = data
    }
    /// `AA:BB:CC:DD:EE:FF`, most significant first.
    public var addressString: String { bluetoothAddressText(address) }
}

/// `AA:BB:CC:DD:EE:FF`, most significant first, from address bytes in over-the-air order (least
/// significant first, as HCI, mgmt and the kernel's bdaddr_t carry them).
public func bluetoothAddressText(_ bytes: [UInt8]) -> String {
    var s = ""
    s.reserveCapacity(17)
    for (i, b) in bytes.reversed().enumerated() {
        if i > 0 { s.append(":") }
        s.append(upperHexDigits[Int(b >> 4)])
        s.append(upperHexDigits[Int(b & 0xf)])
    }
    return s
}

private let upperHexDigits: [Character] = Array("0123456789ABCDEF")

/// The HCI events altbeacond reads.
public enum HCIEvent: Equatable, Sendable {
    case commandComplete(opcode: HCIOpcode, returnParameters: [UInt8])
    case commandStatus(opcode: HCIOpcode, status: HCIStatus)
    case hardwareError(code: UInt8)
    /// HCI_EV_STACK_INTERNAL from the kernel: a device was registered (1), unregistered (2), went up (3) or down (4).
    case deviceEvent(kind: UInt16, index: UInt16)
    case advertisingReports([AdvertisingReport])
    /// LE (Enhanced) Connection Complete: `peripheral` when a central connected to our advertising.
    /// `peerRandom`: the peer's address is a random one (address type 1 or 3).
    case leConnectionComplete(status: HCIStatus, handle: UInt16, peripheral: Bool, peer: [UInt8], peerRandom: Bool)
    /// Disconnection Complete.
    case disconnectionComplete(status: HCIStatus, handle: UInt16, reason: UInt8)
    case other(code: UInt8)

    public static let stackInternal: UInt8 = 0xfd

    /// Decodes an H4 event packet (type byte 0x04 first), checking every length before reading.
    public static func decode(_ packet: ArraySlice<UInt8>) -> Result<HCIEvent, HCIDecodeError> {
        var r = ByteReader(packet)
        guard let type = r.u8() else { return .failure(.truncated(needed: 1, had: 0)) }
        guard type == 0x04 else { return .failure(.notAnEvent(packetType: type)) }
        guard let code = r.u8(), let plen = r.u8() else { return .failure(.truncated(needed: 3, had: packet.count)) }
        guard r.remaining == Int(plen) else { return .failure(.lengthMismatch(declared: Int(plen), actual: r.remaining)) }
        return decodeParameters(code: code, &r)
    }

    private static func decodeParameters(code: UInt8, _ r: inout ByteReader) -> Result<HCIEvent, HCIDecodeError> {
        let had = r.remaining
        switch code {
        case 0x0e:
            guard let _ = r.u8(), let op = r.u16() else { return .failure(.truncated(needed: 3, had: had)) }
            return .success(.commandComplete(opcode: HCIOpcode(rawValue: op), returnParameters: r.rest()))
        case 0x0f:
            guard let st = r.u8(), let _ = r.u8(), let op = r.u16() else { return .failure(.truncated(needed: 4, had: had)) }
            guard r.remaining == 0 else { return .failure(.lengthMismatch(declared: 4, actual: had)) }
            return .success(.commandStatus(opcode: HCIOpcode(rawValue: op), status: HCIStatus(rawValue: st)))
        case 0x10:
            guard let c = r.u8() else { return .failure(.truncated(needed: 1, had: had)) }
            return .success(.hardwareError(code: c))
        case 0x05:
            guard let st = r.u8(), let h = r.u16(), let reason = r.u8() else { return .failure(.truncated(needed: 4, had: had)) }
            return .success(.disconnectionComplete(status: HCIStatus(rawValue: st), handle: h & 0x0fff, reason: reason))
        case stackInternal:
            // struct evt_stack_internal { u16 type; ... } with type EVT_SI_DEVICE (0x0001):
            // struct evt_si_device { u16 event; u16 dev_id; }.
            guard let siType = r.u16() else { return .failure(.truncated(needed: 2, had: had)) }
            guard siType == 0x0001 else { return .success(.other(code: code)) }
            guard let ev = r.u16(), let dev = r.u16() else { return .failure(.truncated(needed: 6, had: had)) }
            return .success(.deviceEvent(kind: ev, index: dev))
        case 0x3e:
            guard let sub = r.u8() else { return .failure(.truncated(needed: 1, had: had)) }
            switch sub {
            case 0x02: return decodeLegacyReports(&r).map { .advertisingReports($0) }
            case 0x0d: return decodeExtendedReports(&r).map { .advertisingReports($0) }
            case 0x01, 0x0a:
                // Status, handle, role (1: peripheral), peer address type, peer address; the rest
                // (resolvable addresses, connection parameters) is not needed.
                guard let st = r.u8(), let h = r.u16(), let role = r.u8(), let type = r.u8(), let peer = r.bytes(6) else {
                    return .failure(.truncated(needed: 12, had: had))
                }
                return .success(.leConnectionComplete(status: HCIStatus(rawValue: st), handle: h & 0x0fff, peripheral: role == 1,
                                                      peer: peer, peerRandom: type & 1 == 1))
            default: return .success(.other(code: code))
            }
        default:
            return .success(.other(code: code))
        }
    }

    /// LE Advertising Report (subevent 0x02): per report event type, address type, address,
    /// data length, data, RSSI.
    private static func decodeLegacyReports(_ r: inout ByteReader) -> Result<[AdvertisingReport], HCIDecodeError> {
        guard let n = r.u8() else { return .failure(.truncated(needed: 1, had: 0)) }
        var out: [AdvertisingReport] = []
        for _ in 0..<n {
            guard let et = r.u8(), let at = r.u8(), let addr = r.bytes(6), let len = r.u8(),
                  let data = r.bytes(Int(len)), let rssi = r.u8()
            else { return .failure(.truncated(needed: 10, had: r.remaining)) }
            out.append(AdvertisingReport(eventType: UInt16(et), addressType: at, address: addr,
                                         rssi: Int8(bitPattern: rssi), data: data))
        }
        return .success(out)
    }

    /// LE Extended Advertising Report (subevent 0x0d): 24 fixed bytes per report, then data.
    private static func decodeExtendedReports(_ r: inout ByteReader) -> Result<[AdvertisingReport], HCIDecodeError> {
        guard let n = r.u8() else { return .failure(.truncated(needed: 1, had: 0)) }
        var out: [AdvertisingReport] = []
        for _ in 0..<n {
            guard let et = r.u16(), let at = r.u8(), let addr = r.bytes(6),
                  let _ = r.bytes(3),            // primary PHY, secondary PHY, SID
                  let _ = r.u8(),                // TX power
                  let rssi = r.u8(),
                  let _ = r.bytes(2),            // periodic advertising interval
                  let _ = r.bytes(7),            // direct address type and address
                  let len = r.u8(), let data = r.bytes(Int(len))
            else { return .failure(.truncated(needed: 24, had: r.remaining)) }
            out.append(AdvertisingReport(eventType: et, addressType: at, address: addr,
                                         rssi: Int8(bitPattern: rssi), data: data))
        }
        return .success(out)
    }
}

extension HCIEvent {
    /// The status byte of a Command Complete's return parameters, or of a Command Status.
    public var status: HCIStatus? {
        switch self {
        case .commandComplete(_, let rp): return rp.first.map { HCIStatus(rawValue: $0) }
        case .commandStatus(_, let s): return s
        default: return nil
        }
    }
}

/// A bounds-checked little-endian reader: every read returns nil instead of running off the end.
public struct ByteReader {
    private let bytes: ArraySlice<UInt8>
    private var index: Int
    public init(_ bytes: ArraySlice<UInt8>) { self.bytes = bytes; index = bytes.startIndex }
    public var remaining: Int { bytes.endIndex - index }
    public mutating func u8() -> UInt8? {
        guard index < bytes.endIndex else { return nil }
        defer { index += 1 }
        return bytes[index]
    }
    public mutating func u16() -> UInt16? {
        guard remaining >= 2 else { return nil }
        defer { index += 2 }
        return UInt16(bytes[index]) | UInt16(bytes[index + 1]) << 8
    }
    public mutating func bytes(_ n: Int) -> [UInt8]? {
        guard n >= 0, remaining >= n else { return nil }
        defer { index += n }
        return Array(bytes[index..<(index + n)])
    }
    public mutating func rest() -> [UInt8] {
        defer { index = bytes.endIndex }
        return Array(bytes[index...])
    }
}
