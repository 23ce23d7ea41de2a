import XCTest
@testable import BeaconKit

/// Issue 50: decisions the executable made untested: the daemon's start (the last good
/// fallback), the exit statuses and their words, `monitor --check`'s report.
final class ExecutableDecisionTests: XCTestCase {
    static let good = "[beacon]\nuuid = \"2f234454-cf6d-4a0f-adf2-f4911ba9ffa6\"\nmajor = 1\nminor = 2\n"
    static let refused = ConfigLoadError(code: ExitCode.config, message: "/etc/altbeacond/config.toml:3:9: major must be between 0 and 65535, found 70000\n  major = 70000\n          ^")

    func parsed(_ text: String) throws -> BeaconConfig {
        guard case .success(let c) = ConfigFile.parse(Array(text.utf8), path: "c.toml") else { throw XCTSkip("the test config is refused") }
        return c
    }

    func choose(_ loaded: Result<LoadedConfig, ConfigLoadError>, _ stored: Result<[UInt8]?, Errno>) -> DaemonStart {
        DaemonStart.choose(loaded: loaded, stored: stored, storedPath: "/var/lib/altbeacond/last-good.toml",
                           storedDirectory: "/var/lib/altbeacond", configPath: "/etc/altbeacond/config.toml")
    }

    func testAGoodFileWinsOverTheLastGoodCopy() throws {
        let file = try parsed(Self.good.replacingOccurrences(of: "minor = 2", with: "minor = 9"))
        let s = choose(.success(LoadedConfig(config: file, bytes: [1])), .success(Array(Self.good.utf8)))
        XCTAssertEqual(s.config?.beacon.minor, 9)
        XCTAssertNil(s.refusal)
        XCTAssertNil(s.exitCode)
        XCTAssertEqual(s.storedUsable, Array(Self.good.utf8), "the store starts from the copy it has")
        XCTAssertTrue(s.log.isEmpty)
    }

    func testARefusedFileFallsBackToTheLastGoodCopySaidTwice() throws {
        let s = choose(.failure(Self.refused), .success(Array(Self.good.utf8)))
        XCTAssertEqual(s.config?.beacon.minor, 2, "the last good beacon on air")
        XCTAssertEqual(s.refusal, "/etc/altbeacond/config.toml:3:9: major must be between 0 and 65535, found 70000", "its first line")
        XCTAssertNil(s.exitCode)
        XCTAssertEqual(s.log.map(\.0), [.error, .notice])
        XCTAssertTrue(s.log[1].1.hasPrefix("putting the last good config on air instead (/var/lib/altbeacond/last-good.toml)"))
    }

    func testARefusedFileWithNothingToFallBackOnExitsWithItsWords() {
        let none = choose(.failure(Self.refused), .success(nil))
        XCTAssertNil(none.config)
        XCTAssertEqual(none.exitCode, 78)
        XCTAssertEqual(none.standardError, Self.refused.message + "\n")
        XCTAssertEqual(none.log.map(\.1), ["no last good config in /var/lib/altbeacond to fall back on"])
        // a stored copy that no longer parses is ignored, said, and not kept
        let broken = choose(.failure(Self.refused), .success(Array("[beacon]\nuuid = 1\n".utf8)))
        XCTAssertNil(broken.config)
        XCTAssertNil(broken.storedUsable)
        XCTAssertTrue(broken.log.first?.1.hasPrefix("ignoring the stored last good config, which no longer parses: /var/lib/altbeacond/last-good.toml:2:") ?? false,
                      "\(broken.log)")
        // an unreadable store is said and treated as absent
        let unreadable = choose(.failure(Self.refused), .failure(.accessDenied))
        XCTAssertEqual(unreadable.log.first?.0, .warning)
        XCTAssertEqual(unreadable.exitCode, 78)
    }

    func testExitStatusesAndTheirWords() {
        XCTAssertEqual(ExitCode.socketFailure(.accessDenied).code, 77)
        XCTAssertEqual(ExitCode.socketFailure(.notPermitted).code, 77)
        let noBluetooth = ExitCode.socketFailure(.addressFamilyNotSupported)
        XCTAssertEqual(noBluetooth.code, 69)
        XCTAssertEqual(noBluetooth.message, "altbeacond: this kernel has no Bluetooth support (AF_BLUETOOTH): load the bluetooth module or enable CONFIG_BT")
        XCTAssertEqual(ExitCode.socketFailure(.noDevice).code, 69)
        XCTAssertTrue(ExitCode.missingCapabilities(["CAP_NET_RAW", "CAP_NET_ADMIN"], for: "the beacon")
            .hasPrefix("altbeacond: permission denied: missing CAP_NET_RAW and CAP_NET_ADMIN; the beacon needs"))
        XCTAssertEqual([ExitCode.ok, ExitCode.usage, ExitCode.unavailable, ExitCode.software, ExitCode.restartAsked, ExitCode.permission,
                        ExitCode.config], [0, 64, 69, 70, 75, 77, 78], "SPEC §1")
    }

    /// The root-side updater reads `control` from this report (update-lib.sh, monitor_control):
    /// `sed -n 's/^  control: \([a-z]*\).*/\1/p'`.
    func testMonitorCheckReportSaysControlAsRootReadsIt() throws {
        let text = """
            [monitor]
            adapter = "hci1"
            [expect.lobby]
            type = "altbeacon"
            uuid = "2f234454-cf6d-4a0f-adf2-f4911ba9ffa6"
            major = 1
            minor = 2
            [mqtt]
            host = "10.0.2.2"
            port = 8883
            tls = true
            ca_file = "/etc/altbeacond/mqtt-ca.pem"
            server_name = "broker.test"
            username = "altbeacond"
            password_file = "/etc/altbeacond/mqtt-password"
            control = "fleet"
            """
        guard case .success(let c) = MonitorConfigFile.parse(Array(text.utf8), path: "m.toml") else { return XCTFail("refused") }
        XCTAssertEqual(MonitorCheckReport.render(c, path: "m.toml"), """
            m.toml: a valid monitor config
              adapter hci1, expecting lobby
              MQTT: 10.0.2.2:8883 over TLS (CA /etc/altbeacond/mqtt-ca.pem, the certificate of broker.test)
              control: fleet: changes from afar on altbeacond/<node>/beacon/set/+ and altbeacond/all/beacon/set/+

            """)
        let off = text.replacingOccurrences(of: "control = \"fleet\"", with: "control = \"off\"")
        guard case .success(let o) = MonitorConfigFile.parse(Array(off.utf8), path: "m.toml") else { return XCTFail("refused") }
        XCTAssertFalse(MonitorCheckReport.render(o, path: "m.toml").contains("control:"), "no line: root reads off")
    }

    func testFirstLineIsByBytes() {
        XCTAssertEqual(firstLine("a:1:2: x\n  y\n  ^"), "a:1:2: x")
        XCTAssertEqual(firstLine("one"), "one")
        XCTAssertEqual(firstLine("\nsecond"), "")
    }

    func testARefusedEditIsSaidOnce() {
        XCTAssertTrue(RefusedEditRule.shouldSay("c.toml:1:1: x", shownNow: nil))
        XCTAssertFalse(RefusedEditRule.shouldSay("c.toml:1:1: x", shownNow: "c.toml:1:1: x"), "the same refusal again")
        XCTAssertTrue(RefusedEditRule.shouldSay("c.toml:2:1: y", shownNow: "c.toml:1:1: x"), "another one")
        XCTAssertTrue(RefusedEditRule.shouldSay("e\u{301}", shownNow: "\u{e9}"), "bytes, not canonical equivalence")
    }
}
