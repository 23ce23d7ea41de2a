/// What another process's command to our controller did to the beacon.
public enum Interference: String, Equatable, Sendable {
    case reset = "reset"
    case advertisingDisabled = "advertising disabled"
    case advertisingOverwritten = "advertising data overwritten"
    case parametersChanged = "advertising parameters changed"

    /// The cause the re-arm it calls for is counted under.
    var rearmCause: RearmCause {
        switch self {
        case .reset: .reset
        case .advertisingDisabled: .disabled
        case .advertisingOverwritten, .parametersChanged: .overwritten
        }
    }
}

/// What altbeacond has on air, for telling others' commands apart: the extended set handles
/// it uses (nil: legacy commands) and every payload of its frames.
public struct OnAirAdvertising: Equatable, Sendable {
    public var handles: [UInt8]?
    public var payloads: [[UInt8]]
    /// The scan responses of our scannable frames (the beacon's name, the GATT identity's); empty:
    /// none is scannable, so another program's scan response changes nothing on air.
    public var scanResponses: [[UInt8]]
    public init(handles: [UInt8]?, payloads: [[UInt8]], scanResponses: [[UInt8]] = []) {
        self.handles = handles; self.payloads = payloads; self.scanResponses = scanResponses
    }

    /// In legacy mode any set counts: a controller running both kinds may drop ours.
    func isOurs(handle: UInt8) -> Bool { handles?.contains(handle) ?? true }
    func isOurs(data: ArraySlice<UInt8>) -> Bool { payloads.contains { $0.elementsEqual(data) } }
    /// A scan response that leaves ours answering: ours, or any while none of ours is scannable.
    func isOurs(scanResponse: ArraySlice<UInt8>) -> Bool {
        scanResponses.isEmpty || scanResponses.contains { $0.elementsEqual(scanResponse) }
    }
}

/// Classifies a command seen on the HCI monitor that altbeacond did not send.
public func classifyForeignCommand(_ op: HCIOpcode, _ params: [UInt8], onAir: OnAirAdvertising) -> Interference? {
    switch op {
    case .reset:
        return .reset
    case .leSetAdvertiseEnable:
        return params.first == 0 ? .advertisingDisabled : nil
    case .leSetAdvertisingData:
        guard let len = params.first, params.count >= 1 + Int(len) else { return .advertisingOverwritten }
        return onAir.isOurs(data: params[1..<(1 + Int(len))]) ? nil : .advertisingOverwritten
    case .leSetScanResponseData:
        // The kernel sets its own local name there (bluetoothd's name at start): ours is lost.
        guard onAir.handles == nil, let len = params.first, params.count >= 1 + Int(len) else { return nil }
        return onAir.isOurs(scanResponse: params[1..<(1 + Int(len))]) ? nil : .advertisingOverwritten
    case .leSetExtendedScanResponseData:
        guard params.count >= 4, onAir.isOurs(handle: params[0]) else { return nil }
        return onAir.isOurs(scanResponse: params.dropFirst(4)) ? nil : .advertisingOverwritten
    case .leSetAdvertisingParameters:
        return .parametersChanged
    case .leSetExtendedAdvertisingEnable:
        // enable, number of sets, then 4 bytes a set; disabling with no sets disables all.
        guard params.count >= 2, params[0] == 0 else { return nil }
        if params[1] == 0 { return .advertisingDisabled }
        var i = 2
        while i < params.count {
            if onAir.isOurs(handle: params[i]) { return .advertisingDisabled }
            i += 4
        }
        return nil
    case .leSetExtendedAdvertisingData:
        guard params.count >= 4, onAir.isOurs(handle: params[0]) else { return nil }
        return onAir.isOurs(data: params.dropFirst(4)) ? nil : .advertisingOverwritten
    case .leSetExtendedAdvertisingParameters:
        guard let h = params.first, onAir.isOurs(handle: h) else { return nil }
        return .parametersChanged
    case .leRemoveAdvertisingSet:
        guard let h = params.first, onAir.isOurs(handle: h) else { return nil }
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
