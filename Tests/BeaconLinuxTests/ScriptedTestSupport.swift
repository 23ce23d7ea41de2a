import BeaconKit
import XCTest
@testable import BeaconLinux

/// Log lines a test can read (the logger's sink must be Sendable; the tests run on one thread).
final class LogLines: @unchecked Sendable {
    var lines: [String] = []
    func count(_ needle: String) -> Int { lines.filter { $0.contains(needle) }.count }
}

/// Beacons and configs for the scripted-controller tests.
enum TestBeacons {
    static let uuid: [UInt8] = [0x2f, 0x23, 0x44, 0x54, 0xcf, 0x6d, 0x4a, 0x0f, 0xad, 0xf2, 0xf4, 0x91, 0x1b, 0xa9, 0xff, 0xa6]

    static func identity(major: UInt16 = 1, minor: UInt16 = 2) -> BeaconIdentity {
        BeaconIdentity(uuid: uuid, major: major, minor: minor)
    }

    static func altBeacon(major: UInt16 = 1) -> ConfiguredFrame { ConfiguredFrame(AltBeaconFrame(identity(major: major))) }
    static func iBeacon(major: UInt16 = 1) -> ConfiguredFrame {
        ConfiguredFrame(IBeaconFrame(uuid: uuid, major: major, minor: 2, power: -59))
    }
    static func eddystoneUID() -> ConfiguredFrame {
        ConfiguredFrame(EddystoneUIDFrame(namespace: Array(uuid.prefix(10)), instance: [1, 2, 3, 4, 5, 6], power0m: -18))
    }
    static func tlm() -> ConfiguredFrame { ConfiguredFrame(EddystoneTLMFrame()) }

    /// AltBeacon, iBeacon and Eddystone-UID.
    static func three(major: UInt16 = 1) -> [ConfiguredFrame] { [altBeacon(major: major), iBeacon(major: major), eddystoneUID()] }

    static func config(_ frames: [ConfiguredFrame]? = nil, major: UInt16 = 1, adapter: UInt16 = 0, intervalMs: UInt16 = 100,
                       rotationMs: UInt16 = 1000, checkS: UInt32 = 1) -> BeaconConfig {
        BeaconConfig(beacon: identity(major: major), frames: frames,
                     bluetooth: BluetoothSettings(adapter: "hci\(adapter)", adapterIndex: adapter, intervalMs: intervalMs,
                                                  rotationMs: rotationMs),
                     watchdog: WatchdogSettings(checkIntervalS: checkS))
    }

    /// What goes on air for `frames` (no telemetry).
    static func payloads(_ frames: [ConfiguredFrame]) -> [[UInt8]] { frames.map { $0.frame.advertisingData(.zero) } }
    static func payload(major: UInt16 = 1) -> [UInt8] { altBeacon(major: major).frame.advertisingData(.zero) }

    /// The advertising count of a TLM payload.
    static func tlmCount(_ payload: [UInt8]) -> UInt32? {
        EddystoneTLMFrame.decode(payload[...])?.received?.advertisingCount
    }
    static func tlmUptime(_ payload: [UInt8]) -> UInt32? {
        EddystoneTLMFrame.decode(payload[...])?.received?.uptimeDeciseconds
    }
}

extension EventLoop {
    /// A loop on a virtual clock starting at 0: it jumps to the next deadline instead of sleeping.
    static func virtual() -> EventLoop { EventLoop(clock: LoopClock(virtualStartingAt: 0)) }

    /// Runs turns until `condition` holds (true) or `ms` virtual milliseconds passed (false).
    /// Fails the test if the loop spins: far more turns than virtual milliseconds.
    @discardableResult
    func run(atMostMs ms: Int64, until condition: () -> Bool, file: StaticString = #filePath, line: UInt = #line) -> Bool {
        let end = now + ms
        var turns = 0
        while !condition() {
            if now >= end { return false }
            runOnce(maxWaitMs: end - now)
            turns += 1
            if turns > 200_000 + Int(ms) * 20 {
                XCTFail("the loop spins: \(turns) turns in \(ms) virtual ms", file: file, line: line)
                return false
            }
        }
        return true
    }

    /// Runs every turn of the next `ms` virtual milliseconds.
    /// Turns for `ms` of virtual time, or until a session stops the loop (`stop()`): what a
    /// command's session does when it ends.
    func turn(forMs ms: Int64) {
        let end = now + ms
        let wake = makeTimer()
        wake.schedule(afterMs: ms) {}
        while now < end && !isStopped { runOnce() }
        withExtendedLifetime(wake) {}
    }

    func run(forMs ms: Int64, file: StaticString = #filePath, line: UInt = #line) {
        let end = now + ms
        run(atMostMs: ms, until: { now >= end }, file: file, line: line)
    }
}

/// A test case whose loop, logger and objects outlive each test method (timers hold the loop unowned).
class ScriptedTestCase: XCTestCase {
    var loop: EventLoop!
    let logLines = LogLines()
    var keep: [AnyObject] = []
    private var oldLoops: [EventLoop] = []

    override func setUp() {
        super.setUp()
        loop = .virtual()
    }

    override func tearDown() {
        keep = []
        oldLoops = []
        loop = nil
        super.tearDown()
    }

    /// A new virtual loop for the objects made from now on (the old ones stay, never run again).
    func freshLoop() {
        oldLoops.append(loop)
        loop = .virtual()
    }

    var log: Logger {
        let lines = logLines
        return Logger(journal: false, threshold: .debug, sink: { lines.lines.append($0) })
    }

    func controller(index: UInt16 = 0, legacy: Bool = false, sets: UInt8 = 4) -> ScriptedHCIController {
        let c = legacy ? ScriptedHCIController.legacy(index: index, loop: loop) : ScriptedHCIController(index: index, loop: loop, sets: sets)
        keep.append(c)
        return c
    }

    func advertiser(_ c: ScriptedHCIController) -> Advertiser {
        let a = Advertiser(controller: c, loop: loop, log: log)
        let r = AdvertiserRecorder()
        a.events = r
        keep.append(a)
        keep.append(r)
        return a
    }

    /// Arms `config` and runs until its completion (or `ms`).
    @discardableResult
    func arm(_ a: Advertiser, _ config: BeaconConfig, scope: ArmScope = .full, ms: Int64 = 20_000) -> Result<AirSummary, ArmFailure>? {
        var result: Result<AirSummary, ArmFailure>?
        a.arm(config, scope: scope) { result = $0 }
        loop.run(atMostMs: ms) { result != nil }
        return result
    }

    /// A session on `c`, wired to its monitor and device events as the daemon does.
    func session(_ c: ScriptedHCIController, _ config: BeaconConfig, generation: Int = 1,
                 board: BoardReader? = nil) -> SessionProbe {
        let s = AdapterSession(config: config, generation: generation, controller: c, loop: loop, log: log, board: board)
        let p = SessionProbe(session: s)
        c.monitor = { [weak s] op, params in if let s, !s.isRetired { s.monitored(op, params) } }
        c.onDeviceEvent = { [weak s] kind in if let s, !s.isRetired { s.deviceEvent(kind) } }
        keep.append(s)
        keep.append(p)
        return p
    }

    /// Runs until `c` has exactly `payloads` on air; the virtual ms it took, or nil.
    func msUntil(_ c: ScriptedHCIController, airs payloads: [[UInt8]], atMostMs ms: Int64) -> Int64? {
        let start = loop.now
        return loop.run(atMostMs: ms, until: { c.onAir == payloads }) ? loop.now - start : nil
    }

    func dumpLog(_ last: Int = 60) -> String { logLines.lines.suffix(last).joined() }
}

/// An adapter session's host, with what the session told it.
final class SessionProbe: AdapterSessionHost {
    let session: AdapterSession
    var confirmed: [Int] = []
    var restartRequests = 0
    var released: [[UInt8]] = []
    /// Called at each restart request.
    var onRestartRequested: () -> Void = {}

    init(session: AdapterSession) {
        self.session = session
        session.host = self
    }

    func sessionChanged(_ session: AdapterSession) {}
    func session(_ session: AdapterSession, confirmed generation: Int) { confirmed.append(generation) }
    func sessionRequestsRestart(_ session: AdapterSession) {
        restartRequests += 1
        onRestartRequested()
    }
    func sessionBroughtUp(_ session: AdapterSession) {}
    func session(_ session: AdapterSession, releasingCentral address: [UInt8]) { released.append(address) }

    var phase: PolicyPhase { session.policy.phase }
}

/// A board whose uptime is `uptimeDeciseconds` whenever it is read (and no thermal zone).
struct FixedBoard: BoardReader {
    var uptimeDeciseconds: UInt32
    func read(now: Int64) -> BoardReading { BoardReading(uptimeDeciseconds: uptimeDeciseconds, temperature: nil, readAtMs: now) }
}
