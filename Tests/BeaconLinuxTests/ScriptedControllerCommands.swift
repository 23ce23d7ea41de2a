import BeaconKit
import Glibc
@testable import BeaconLinux

/// The scripted controller's command model: each command packet decoded, executed against the
/// advertising state (legacy, and extended sets by handle) or answered as the script says.
extension ScriptedHCIController {
    func receive(_ packet: [UInt8], by t: ScriptedHCITransport) throws(Errno) {
        guard isPresent else { throw .noDevice }
        guard isUp else { throw .networkDown }
        guard packet.count >= 4, packet[0] == 0x01, packet.count == 4 + Int(packet[3]) else { throw Errno(EINVAL) }
        let op = HCIOpcode(rawValue: UInt16(packet[1]) | UInt16(packet[2]) << 8)
        let params = Array(packet[4...])
        log.append(op)
        written.append((op, params, loop.now))
        if let m = monitor { loop.post { m(op, params) } }
        if silent { return }
        var a: ScriptedAnswer = .status(.success)
        if var q = once[op], !q.isEmpty {
            a = q.removeFirst()
            once[op] = q
        } else if let s = always[op] {
            a = s
        }
        switch a {
        case .silence: return
        case .commandStatus(let st): reply(t, [0x04, 0x0f, 4, st.rawValue, 1, packet[1], packet[2]])
        case .status, .returnParameters:
            var rp: [UInt8]
            switch a {
            case .returnParameters(let bytes): rp = bytes
            case .status(let st) where st != .success: rp = [st.rawValue]
            default: rp = execute(op, params)
            }
            var event: [UInt8] = [0x04, 0x0e, UInt8(3 + rp.count), 1, packet[1], packet[2]]
            event += rp
            reply(t, event)
        }
    }

    func reply(_ t: ScriptedHCITransport, _ packet: [UInt8]) {
        if answerDelayMs == 0 {
            loop.post { t.deliver(packet) }
        } else {
            after(answerDelayMs) { t.deliver(packet) }
        }
    }

    private func refuse(_ st: HCIStatus) -> [UInt8] { [st.rawValue] }

    /// The kind rule: nil when allowed (and noted), else the refusal.
    private func use(_ k: Kind) -> [UInt8]? {
        if enforcesCommandKinds, let u = usedKind, u != k { return refuse(.commandDisallowed) }
        usedKind = k
        return nil
    }

    /// Return parameters (status first) of a command the controller executes.
    func execute(_ op: HCIOpcode, _ p: [UInt8]) -> [UInt8] {
        defer { noteAir() }
        switch op {
        case .reset:
            forget()
            return [0]
        case .readLocalVersion:
            return [0, hciVersion, 0x00, 0x01, hciVersion, 0x0f, 0x00, 0x34, 0x12]
        case .leReadLocalFeatures:
            var f: [UInt8] = [0x01, 0, 0, 0, 0, 0, 0, 0]
            if extended { f[1] |= 0x10 }
            return [0] + f
        case .leSetRandomAddress:
            // Core v5.3 Vol 4 Part E §7.8.4: refused while legacy advertising, scanning or
            // initiating is enabled.
            guard p.count == 6 else { return refuse(.invalidParameters) }
            if legacyEnabled || scanning { return refuse(.commandDisallowed) }
            legacyRandomAddress = p
            return [0]
        case .leSetAdvertisingParameters, .leSetAdvertisingData, .leSetAdvertiseEnable, .leSetScanResponseData:
            return executeLegacy(op, p)
        case .leReadNumberOfSupportedAdvertisingSets, .leSetExtendedAdvertisingParameters, .leSetExtendedAdvertisingData,
             .leSetExtendedScanResponseData, .leSetAdvertisingSetRandomAddress,
             .leSetExtendedAdvertisingEnable, .leRemoveAdvertisingSet, .leClearAdvertisingSets:
            guard extended else { return refuse(.unknownCommand) }
            if let r = use(.extended) { return r }
            return executeExtended(op, p)
        default:
            return refuse(.unknownCommand)
        }
    }

    private func executeLegacy(_ op: HCIOpcode, _ p: [UInt8]) -> [UInt8] {
        if let r = use(.legacy) { return r }
        switch op {
        case .leSetAdvertisingParameters:
            guard p.count == 15 else { return refuse(.invalidParameters) }
            if legacyEnabled { return refuse(.commandDisallowed) }
            let units = UInt16(p[0]) | UInt16(p[1]) << 8
            if refusesShortIntervals && units < 160 { return refuse(.invalidParameters) }
            legacyIntervalUnits = units
            legacyConnectable = p[4] == 0x00
            legacyOwnRandom = p[5] == 0x01
        case .leSetScanResponseData:
            guard p.count == 32, Int(p[0]) <= 31 else { return refuse(.invalidParameters) }
            legacyScanResponse = Array(p[1..<(1 + Int(p[0]))])
        case .leSetAdvertisingData:
            guard p.count == 32, Int(p[0]) <= 31 else { return refuse(.invalidParameters) }
            legacyData = Array(p[1..<(1 + Int(p[0]))])
        default:
            guard p.count == 1 else { return refuse(.invalidParameters) }
            let on = p[0] == 1
            if refusesRedundantEnable && on == legacyEnabled { return refuse(.commandDisallowed) }
            if refusesEnableWhileConnected && on && !links.isEmpty { return refuse(.commandDisallowed) }
            // §7.8.9: own address type random with no random address set
            if on && legacyOwnRandom && legacyRandomAddress == nil { return refuse(.invalidParameters) }
            legacyEnabled = on
        }
        return [0]
    }

    private func executeExtended(_ op: HCIOpcode, _ p: [UInt8]) -> [UInt8] {
        switch op {
        case .leReadNumberOfSupportedAdvertisingSets:
            return [0, supportedSets]
        case .leSetExtendedAdvertisingParameters:
            guard p.count == 25 else { return refuse(.invalidParameters) }
            let h = p[0]
            if sets[h]?.enabled == true { return refuse(.commandDisallowed) }
            if sets[h] == nil && sets.count >= Int(supportedSets) { return refuse(HCIStatus(rawValue: 0x43)) }
            var units = UInt32(p[5]) << 16
            units |= UInt32(p[4]) << 8
            units |= UInt32(p[3])
            if refusesShortIntervals && units < 160 { return refuse(.invalidParameters) }
            sets[h, default: AdvertisingSet()].intervalUnits = units
            sets[h]!.connectable = p[1] & 0x01 != 0
            sets[h]!.ownRandom = p[10] == 0x01
            return [0, p[20]]
        case .leSetAdvertisingSetRandomAddress:
            guard p.count == 7 else { return refuse(.invalidParameters) }
            guard sets[p[0]] != nil else { return refuse(.unknownAdvertisingIdentifier) }
            sets[p[0]]!.randomAddress = Array(p[1...])
        case .leSetExtendedScanResponseData:
            guard p.count >= 4, p.count == 4 + Int(p[3]) else { return refuse(.invalidParameters) }
            guard sets[p[0]] != nil else { return refuse(.unknownAdvertisingIdentifier) }
            sets[p[0]]!.scanResponse = Array(p[4...])
        case .leSetExtendedAdvertisingData:
            guard p.count >= 4, p.count == 4 + Int(p[3]) else { return refuse(.invalidParameters) }
            guard sets[p[0]] != nil else { return refuse(.unknownAdvertisingIdentifier) }
            sets[p[0]]!.data = Array(p[4...])
        case .leSetExtendedAdvertisingEnable:
            guard p.count >= 2, p.count == 2 + 4 * Int(p[1]) else { return refuse(.invalidParameters) }
            let on = p[0] == 1
            if p[1] == 0 {
                if on { return refuse(.invalidParameters) }
                for h in sets.keys { sets[h]!.enabled = false }
                return [0]
            }
            let handles = stride(from: 2, to: p.count, by: 4).map { p[$0] }
            if refusesEnableWhileConnected && on && !links.isEmpty { return refuse(.commandDisallowed) }
            for h in handles {
                guard let s = sets[h] else { return refuse(.unknownAdvertisingIdentifier) }
                if refusesRedundantEnable && s.enabled == on { return refuse(.commandDisallowed) }
                // §7.8.56: own address type random with no random address set
                if on && s.ownRandom && s.randomAddress == nil { return refuse(.invalidParameters) }
            }
            for h in handles { sets[h]!.enabled = on }
        case .leRemoveAdvertisingSet:
            guard p.count == 1 else { return refuse(.invalidParameters) }
            guard let s = sets[p[0]] else { return refuse(.unknownAdvertisingIdentifier) }
            if s.enabled { return refuse(.commandDisallowed) }
            sets[p[0]] = nil
        default:   // LE Clear Advertising Sets
            if strictClear && sets.values.contains(where: \.enabled) { return refuse(.commandDisallowed) }
            sets = [:]
        }
        return [0]
    }




}

/// One raw HCI socket to a `ScriptedHCIController`: answers arrive on later loop turns, never inside `write`.
final class ScriptedHCITransport: HCITransport {
    private unowned let controller: ScriptedHCIController
    private var onPacket: ((ArraySlice<UInt8>) -> Void)?
    private var onLost: ((Errno) -> Void)?
    private(set) var isClosed = false

    init(controller: ScriptedHCIController) { self.controller = controller }

    func write(_ packet: [UInt8]) throws(Errno) {
        guard !isClosed else { throw Errno(EBADF) }
        try controller.receive(packet, by: self)
    }

    func start(onPacket: @escaping (ArraySlice<UInt8>) -> Void, onLost: @escaping (Errno) -> Void) {
        self.onPacket = onPacket
        self.onLost = onLost
    }

    func close() {
        isClosed = true
        onPacket = nil
        onLost = nil
    }

    /// An event packet read off the socket.
    func deliver(_ packet: [UInt8]) {
        guard !isClosed else { return }
        onPacket?(packet[...])
    }

    /// The socket broke under us (POLLHUP / ENODEV).
    func lose(_ e: Errno) {
        guard !isClosed, let l = onLost else { return }
        onLost = nil
        onPacket = nil
        l(e)
    }
}
