import XCTest
@testable import BeaconKit

/// An on-air policy driven by events the way an adapter session feeds it, on a clock the test moves.
class PolicyTestCase: XCTestCase {
    static let base = """
        [beacon]
        uuid = "2f234454-cf6d-4a0f-adf2-f4911ba9ffa6"
        major = 1
        minor = 2
        """
    var s = OnAirPolicy(config: PolicyTestCase.make(), generation: 1)
    var now: Int64 = 0

    static func make(_ extra: String = "", major: Int = 1) -> BeaconConfig {
        let text = base.replacingMajor(major) + "\n" + extra
        guard let c = config(text) else { fatalError("test config refused") }
        return c
    }

    @discardableResult
    func on(_ e: PolicyEvent, after ms: Int64 = 0) -> [PolicyAction] {
        now += ms
        return s.handle(e, now: now)
    }

    /// The outcome of the arm in flight.
    @discardableResult
    func armed(_ failure: ArmFailure? = nil, summary: AirSummary = AirSummary(), after ms: Int64 = 0) -> [PolicyAction] {
        guard let g = s.armInFlight else { XCTFail("no arm in flight"); return [] }
        return on(.armed(generation: g, failure.map { .failure($0) } ?? .success(summary)), after: ms)
    }

    func rearmTimer(after ms: Int64 = 0) -> [PolicyAction] { on(.timer(.rearm), after: ms) }

    /// Started and on air.
    func onAir() {
        XCTAssertEqual(arm(in: on(.start)), .full)
        let a = armed()
        XCTAssertEqual(scheduled(.probe, in: a), 5000)
        XCTAssertEqual(s.phase, .advertising)
    }
}

func arm(in actions: [PolicyAction]) -> ArmScope? {
    for case .arm(let scope, _, _) in actions { return scope }
    return nil
}

func armedConfig(in actions: [PolicyAction]) -> (BeaconConfig, Int)? {
    for case .arm(_, let c, let g) in actions { return (c, g) }
    return nil
}

func scheduled(_ t: PolicyTimer, in actions: [PolicyAction]) -> Int64? {
    for case .schedule(let timer, let ms) in actions where timer == t { return ms }
    return nil
}

func confirmed(in actions: [PolicyAction]) -> Int? {
    for case .confirmed(let g, _) in actions { return g }
    return nil
}

func warnings(in actions: [PolicyAction]) -> [String] {
    actions.compactMap { if case .warning(let w) = $0 { return w } else { return nil } }
}

func notices(in actions: [PolicyAction]) -> [String] {
    actions.compactMap { if case .notice(let n) = $0 { return n } else { return nil } }
}

extension String {
    func replacingMajor(_ major: Int) -> String {
        var out: [Substring] = []
        for line in split(separator: "\n", omittingEmptySubsequences: false) {
            out.append(line.hasPrefix("major = ") ? Substring("major = \(major)") : line)
        }
        return out.joined(separator: "\n")
    }
}
