import BeaconKit
import Glibc
import XCTest
@testable import BeaconLinux

/// What was announced, kept on the state partition across restarts; failures said once per cause.
final class MonitorAnnouncedFileTests: XCTestCase {
    let lines = LogLines()
    var dir = ""
    var state: String { dir + "/state" }

    override func setUp() {
        var template = Array("/tmp/altbeacond-announced-XXXXXX".utf8CString)
        dir = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)) }
    }

    override func tearDown() {
        unlink(state + "/" + MonitorAnnounced.fileName)
        rmdir(state + "/" + MonitorAnnounced.fileName)
        rmdir(state); rmdir(dir)
    }

    func announced(_ directory: String? = nil) -> MonitorAnnouncedFile {
        let lines = lines
        return MonitorAnnouncedFile(file: StateFile(directory: directory ?? state, name: MonitorAnnounced.fileName),
                                    log: Logger(journal: false, threshold: .info, sink: { lines.lines.append($0) }))
    }

    func testWhatIsRememberedIsReadAtTheNextStart() {
        XCTAssertEqual(announced().read(), [], "no file yet: nothing announced before")
        XCTAssertEqual(lines.lines, [], "no file is no failure")
        announced().remember(["altbeacond/pi/status", "homeassistant/sensor/x/config"])
        XCTAssertEqual(announced().read(), ["altbeacond/pi/status", "homeassistant/sensor/x/config"])
        var st = stat()
        XCTAssertEqual(stat(state + "/" + MonitorAnnounced.fileName, &st), 0)
        XCTAssertEqual(st.st_mode & 0o777, 0o600)
        XCTAssertEqual(lines.lines, [])
    }

    func testAFileThatCannotBeReadIsSaidAndIsNothingAnnounced() {
        mkdir(state, 0o700)
        mkdir(state + "/" + MonitorAnnounced.fileName, 0o700)
        XCTAssertEqual(announced().read(), [])
        XCTAssertEqual(lines.count("MQTT: cannot read what was announced before, \(state)/\(MonitorAnnounced.fileName)"), 1,
                       lines.lines.joined())
    }

    /// The same failure is said once; another is said, and the first again after a write worked.
    func testAFailureToKeepItIsSaidOncePerCause() {
        let a = announced(dir + "/var/state")   // made when missing, but not its parent
        let file = dir + "/var/state/" + MonitorAnnounced.fileName
        defer { unlink(file); rmdir(file); rmdir(dir + "/var/state"); rmdir(dir + "/var") }
        a.remember(["t/1"]); a.remember(["t/2"])
        XCTAssertEqual(lines.count("MQTT: cannot keep what was announced in \(file) (\(Errno.noEntry))"), 1, lines.lines.joined())
        mkdir(dir + "/var", 0o755)
        mkdir(dir + "/var/state", 0o700)
        mkdir(file, 0o700)   // a directory where the file goes
        a.remember(["t/1"]); a.remember(["t/2"])
        XCTAssertEqual(lines.count("MQTT: cannot keep what was announced"), 2, "another cause: \(lines.lines.joined())")
        rmdir(file)
        a.remember(["t/3"])
        XCTAssertEqual(announced(dir + "/var/state").read(), ["t/3"])
        XCTAssertEqual(lines.count("MQTT: cannot keep what was announced"), 2)
        unlink(file)
        mkdir(file, 0o700)
        a.remember(["t/4"])
        XCTAssertEqual(lines.count("MQTT: cannot keep what was announced"), 3, "said again after a write worked: \(lines.lines.joined())")
    }
}
