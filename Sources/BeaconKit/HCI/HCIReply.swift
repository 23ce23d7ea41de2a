/// A command's return parameters as a value, decoded once with its lengths checked. The bytes
/// start with the status, which the command path has already found to be success.
public protocol HCIReply: Sendable {
    init?(returnParameters rp: [UInt8])
}

/// `command`'s reply decoded as its own `Reply` type from what the controller returned: the one
/// place a reply too short to decode becomes a failure (`.shortReply`), for every procedure.
public func decodedReply(of command: any HCICommand, _ returned: Result<[UInt8], HCICommandFailure>)
    -> Result<any HCIReply, HCICommandFailure> {
    func typed<C: HCICommand>(_: C) -> Result<any HCIReply, HCICommandFailure> {
        returned.flatMap { rp in C.Reply(returnParameters: rp).map { .success($0) } ?? .failure(.shortReply(C.opcode)) }
    }
    return typed(command)
}

/// The reply of a command that returns nothing but its status.
public struct HCIStatusReply: HCIReply, Equatable {
    public init() {}
    public init?(returnParameters rp: [UInt8]) {}
}

/// Read Local Version Information (Core v5.3 Vol 4 Part E §7.4.1): status, HCI version,
/// HCI revision (2), LMP version, manufacturer (2), LMP subversion (2).
public struct LocalVersionReply: HCIReply, Equatable {
    public var hciVersion: UInt8
    public var manufacturer: UInt16
    public init(hciVersion: UInt8, manufacturer: UInt16) {
        self.hciVersion = hciVersion
        self.manufacturer = manufacturer
    }
    public init?(returnParameters rp: [UInt8]) {
        guard rp.count >= 9 else { return nil }
        self.init(hciVersion: rp[1], manufacturer: UInt16(rp[5]) | UInt16(rp[6]) << 8)
    }
}

/// LE Read Local Supported Features (§7.8.3): status, 8 feature bytes (little-endian).
public struct LEFeaturesReply: HCIReply, Equatable {
    public var bits: UInt64
    public init(bits: UInt64) { self.bits = bits }
    public init?(returnParameters rp: [UInt8]) {
        guard rp.count >= 9 else { return nil }
        var v: UInt64 = 0
        for i in 0..<8 { v |= UInt64(rp[1 + i]) << (8 * UInt64(i)) }
        self.init(bits: v)
    }
}

/// LE Read Number of Supported Advertising Sets (§7.8.58): status, count.
public struct AdvertisingSetCountReply: HCIReply, Equatable {
    public var count: UInt8
    public init?(returnParameters rp: [UInt8]) {
        guard rp.count >= 2 else { return nil }
        count = rp[1]
    }
}
