/// What another process's command to our controller did to the beacon.
public enum Interference: String, Equatable, Sendable {
    case reset = "reset"
    case advertisingDisabled = "advertising disabled"
    case advertisingOverwritten = "advertising data overwritten"
    case parametersChanged = "advertising parameters changed"
}

/// Classifies a command seen on the HCI monitor that altbeacond did not send.
/// `ourData` is the advertising payload on air; `ourHandle` our set in extended mode.
public func classifyForeignCommand(_ op: HCIOpcode, _ params: [UInt8], ourData: [UInt8], ourHandle: UInt8?) -> Interference? {
    switch op {
    case .reset:
        return .reset
    case .leSetAdvertiseEnable:
        return params.first == 0 ? .advertisingDisabled : nil
    case .leSetAdvertisingData:
        guard let len = params.first, params.count >= 1 + Int(len) else { return .advertisingOverwritten }
        return Array(params[1..<(1 + Int(len))]) == ourData ? nil : .advertisingOverwritten
    case .leSetAdvertisingParameters:
        return .parametersChanged
    case .leSetExtendedAdvertisingEnable:
        // enable, number of sets, then 4 bytes a set; disabling with no sets disables all.
        guard params.count >= 2, params[0] == 0 else { return nil }
        if params[1] == 0 { return .advertisingDisabled }
        var i = 2
        while i < params.count {
            if ourHandle == nil || params[i] == ourHandle { return .advertisingDisabled }
            i += 4
        }
        return nil
    case .leSetExtendedAdvertisingData:
        guard params.count >= 4, ourHandle == nil || params[0] == ourHandle else { return nil }
        return Array(params.dropFirst(4)) == ourData ? nil : .advertisingOverwritten
    case .leSetExtendedAdvertisingParameters:
        guard let h = params.first, ourHandle == nil || h == ourHandle else { return nil }
        return .parametersChanged
    case .leRemoveAdvertisingSet:
        guard let h = params.first, ourHandle == nil || h == ourHandle else { return nil }
        return .advertisingDisabled
    case .leClearAdvertisingSets:
        return .advertisingDisabled
    default:
        return nil
    }
}

/// Remembers the commands we sent so the monitor's copy of them is not taken for interference.
public struct SentCommandLog: Sendable {
    private var entries: [(at: Int64, opcode: HCIOpcode, parameters: [UInt8])] = []
    public static let horizonMs: Int64 = 5000
    public static let capacity = 64
    public init() {}

    public mutating func recordSent(_ op: HCIOpcode, _ params: [UInt8], at now: Int64) {
        entries.removeAll { now - $0.at > Self.horizonMs }
        if entries.count >= Self.capacity { entries.removeFirst() }
        entries.append((now, op, params))
    }

    /// True (and forgotten) when the monitored command is one of ours.
    public mutating func consume(_ op: HCIOpcode, _ params: [UInt8], at now: Int64) -> Bool {
        entries.removeAll { now - $0.at > Self.horizonMs }
        guard let i = entries.firstIndex(where: { $0.opcode == op && $0.parameters == params }) else { return false }
        entries.remove(at: i)
        return true
    }

    public var count: Int { entries.count }
}
