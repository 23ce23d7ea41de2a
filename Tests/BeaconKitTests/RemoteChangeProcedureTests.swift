import BeaconKit
import XCTest

/// Issue 38: changes from afar, cheap and bounded, driven as Remote.swift drives them, on a
/// virtual clock and a config file in memory.
final class RemoteChangeProcedureTests: XCTestCase {
    static let base = """
        # the lobby
        [beacon]
        uuid = "2f234454-cf6d-4a0f-adf2-f4911ba9ffa6"
        major = 1
        minor = 2
        power = -59

        """

    /// The runner: a config file, a clock, the writes made and the effects shown.
    struct Rig {
        var procedure: RemoteChangeProcedure
        var file = Array(RemoteChangeProcedureTests.base.utf8)
        var nowMs: Int64 = 1_000_000
        var writes: [(atMs: Int64, bytes: [UInt8])] = []
        var effects: [RemoteChangeEffect] = []
        var restarted: RemoteRequest?
        var serial = 0

        init() { procedure = RemoteChangeProcedure(startedMs: 1_000_000) }

        mutating func name(issuedMs: Int64? = nil) -> String {
            serial += 1
            let ms = String(issuedMs ?? nowMs)
            return String(repeating: "0", count: 12 - ms.count) + ms + "-\(serial).request"
        }

        mutating func take(_ requests: [RemoteRequest], issuedMs: Int64? = nil) {
            let batch = requests.map { TakenRequest(name: name(issuedMs: issuedMs), request: .success($0)) }
            effects += procedure.received(batch, now: nowMs)
            advance()
        }

        /// As Remote.swift: until the procedure waits; a write completes at once.
        mutating func advance() {
            while true {
                switch procedure.nextStep(now: nowMs) {
                case .idle, .wait: return
                case .plan(let settings):
                    let (write, e) = procedure.planned(RemoteChangePlan.make(settings, config: file, path: "config.toml"), now: nowMs)
                    effects += e
                    if let write {
                        file = write
                        writes.append((nowMs, write))
                        effects += procedure.written(error: nil)
                    }
                case .restart(let r):
                    procedure.restartTaken()
                    restarted = r
                }
            }
        }

        /// Lets virtual time pass, waking when the procedure asked to.
        mutating func run(untilMs end: Int64) {
            while case .wait(let until) = procedure.nextStep(now: nowMs), until <= end {
                nowMs = until
                advance()
            }
            nowMs = end
        }

        var text: String { String(decoding: file, as: UTF8.self) }
        var refusals: [String] {
            effects.compactMap { if case .report(_, _, false, let m) = $0 { m } else { nil } }
        }
    }

    func testAFloodOfOneSettingIsOneWriteOfTheNewestValue() {
        var rig = Rig()
        rig.take((0..<300).map { RemoteRequest(.set(.power, "\(-($0 % 100))"), origin: "mqtt") })
        XCTAssertEqual(rig.writes.count, 1, "300 changes of one setting taken together: one write")
        XCTAssertTrue(rig.text.contains("power = -99"), rig.text)
        XCTAssertTrue(rig.effects.contains(.note("299 earlier changes of power superseded by set power -99")), "\(rig.effects)")
        XCTAssertTrue(rig.procedure.held.isEmpty)
    }

    func testNothingIsWrittenWhenNothingChanges() {
        var rig = Rig()
        rig.take([RemoteRequest(.set(.power, "-59")), RemoteRequest(.set(.advertising, "ON")), RemoteRequest(.set(.major, "1.0"))])
        XCTAssertEqual(rig.writes.count, 0, "the same values, and advertising's default where the key is absent: \(rig.text)")
        // said in the log only: no report, so no status `change` and no Change event in HA
        XCTAssertEqual(rig.effects.filter { if case .note(let t) = $0, t.hasSuffix(": already so: nothing written") { true } else { false } }.count, 3,
                       "\(rig.effects)")
        XCTAssertFalse(rig.effects.contains { if case .report = $0 { true } else { false } }, "\(rig.effects)")
        // A retained setting applied again at every reconnection costs nothing either.
        rig.take([RemoteRequest(.set(.power, "-40"))])
        rig.nowMs += 60_000
        rig.take([RemoteRequest(.set(.power, "-40"))])
        XCTAssertEqual(rig.writes.count, 1)
    }

    func testWritesAreBoundedPerMinuteAndTheLastValueWins() {
        var rig = Rig()
        // An automation loop: a new value every 100 ms for two minutes, each its own batch.
        let start = rig.nowMs
        for i in 0..<1200 {
            rig.run(untilMs: start + Int64(i) * 100)
            rig.take([RemoteRequest(.set(.power, "\(-(i % 90) - 1)"))])
        }
        rig.run(untilMs: start + 200_000)
        XCTAssertTrue(rig.text.contains("power = \(-(1199 % 90) - 1)"), "the last value asked is in the file: \(rig.text)")
        XCTAssertTrue(rig.procedure.held.isEmpty, "nothing left pending")
        for w in rig.writes {
            let inWindow = rig.writes.filter { $0.atMs >= w.atMs && $0.atMs < w.atMs + 60_000 }.count
            XCTAssertLessThanOrEqual(inWindow, RemoteChangeLimits.maximumWritesPerMinute, "writes in the minute from \(w.atMs)")
        }
        XCTAssertEqual(RemoteChangeLimits.maximumWritesPerMinute, 16)
        XCTAssertLessThanOrEqual(rig.writes.count, 10 + 200 / 10 + 1, "10 at once, then one per 10 s")
        XCTAssertGreaterThanOrEqual(rig.writes.count, 10 + 120 / 10 - 1, "the bucket refills: changes keep coming through")
    }

    func testSettingsOfSeveralKindsAreOneWriteAndARefusalStandsAlone() {
        var rig = Rig()
        rig.take([
            RemoteRequest(.set(.power, "-40")), RemoteRequest(.set(.intervalMs, "5")), RemoteRequest(.set(.major, "7")),
            RemoteRequest(.set(.minor, "banana")), RemoteRequest(.set(.frameIBeacon, "ON")),
        ])
        XCTAssertEqual(rig.writes.count, 1)
        XCTAssertTrue(rig.text.contains("power = -40") && rig.text.contains("major = 7") && rig.text.contains("[ibeacon]"), rig.text)
        XCTAssertFalse(rig.text.contains("interval_ms"), "a value the config refuses is not written")
        XCTAssertTrue(rig.text.hasPrefix("# the lobby\n"), "the person's comments stay")
        XCTAssertEqual(rig.refusals.count, 2, "\(rig.refusals)")
        XCTAssertTrue(rig.refusals[0].hasPrefix("config.toml:"), "check's own FILE:LINE:COL message: \(rig.refusals[0])")
        XCTAssertTrue(rig.refusals[1].contains("minor: \"banana\" is not a whole number"), rig.refusals[1])
        guard case .success = ConfigFile.parse(rig.file, path: "config.toml") else { return XCTFail("the file written loads") }
    }

    func testStaleRequestsAreDroppedAndSaid() {
        var rig = Rig()
        rig.nowMs += 600_000
        rig.take([RemoteRequest(.set(.power, "-40")), RemoteRequest(.set(.major, "9"))], issuedMs: rig.nowMs - 300_000)
        XCTAssertEqual(rig.writes.count, 0)
        XCTAssertTrue(rig.effects.contains(.note("dropped 2 changes from afar older than 60 s (the oldest 300 s): left while the daemon was not taking them")),
                      "\(rig.effects)")
        rig.take([RemoteRequest(.set(.power, "-40"))], issuedMs: rig.nowMs - 59_000)
        XCTAssertEqual(rig.writes.count, 1, "a minute old is still taken")
    }

    func testRestartsCollapseAndHeldSettingsGoFirst() {
        var rig = Rig()
        // Asked before this process started: done by this start.
        rig.take([RemoteRequest(.restart), RemoteRequest(.restart)], issuedMs: rig.procedure.startedMs - 1000)
        XCTAssertNil(rig.restarted)
        // Use up the bucket, then a setting that must wait, then a restart: the setting first.
        for p in 30..<40 { rig.take([RemoteRequest(.set(.power, "-\(p)"))]) }
        rig.take([RemoteRequest(.set(.power, "-45"))])
        XCTAssertEqual(rig.writes.count, 10)
        guard case .wait = rig.procedure.nextStep(now: rig.nowMs) else { return XCTFail("the eleventh waits for the bucket") }
        rig.take((0..<50).map { _ in RemoteRequest(.restart) })
        XCTAssertNil(rig.restarted, "not within 5 s of the start")
        XCTAssertEqual(rig.writes.count, 10)
        rig.run(untilMs: rig.procedure.startedMs + RemoteChangeLimits.restartAfterMs)
        XCTAssertEqual(rig.writes.count, 11, "written before the restart, whatever the bucket")
        XCTAssertTrue(rig.text.contains("power = -45"))
        XCTAssertEqual(rig.restarted, RemoteRequest(.restart))
        rig.restarted = nil
        rig.advance()
        XCTAssertNil(rig.restarted, "fifty restarts asked together are one")
    }

    func testIdentifyCollapsesAndMalformedIsReported() {
        var rig = Rig()
        rig.take([RemoteRequest(.identify, origin: "a"), RemoteRequest(.identify, origin: "b")])
        XCTAssertEqual(rig.effects, [.identify(origin: "b")])
        let bad = TakenRequest(name: "000000000001-1.request", request: .failure(.malformed("\"rm -rf\"")))
        let effects = rig.procedure.received([bad], now: 2)
        XCTAssertEqual(effects, [.report(request: "000000000001-1.request", origin: "", applied: false, message: "not a change request: \"rm -rf\"")])
    }

    func testAFailedWriteIsReportedAndTheSettingIsNotRetriedForEver() {
        var p = RemoteChangeProcedure(startedMs: 0)
        _ = p.received([TakenRequest(name: "x", request: .success(RemoteRequest(.set(.power, "-40"))))], now: 10)
        guard case .plan(let s) = p.nextStep(now: 10) else { return XCTFail() }
        let (write, _) = p.planned(RemoteChangePlan.make(s, config: Array(Self.base.utf8), path: "c"), now: 10)
        XCTAssertNotNil(write)
        XCTAssertEqual(p.nextStep(now: 11), .idle, "one write at a time")
        XCTAssertEqual(p.written(error: "cannot write c: Read-only file system"),
                       [.report(request: "set power -40", origin: "", applied: false, message: "cannot write c: Read-only file system")])
        XCTAssertEqual(p.nextStep(now: 12), .idle)
    }

    func testIssuedTimeFromTheName() {
        XCTAssertEqual(TakenRequest(name: "000081234567-000003.request", request: .success(RemoteRequest(.identify))).issuedMs, 81_234_567)
        XCTAssertNil(TakenRequest(name: "x.request", request: .success(RemoteRequest(.identify))).issuedMs)
        XCTAssertNil(TakenRequest(name: "99999999999999999999999-1.request", request: .success(RemoteRequest(.identify))).issuedMs)
    }
}
