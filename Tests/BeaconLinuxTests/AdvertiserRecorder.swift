import BeaconKit
@testable import BeaconLinux

/// What an advertiser reported, for tests that drive one without a session: each event is kept,
/// and handed to the first waiter that takes it.
final class AdvertiserRecorder: AdvertiserEvents {
    var events: [AdvertiserEvent] = []
    var sent: [HCIOpcode] = []
    /// Each returns true when it took the event (it is then removed).
    var waiters: [(AdvertiserEvent) -> Bool] = []

    func advertiser(_ advertiser: Advertiser, sent opcode: HCIOpcode, _ parameters: [UInt8]) { sent.append(opcode) }

    func advertiser(_ advertiser: Advertiser, reported event: AdvertiserEvent) {
        events.append(event)
        if let i = waiters.firstIndex(where: { $0(event) }) { waiters.remove(at: i) }
    }
}

/// The operations with their outcome handed to a closure, as the tests read best.
extension Advertiser {
    private var recorder: AdvertiserRecorder { events as! AdvertiserRecorder }

    private func waitFor(_ take: @escaping (AdvertiserEvent) -> Bool) { recorder.waiters.append(take) }

    func arm(_ config: BeaconConfig, scope: ArmScope, _ done: @escaping (Result<AirSummary, ArmFailure>) -> Void) {
        let g = (recorder.events.count + 1) * 1000
        waitFor { if case .armed(g, let r) = $0 { done(r); return true }; return false }
        arm(config, scope: scope, generation: g)
    }

    func rotate(_ done: @escaping (ArmFailure?) -> Void) {
        waitFor { if case .rotated(let f) = $0 { done(f); return true }; return false }
        rotate()
    }

    func probe(_ done: @escaping (ArmFailure?) -> Void) {
        waitFor { if case .probed(let f) = $0 { done(f); return true }; return false }
        probe()
    }

    func takeDown(commandTimeoutMs: Int64, deadlineMs: Int64, _ done: @escaping (Bool) -> Void) {
        waitFor { if case .tookDown(let c) = $0 { done(c); return true }; return false }
        takeDown(commandTimeoutMs: commandTimeoutMs, deadlineMs: deadlineMs)
    }
}
