/// What a controller advertises, as the Core spec's LE advertising commands change it (v5.3 Vol 4
/// Part E §7.8): legacy advertising, the LE random address, and extended sets by handle. The
/// advertiser keeps one as what it put on the controller (each accepted command applied); the
/// tests' scripted controller is one, answering with the spec's refusals and its own quirks.
public struct AdvertisingState: Equatable, Sendable {
    /// Legacy advertising, or one extended set.
    public struct Slot: Equatable, Sendable {
        public var enabled = false
        public var data: [UInt8] = []
        public var scanResponse: [UInt8] = []
        /// The interval in 0.625 ms units.
        public var intervalUnits: UInt32 = 0
        public var connectable = false
        /// Its PDU answers scan requests (ADV_SCAN_IND or ADV_IND): a scan response goes out.
        public var scannable = false
        /// A set's properties ask for legacy PDUs (legacy advertising's always are).
        public var legacyPDU = true
        /// Own address type random in its parameters.
        public var ownRandom = false
        /// A set's random address (legacy advertising sends from `randomAddress`).
        public var randomAddress: [UInt8]?

        public init(enabled: Bool = false, data: [UInt8] = [], intervalUnits: UInt32 = 0) {
            self.enabled = enabled
            self.data = data
            self.intervalUnits = intervalUnits
        }
    }

    public var legacy = Slot()
    /// LE Set Random Address's address.
    public var randomAddress: [UInt8]?
    public var sets: [UInt8: Slot] = [:]

    public init() {}

    /// What a receiver hears: legacy advertising's payload (when enabled), then every enabled
    /// set's, highest handle first.
    public var onAir: [[UInt8]] {
        var out: [[UInt8]] = legacy.enabled ? [legacy.data] : []
        for h in sets.keys.sorted(by: >) where sets[h]!.enabled { out.append(sets[h]!.data) }
        return out
    }

    /// The slot a plan's slot is: set `handle`, or legacy advertising (nil).
    public func slot(_ handle: UInt8?) -> Slot? { handle.map { sets[$0] } ?? legacy }

    /// Connectable advertising is enabled (legacy or a set).
    public var connectableEnabled: Bool {
        (legacy.enabled && legacy.connectable) || sets.values.contains { $0.enabled && $0.connectable }
    }

    /// A central connected: the controller ends the connectable set (legacy: all advertising).
    public mutating func connectableEnded() {
        if legacy.connectable { legacy.enabled = false }
        for (h, s) in sets where s.connectable { sets[h]?.enabled = false }
    }

    /// A reset, a power cycle: nothing configured.
    public mutating func forget() { self = AdvertisingState() }

    /// The status the spec has the controller answer instead of executing command `op` with
    /// parameters `p` (nil: it executes). `supportedSets`: how many sets it has.
    public func refusal(_ op: HCIOpcode, _ p: [UInt8], supportedSets: Int) -> HCIStatus? {
        switch op {
        case .leSetRandomAddress:
            guard p.count == 6 else { return .invalidParameters }
            return legacy.enabled ? .commandDisallowed : nil   // §7.8.4 (scanning too: the caller's)
        case .leSetAdvertisingParameters:
            guard p.count == 15 else { return .invalidParameters }
            return legacy.enabled ? .commandDisallowed : nil
        case .leSetAdvertisingData, .leSetScanResponseData:
            return p.count == 32 && Int(p[0]) <= 31 ? nil : .invalidParameters
        case .leSetExtendedScanResponseData:
            guard p.count >= 4, p.count == 4 + Int(p[3]) else { return .invalidParameters }
            guard let s = sets[p[0]] else { return .unknownAdvertisingIdentifier }
            // §7.8.55: data for a set whose properties are not scannable (other than to discard
            // it), or more than a legacy PDU holds, is refused.
            if p[3] > 0 && !s.scannable { return .invalidParameters }
            return s.legacyPDU && p[3] > 31 ? .invalidParameters : nil
        case .leSetAdvertiseEnable:
            guard p.count == 1 else { return .invalidParameters }
            // §7.8.9: own address type random with no random address set
            return p[0] == 1 && legacy.ownRandom && randomAddress == nil ? .invalidParameters : nil
        case .leSetExtendedAdvertisingParameters:
            guard p.count == 25 else { return .invalidParameters }
            if sets[p[0]]?.enabled == true { return .commandDisallowed }
            return sets[p[0]] == nil && sets.count >= supportedSets ? HCIStatus(rawValue: 0x43) : nil
        case .leSetAdvertisingSetRandomAddress:
            guard p.count == 7 else { return .invalidParameters }
            return sets[p[0]] == nil ? .unknownAdvertisingIdentifier : nil
        case .leSetExtendedAdvertisingData:
            guard p.count >= 4, p.count == 4 + Int(p[3]) else { return .invalidParameters }
            return sets[p[0]] == nil ? .unknownAdvertisingIdentifier : nil
        case .leSetExtendedAdvertisingEnable:
            guard p.count >= 2, p.count == 2 + 4 * Int(p[1]) else { return .invalidParameters }
            if p[1] == 0 { return p[0] == 1 ? .invalidParameters : nil }
            for h in Self.handles(enabling: p) {
                guard let s = sets[h] else { return .unknownAdvertisingIdentifier }
                // §7.8.56: own address type random with no random address set
                if p[0] == 1 && s.ownRandom && s.randomAddress == nil { return .invalidParameters }
            }
            return nil
        case .leRemoveAdvertisingSet:
            guard p.count == 1 else { return .invalidParameters }
            guard let s = sets[p[0]] else { return .unknownAdvertisingIdentifier }
            return s.enabled ? .commandDisallowed : nil
        case .leClearAdvertisingSets:
            return sets.values.contains(where: \.enabled) ? .commandDisallowed : nil
        default:
            return nil
        }
    }

    /// Applies the effect of command `op` that the controller accepted (parameters as checked by `refusal`).
    public mutating func apply(_ op: HCIOpcode, _ p: [UInt8]) {
        switch op {
        case .reset:
            forget()
        case .leSetRandomAddress where p.count == 6:
            randomAddress = p
        case .leSetAdvertisingParameters where p.count == 15:
            legacy.intervalUnits = UInt32(p[0]) | UInt32(p[1]) << 8
            legacy.connectable = p[4] == 0x00
            legacy.scannable = p[4] == 0x00 || p[4] == 0x02
            legacy.ownRandom = p[5] == 0x01
        case .leSetAdvertisingData where p.count == 32:
            legacy.data = Array(p[1..<(1 + min(31, Int(p[0])))])
        case .leSetScanResponseData where p.count == 32:
            legacy.scanResponse = Array(p[1..<(1 + min(31, Int(p[0])))])
        case .leSetAdvertiseEnable where p.count == 1:
            legacy.enabled = p[0] == 1
        case .leSetExtendedAdvertisingParameters where p.count == 25:
            var s = sets[p[0]] ?? Slot()
            s.intervalUnits = UInt32(p[3]) | UInt32(p[4]) << 8 | UInt32(p[5]) << 16
            s.connectable = p[1] & 0x01 != 0
            s.scannable = p[1] & 0x02 != 0
            s.legacyPDU = p[1] & 0x10 != 0
            s.ownRandom = p[10] == 0x01
            sets[p[0]] = s
        case .leSetAdvertisingSetRandomAddress where p.count == 7:
            sets[p[0]]?.randomAddress = Array(p[1...])
        case .leSetExtendedAdvertisingData where p.count >= 4:
            sets[p[0]]?.data = Array(p[4...])
        case .leSetExtendedScanResponseData where p.count >= 4:
            sets[p[0]]?.scanResponse = Array(p[4...])
        case .leSetExtendedAdvertisingEnable where p.count >= 2:
            let on = p[0] == 1
            let handles = p[1] == 0 ? Array(sets.keys) : Self.handles(enabling: p)
            for h in handles { sets[h]?.enabled = on }
        case .leRemoveAdvertisingSet where p.count == 1:
            sets[p[0]] = nil
        case .leClearAdvertisingSets:
            sets = [:]
        default:
            break
        }
    }

    /// The handles an LE Set Extended Advertising Enable names (4 bytes each after the count).
    static func handles(enabling p: [UInt8]) -> [UInt8] { stride(from: 2, to: p.count, by: 4).map { p[$0] } }
}
