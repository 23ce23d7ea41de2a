// Issue 38: changes from afar, cheap and bounded. The daemon takes every request the monitor
// left, and this procedure decides what becomes of them; the runner (altbeacond's Remote.swift)
// does the I/O: it lists and reads the requests, reads config.toml for a plan, writes the
// planned file on a helper thread, and reloads. Time comes in as monotonic milliseconds.
//
// - Requests older than `maximumAgeMs` when taken were left while the daemon was not running:
//   dropped, and said in one line.
// - The newest value of each setting wins: a burst of 300 power changes is one setting.
// - config.toml is written only when the loaded config changes, at most `writeBurst` times at
//   once and then once every `writeRefillMs` (a token bucket): a flood or an automation loop
//   costs the SD card at most `writeBurst + 60_000 / writeRefillMs` rewrites in any minute.
//   What waits is held in memory, coalesced, and written when the bucket allows.
// - One restart at most: a restart asked before this process started is done already, several
//   asked together are one, and none comes before the process has been up `restartAfterMs`
//   (a button pressed in a loop restarts the beacon every few seconds, not at every press).
//   Held settings are written before it, whatever the bucket.

public enum RemoteChangeLimits {
    /// A request older than this when taken is dropped (60 s).
    public static let maximumAgeMs: Int64 = 60_000
    /// Writes allowed at once (the bucket's size): a person setting up a beacon from Home
    /// Assistant never waits.
    public static let writeBurst = 10
    /// One more write allowed every 10 s.
    public static let writeRefillMs: Int64 = 10_000
    /// A restart asked sooner after the process started waits until then.
    public static let restartAfterMs: Int64 = 5_000
    /// At most this many requests wait in the directory: the monitor drops a new one beyond
    /// (the daemon not running), and says so.
    public static let maximumPending = 1000
    /// The most rewrites of config.toml in any 60 s.
    public static var maximumWritesPerMinute: Int { writeBurst + Int(60_000 / writeRefillMs) }
}

/// One request file as the runner took it.
public struct TakenRequest: Sendable {
    /// The file's name ("000081234567-000003.request").
    public var name: String
    public var request: Result<RemoteRequest, RemoteRequestError>

    public init(name: String, request: Result<RemoteRequest, RemoteRequestError>) { self.name = name; self.request = request }

    /// The monotonic milliseconds the monitor named it by (`RequestWriter`), nil for another name.
    public var issuedMs: Int64? {
        let digits = name.utf8.prefix { $0 >= 0x30 && $0 <= 0x39 }
        guard (1...18).contains(digits.count), name.utf8.dropFirst(digits.count).first == UInt8(ascii: "-") else { return nil }
        return digits.reduce(Int64(0)) { $0 * 10 + Int64($1 - 0x30) }
    }
}

/// What the runner shows or logs.
public enum RemoteChangeEffect: Equatable, Sendable {
    /// The status file's `change`, and one log line (notice when applied, error when refused).
    case report(request: String, origin: String, applied: Bool, message: String)
    /// One informational log line.
    case note(String)
    /// Both LEDs strobe for `RemoteRequest.identifySeconds` (again from now, when already).
    case identify(origin: String)
}

/// What the runner does next.
public enum RemoteChangeStep: Equatable, Sendable {
    /// Nothing to do until another request comes (or a write completes).
    case idle
    /// Read config.toml and hand its plan to `planned` (these settings, in order).
    case plan([HeldSetting])
    /// Settings wait for the write bucket: come back at this time.
    case wait(untilMs: Int64)
    /// Exit so that systemd starts the daemon again.
    case restart(RemoteRequest)
}

public struct RemoteChangeProcedure: Sendable {
    /// The process's start: a restart asked before it is done already.
    public let startedMs: Int64
    public private(set) var held: [HeldSetting] = []
    public private(set) var restartAsked: RemoteRequest?
    /// The settings being written (nil: no write running).
    public private(set) var writing: [HeldSetting]?
    private var tokens = Double(RemoteChangeLimits.writeBurst)
    private var tokensAtMs: Int64

    public init(startedMs: Int64) {
        self.startedMs = startedMs
        tokensAtMs = startedMs
    }

    /// A batch of requests, oldest first.
    public mutating func received(_ batch: [TakenRequest], now nowMs: Int64) -> [RemoteChangeEffect] {
        var effects: [RemoteChangeEffect] = []
        var stale = 0, oldestMs: Int64 = 0
        var identify: String?
        for taken in batch {
            if let issued = taken.issuedMs, nowMs - issued > RemoteChangeLimits.maximumAgeMs {
                stale += 1
                oldestMs = max(oldestMs, nowMs - issued)
                continue
            }
            switch taken.request {
            case .failure(let e):
                effects.append(.report(request: taken.name, origin: "", applied: false, message: e.description))
            case .success(let r):
                switch r.action {
                case .identify: identify = r.origin
                case .restart:
                    if let issued = taken.issuedMs, issued < startedMs {
                        effects.append(.note("restart from afar (\(r.origin)) asked before this start: done already"))
                    } else if restartAsked == nil {
                        restartAsked = r
                    }
                case .set(let setting, let value):
                    hold(HeldSetting(setting: setting, value: value, origin: r.origin))
                }
            }
        }
        if stale > 0 {
            effects.append(.note("dropped \(stale) change\(stale == 1 ? "" : "s") from afar older than "
                + "\(RemoteChangeLimits.maximumAgeMs / 1000) s (the oldest \(oldestMs / 1000) s): left while the daemon was not taking them"))
        }
        if let origin = identify { effects.append(.identify(origin: origin)) }
        return effects
    }

    /// The newest value wins; the setting keeps its place among the held ones.
    private mutating func hold(_ s: HeldSetting) {
        if let i = held.firstIndex(where: { $0.setting == s.setting }) {
            held[i] = HeldSetting(setting: s.setting, value: s.value, origin: s.origin, requests: held[i].requests + 1)
        } else {
            held.append(s)
        }
    }

    public func nextStep(now nowMs: Int64) -> RemoteChangeStep {
        if writing != nil { return .idle }
        let restartAt = startedMs + RemoteChangeLimits.restartAfterMs
        let restartDue = restartAsked != nil && nowMs >= restartAt
        if !held.isEmpty {
            if restartDue || available(at: nowMs) >= 1 { return .plan(held) }
            let refill = nowMs + Int64(((1 - available(at: nowMs)) * Double(RemoteChangeLimits.writeRefillMs)).rounded(.up))
            return .wait(untilMs: restartAsked == nil ? refill : min(refill, restartAt))
        }
        if let r = restartAsked { return restartDue ? .restart(r) : .wait(untilMs: restartAt) }
        return .idle
    }

    private func available(at nowMs: Int64) -> Double {
        let refilled = Double(max(0, nowMs - tokensAtMs)) / Double(RemoteChangeLimits.writeRefillMs)
        return min(Double(RemoteChangeLimits.writeBurst), tokens + refilled)
    }

    /// The plan for the settings `nextStep` gave. Returns the file to write (the runner then
    /// calls `written`), or nil when there is nothing to write; and what to report now.
    public mutating func planned(_ plan: RemoteChangePlan, now nowMs: Int64) -> (write: [UInt8]?, effects: [RemoteChangeEffect]) {
        var effects: [RemoteChangeEffect] = []
        var changing: [HeldSetting] = []
        for (s, outcome) in plan.outcomes {
            held.removeAll { $0.setting == s.setting && $0.value == s.value }
            switch outcome {
            case .refused(let why): effects.append(.report(request: s.summary, origin: s.origin, applied: false, message: why))
            // Logged, never reported: a report is the status file's `change` and Home Assistant's
            // Change event, and a retained setting applied again at every reconnection would
            // fire one each time for nothing (issue 48).
            case .alreadySo: effects.append(.note("\(s.summary)\(s.origin.isEmpty ? "" : " (from \(s.origin))"): already so: nothing written"))
            case .changes: changing.append(s)
            }
            if s.requests > 1 { effects.append(.note("\(s.requests - 1) earlier change\(s.requests == 2 ? "" : "s") of \(s.setting.rawValue) superseded by \(s.summary)")) }
        }
        guard let bytes = plan.edited, !changing.isEmpty else { return (nil, effects) }
        tokens = max(0, available(at: nowMs) - 1)
        tokensAtMs = nowMs
        writing = changing
        return (bytes, effects)
    }

    /// The write `planned` asked for is done: nil, or why it failed.
    public mutating func written(error: String?) -> [RemoteChangeEffect] {
        let done = writing ?? []
        writing = nil
        return done.map { s in
            .report(request: s.summary, origin: s.origin, applied: error == nil, message: error ?? "")
        }
    }

    /// The restart `nextStep` gave is under way (or refused): it is asked no more.
    public mutating func restartTaken() { restartAsked = nil }
}
