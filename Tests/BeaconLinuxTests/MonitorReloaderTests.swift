import BeaconKit
import Glibc
import XCTest
@testable import BeaconLinux

/// monitor.toml's reload (issue 40: out of the executable) against a real file: a refused edit
/// keeps the running configuration and is said once; an accepted one reaches the session; what
/// only a restart changes is said and waits.
final class MonitorReloaderTests: ScriptedTestCase {
    final class IdleScan: MonitorScan {
        var family: ScanFamily?
        func start(_ done: @escaping (ScanFailure?) -> Void) {}
        func pause(_ done: @escaping (HCICommandFailure?) -> Void) {}
        func resume(_ done: @escaping (ScanFailure?) -> Void) {}
        func stop(timeoutMs: Int64, _ done: @escaping (HCICommandFailure?) -> Void) {}
        func close() {}
    }

    var dir = ""
    var path: String { dir + "/monitor.toml" }

    static let lobby = """
        [expect.lobby]
        type = "altbeacon"
        uuid = "2f234454-cf6d-4a0f-adf2-f4911ba9ffa6"
        major = 1
        minor = 2

        """

    override func setUp() {
        super.setUp()
        var template = Array("/tmp/altbeacond-monitor-XXXXXX".utf8CString)
        dir = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)) }
    }

    override func tearDown() {
        _ = system("rm -rf '\(dir)'")
        super.tearDown()
    }

    func put(_ text: String) {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        _ = Array(text.utf8).withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
    }

    func reloader(_ text: String) throws -> (MonitorReloader, MonitorSession) {
        put(text)
        let config = try MonitorConfigFile.parse(readFile(path, limit: 1 << 16), path: path).get()
        let session = MonitorSession(config: config, once: false, loop: loop, log: log, outputs: []) { _ in IdleScan() }
        keep.append(session)
        let r = MonitorReloader(configPath: path, config: config, session: session, mqtt: nil, metrics: nil, loop: loop, log: log,
                                hostName: { "hall-pi" })
        keep.append(r)
        return (r, session)
    }

    func testARefusedEditKeepsTheRunningConfigAndIsSaidOnce() throws {
        let (r, session) = try reloader("[monitor]\nsilent_after_s = 30\n" + Self.lobby)
        put("[monitor]\nsilent_after_s = \"soon\"\n" + Self.lobby)
        r.reload()
        r.reload()
        let refused = logLines.lines.filter { $0.contains("monitor config edit refused, keeping the running one: \(path):2:") }
        XCTAssertEqual(refused.count, 1, "said once while the file says the same: \(logLines.lines)")
        XCTAssertEqual(session.config.silentAfterS, 30)
        put("[monitor]\nsilent_after_s = 90\n" + Self.lobby)
        r.reload()
        XCTAssertTrue(logLines.lines.contains { $0.contains("monitor config accepted again: \(path)") }, "\(logLines.lines)")
        XCTAssertTrue(logLines.lines.contains { $0.contains("monitor config applied: \(path): node hall-pi; expecting lobby; silent after 90 s") },
                      "\(logLines.lines)")
        XCTAssertEqual(session.config.silentAfterS, 90)
    }

    func testWhatOnlyARestartChangesIsSaidAndWaits() throws {
        let (r, session) = try reloader("[monitor]\nadapter = \"hci0\"\n" + Self.lobby)
        put("[monitor]\nadapter = \"hci1\"\n" + Self.lobby)
        r.reload()
        XCTAssertTrue(logLines.lines.contains { $0.contains("applied at the next restart") }, "\(logLines.lines)")
        XCTAssertEqual(session.config.adapter, "hci0")
        let said = logLines.lines.count
        r.reload()
        XCTAssertEqual(logLines.lines.count, said, "said once")
    }
}
