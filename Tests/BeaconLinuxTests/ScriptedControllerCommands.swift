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

    /// Return parameters (status first) of a command the controller executes: the spec's
    /// refusals (`AdvertisingState.refusal`), this controller's quirks, then the model's effect.
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
            // Core v5.3 Vol 4 Part E §7.8.4: refused while scanning or initiating too.
            if p.count == 6 && scanning { return refuse(.commandDisallowed) }
        case .leSetAdvertisingParameters, .leSetAdvertisingData, .leSetAdvertiseEnable, .leSetScanResponseData:
            if let r = use(.legacy) { return r }
        case .leReadNumberOfSupportedAdvertisingSets, .leSetExtendedAdvertisingParameters, .leSetExtendedAdvertisingData,
             .leSetExtendedScanResponseData, .leSetAdvertisingSetRandomAddress,
             .leSetExtendedAdvertisingEnable, .leRemoveAdvertisingSet, .leClearAdvertisingSets:
            guard extended else { return refuse(.unknownCommand) }
            if let r = use(.extended) { return r }
            if op == .leReadNumberOfSupportedAdvertisingSets { return [0, supportedSets] }
        default:
            return refuse(.unknownCommand)
        }
        if let st = state.refusal(op, p, supportedSets: Int(supportedSets)), strictClear || op != .leClearAdvertisingSets {
            return refuse(st)
        }
        if let st = quirk(op, p) { return refuse(st) }
        state.apply(op, p)
        // LE Set Extended Advertising Parameters answers with the TX power it selected.
        return op == .leSetExtendedAdvertisingParameters ? [0, p[20]] : [0]
    }

    /// What this controller refuses beyond the spec (a 4.x controller's intervals, redundant
    /// enables, advertising beside a link).
    private func quirk(_ op: HCIOpcode, _ p: [UInt8]) -> HCIStatus? {
        switch op {
        case .leSetAdvertisingParameters:
            if refusesShortIntervals && (UInt16(p[0]) | UInt16(p[1]) << 8) < 160 { return .invalidParameters }
        case .leSetExtendedAdvertisingParameters:
            if refusesShortIntervals && (UInt32(p[3]) | UInt32(p[4]) << 8 | UInt32(p[5]) << 16) < 160 { return .invalidParameters }
        case .leSetAdvertiseEnable:
            let on = p[0] == 1
            if refusesRedundantEnable && on == state.legacy.enabled { return .commandDisallowed }
            if refusesEnableWhileConnected && on && !links.isEmpty { return .commandDisallowed }
        case .leSetExtendedAdvertisingEnable where p[1] > 0:
            let on = p[0] == 1
            if refusesEnableWhileConnected && on && !links.isEmpty { return .commandDisallowed }
            let handles = stride(from: 2, to: p.count, by: 4).map { p[$0] }
            if refusesRedundantEnable && handles.contains(where: { sets[$0]?.enabled == on }) { return .commandDisallowed }
        default:
            break
        }
        return nil
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
