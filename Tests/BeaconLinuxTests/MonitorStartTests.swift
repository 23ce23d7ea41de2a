import XCTest
import Glibc
import BeaconKit
@testable import BeaconLinux

/// Issue 50: `altbeacond monitor`'s start refusals and exit statuses, once in the executable.
final class MonitorStartTests: XCTestCase {
    static let lobby = "[expect.lobby]\ntype = \"altbeacon\"\nuuid = \"2f234454-cf6d-4a0f-adf2-f4911ba9ffa6\"\nmajor = 1\nminor = 2\n"
    var dir = ""

    override func setUp() {
        var t = Array("/tmp/altbeacond-monitor-start.XXXXXX".utf8CString)
        dir = String(cString: mkdtemp(&t))
    }

    override func tearDown() { _ = system("rm -rf '\(dir)'") }

    func file(_ name: String, _ text: String, mode: mode_t) -> String {
        let path = dir + "/" + name
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode)
        _ = Array(text.utf8).withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
        chmod(path, mode)
        return path
    }

    func config(_ text: String) throws -> MonitorConfig {
        try MonitorConfigFile.parse(Array(text.utf8), path: dir + "/monitor.toml").get()
    }

    func testAPasswordFileOthersCanReadIsRefusedAtStartNotWithOnce() throws {
        let open = file("pw-open", "secret\n", mode: 0o644)
        let c = try config("[mqtt]\nhost = \"b\"\nusername = \"u\"\npassword_file = \"\(open)\"\n" + Self.lobby)
        let r = MonitorStart.refusal(c, once: false, configPath: "m.toml")
        XCTAssertEqual(r?.code, 78)
        XCTAssertTrue(r?.message.hasPrefix("altbeacond: ") ?? false)
        XCTAssertTrue(r?.message.contains(open) ?? false, r?.message ?? "")
        XCTAssertNil(MonitorStart.refusal(c, once: true, configPath: "m.toml"), "--once never connects")
        let closed = file("pw-closed", "secret\n", mode: 0o600)
        XCTAssertNil(MonitorStart.refusal(try config("[mqtt]\nhost = \"b\"\nusername = \"u\"\npassword_file = \"\(closed)\"\n" + Self.lobby),
                                          once: false, configPath: "m.toml"))
    }

    func testACAFileThatCannotBeUsedIsRefusedAtStart() throws {
        let junk = file("ca.pem", "not a certificate\n", mode: 0o644)
        let r = MonitorStart.refusal(try config("[mqtt]\nhost = \"b\"\ntls = true\nca_file = \"\(junk)\"\n" + Self.lobby),
                                     once: false, configPath: "m.toml")
        XCTAssertEqual(r?.code, 78)
        XCTAssertTrue(r?.message.contains(junk) ?? false, r?.message ?? "")
    }

    func testOnceWithoutExpectationsIsAMistake() throws {
        let local = try config("[mqtt]\nhost = \"b\"\n")
        let r = MonitorStart.refusal(local, once: true, configPath: "m.toml")
        XCTAssertEqual(r?.code, 78)
        XCTAssertEqual(r?.message, "altbeacond: m.toml expects no beacon: --once needs [expect.NAME] tables to scan for")
        XCTAssertNil(MonitorStart.refusal(local, once: false, configPath: "m.toml"),
                     "without --once it publishes the local beacon alone")
    }

    func testTheExitStatusAfterTheSession() throws {
        let loop = EventLoop(clock: LoopClock(virtualStartingAt: 0))
        let log = Logger(journal: false, threshold: .info, sink: { _ in })
        let c = try config(Self.lobby)
        let once = MonitorSession(config: c, once: true, loop: loop, log: log, outputs: []) { _ in MonitorReloaderTests.IdleScan() }
        XCTAssertEqual(MonitorStart.exitCode(once, once: true), 2, "--once, the beacon not heard: 2 (Nagios' critical)")
        XCTAssertEqual(MonitorStart.exitCode(once, once: false), 0)
    }

    func testEnvironmentPathsForTheUpdater() {
        setenv("ALTBEACOND_UPDATE_DIR", dir, 1)
        defer { unsetenv("ALTBEACOND_UPDATE_DIR") }
        XCTAssertEqual(FirmwareUpdatePaths.fromEnvironment().directory, dir)
        XCTAssertEqual(FirmwareUpdatePaths.fromEnvironment().imageMarker, FirmwareUpdatePaths.standard.imageMarker)
    }
}
