import BeaconKit
import Glibc
import XCTest
@testable import BeaconLinux

/// The runner of changes from afar (issue 40: out of the executable) against a real requests
/// directory, inotify and config file, on the virtual clock: a change written (mode kept) and the
/// host reloading, a refused one leaving the file alone, identify, restart.
final class RemoteChangesTests: XCTestCase, RemoteChangesHost {
    var dir = ""
    var loop: EventLoop!
    var changes: RemoteChanges!
    final class Lines: @unchecked Sendable { var all: [String] = [] }
    let logged = Lines()

    // The host.
    var isStopping = false
    var canRestart = true
    var written = 0
    var restarts = 0
    var identifying: [Bool] = []
    var reports: [RemoteChangeReport] = []
    func configWritten() { written += 1 }
    func restartAsked() { restarts += 1 }
    func identify(_ on: Bool) { identifying.append(on) }
    func reported(_ change: RemoteChangeReport) { reports.append(change) }

    static let config = "[beacon]\nuuid = \"2f234454-cf6d-4a0f-adf2-f4911ba9ffa6\"\nmajor = 1\nminor = 2\npower = -59\n"

    override func setUp() {
        var template = Array("/tmp/altbeacond-changes-XXXXXX".utf8CString)
        dir = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)) }
        put(dir + "/config.toml", Self.config, mode: 0o640)
        loop = EventLoop(clock: LoopClock(virtualStartingAt: 1_000_000))
        let lines = logged
        changes = RemoteChanges(configPath: dir + "/config.toml", requestsPath: dir + "/requests", loop: loop,
                                log: Logger(journal: false, threshold: .info, sink: { lines.all.append($0) }), host: self,
                                wallClock: { 1_700_000_000 })
        changes.start()
    }

    override func tearDown() {
        _ = system("rm -rf '\(dir)'")
    }

    func put(_ path: String, _ text: String, mode: mode_t = 0o600) {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode)
        XCTAssertGreaterThanOrEqual(fd, 0, path)
        _ = Array(text.utf8).withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
    }

    /// A request as the monitor names it: issued now on the loop's clock.
    func request(_ text: String, _ n: Int = 1) {
        put(dir + "/requests/\(loop.now)-\(n).request", text)
    }

    var configText: String { (try? readFile(dir + "/config.toml", limit: 1 << 16)).map { String(decoding: $0, as: UTF8.self) } ?? "" }

    /// Turns without moving the virtual clock until `done()`, or two seconds of real time (the
    /// write runs on a real helper thread).
    func settle(realMs: Int64 = 2000, until done: () -> Bool) {
        let end = monotonicMilliseconds() + realMs
        while !done(), monotonicMilliseconds() < end {
            loop.runOnce(maxWaitMs: 0)
            usleep(1000)
        }
    }

    func testAChangeIsWrittenWithTheFilesModeAndTheHostReloads() {
        request("set power -40\norigin mqtt altbeacond/pi/beacon/set/power\n")
        settle { written == 1 }
        XCTAssertEqual(written, 1)
        XCTAssertTrue(configText.contains("power = -40\n"), configText)
        XCTAssertTrue(configText.contains("major = 1\n"), "nothing else changed")
        var st = stat()
        XCTAssertEqual(stat(dir + "/config.toml", &st), 0)
        XCTAssertEqual(st.st_mode & 0o777, 0o640, "the file keeps its mode")
        XCTAssertEqual(reports.last, RemoteChangeReport(request: "set power -40", origin: "mqtt altbeacond/pi/beacon/set/power",
                                                        applied: true, message: "", time: 1_700_000_000))
        XCTAssertTrue(RequestDirectory.pendingNames(in: dir + "/requests").isEmpty, "the request was taken")
    }

    func testARefusedValueLeavesTheFileAloneAndSaysWhy() {
        request("set power 50\n")
        settle { !reports.isEmpty }
        XCTAssertEqual(reports.count, 1)
        XCTAssertFalse(reports[0].applied)
        XCTAssertTrue(reports[0].message.contains("beacon.power must be between -127 and 0"), reports[0].message)
        XCTAssertEqual(configText, Self.config)
        XCTAssertEqual(written, 0)
        XCTAssertTrue(logged.all.contains { $0.contains("change from afar refused, the beacon stays as it is: set power 50") }, "\(logged.all)")
    }

    func testTheSameValueAgainIsNotWritten() {
        request("set major 1\n")
        settle { !reports.isEmpty }
        XCTAssertEqual(written, 0, "an unchanged file is not rewritten")
        XCTAssertEqual(configText, Self.config)
    }

    func testIdentifyStrobesForItsSeconds() {
        request("identify\n")
        settle { !identifying.isEmpty }
        XCTAssertEqual(identifying, [true])
        XCTAssertEqual(reports.map(\.request), ["identify"])
        loop.run(forMs: RemoteRequest.identifySeconds * 1000 - 100)
        XCTAssertEqual(identifying, [true])
        loop.run(forMs: 200)
        XCTAssertEqual(identifying, [true, false])
    }

    func testARestartNeedsSomebodyToStartTheDaemonAgain() {
        canRestart = false
        loop.run(forMs: RemoteChangeLimits.restartAfterMs)
        request("restart\n")
        settle { !reports.isEmpty }
        XCTAssertEqual(restarts, 0)
        XCTAssertEqual(reports.last?.message, "not running under systemd: nobody would start the daemon again")
        canRestart = true
        request("restart\n", 2)
        settle { restarts == 1 }
        XCTAssertEqual(restarts, 1)
        XCTAssertEqual(reports.last?.applied, true)
    }

    func testNothingIsTakenWhileStopping() {
        isStopping = true
        request("set power -40\n")
        settle(realMs: 200) { false }
        XCTAssertTrue(reports.isEmpty)
        XCTAssertEqual(RequestDirectory.pendingNames(in: dir + "/requests").count, 1, "left for the next process")
    }

    /// The loop outlives its owners (docs/architecture.md, Capturing self): the requests
    /// directory's watch stays with the loop after the runner is let go, and a request arriving
    /// then wakes it. The handler does nothing (with `unowned self` it trapped).
    func testARequestAfterTheRunnerIsGoneWakesTheLoopAndNothingElse() {
        XCTAssertTrue(isKnownUniquelyReferenced(&changes), "nothing else holds the runner")
        changes = nil
        request("set power -40\norigin mqtt altbeacond/pi/beacon/set/power\n")
        settle(realMs: 200) { false }
        XCTAssertEqual(written, 0)
        XCTAssertTrue(reports.isEmpty)
        XCTAssertTrue(configText.contains("power = -59\n"), configText)
        XCTAssertEqual(RequestDirectory.pendingNames(in: dir + "/requests").count, 1, "left for the next process")
    }
}
