import BeaconKit
import Glibc
import XCTest
@testable import BeaconLinux

/// Issue 32: the monitor's request files for the beacon daemon, against a real directory.
final class RequestWriterTests: XCTestCase {
    final class Lines: @unchecked Sendable { var all: [String] = [] }
    var dir = ""

    override func setUp() {
        var template = Array("/tmp/altbeacond-requests-XXXXXX".utf8CString)
        dir = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)) }
    }

    override func tearDown() {
        for name in entries(dir + "/requests") { _ = unlink(dir + "/requests/" + name) }
        _ = rmdir(dir + "/requests")
        _ = rmdir(dir)
    }

    func entries(_ path: String) -> [String] {
        guard let d = opendir(path) else { return [] }
        defer { closedir(d) }
        var out: [String] = []
        while let e = readdir(d) {
            let name = withUnsafeBytes(of: e.pointee.d_name) { String(cString: $0.bindMemory(to: CChar.self).baseAddress!) }
            if name != "." && name != ".." { out.append(name) }
        }
        return out.sorted()
    }

    func testTheDirectoryBesideTheStatusFile() {
        XCTAssertEqual(RequestWriter(statusPath: "/run/altbeacond/status.json").directory, "/run/altbeacond/requests")
        XCTAssertEqual(RequestWriter(statusPath: "/status.json").directory, "/requests")
        XCTAssertEqual(RequestWriter(statusPath: "status.json").directory, "./requests")
    }

    func testWholeFilesNamedInOrderPrivate() throws {
        XCTAssertEqual(mkdir(dir + "/requests", 0o700), 0)
        let w = RequestWriter(statusPath: dir + "/status.json")
        let first = try w.write(RemoteRequest(.set(.power, "-40"), origin: "mqtt altbeacond/all/beacon/set/power"))
        let second = try w.write(RemoteRequest(.identify))
        XCTAssertTrue(first.hasSuffix("-000001.request") && second.hasSuffix("-000002.request"), "\(first) \(second)")
        XCTAssertEqual(first.utf8.count, 12 + 1 + 6 + 8, "zero-padded: the daemon takes them in byte order")
        XCTAssertEqual(entries(dir + "/requests"), [first, second].sorted(), "no temporary file left")
        var st = stat()
        XCTAssertEqual(stat(dir + "/requests/" + first, &st), 0)
        XCTAssertEqual(st.st_mode & 0o777, 0o600)
        // The daemon's inbox takes them whole, in the order made.
        let inbox = try RequestDirectory(path: dir + "/requests")
        let taken = inbox.take().requests
        XCTAssertEqual(taken.map(\.name), [first, second])
        XCTAssertEqual(try taken.map { try RemoteRequest.decode($0.bytes.get()).get() },
                       [RemoteRequest(.set(.power, "-40"), origin: "mqtt altbeacond/all/beacon/set/power"), RemoteRequest(.identify)])
    }

    func testNoDirectoryIsSaidOnceNeverACrash() throws {
        let w = RequestWriter(statusPath: dir + "/status.json")
        XCTAssertThrowsError(try w.write(RemoteRequest(.restart))) { XCTAssertEqual($0 as? Errno, .noEntry) }
        let said = Lines()
        let log = Logger(journal: false, threshold: .info, sink: { said.all.append($0) })
        let input = LocalBeaconControlInput(control: LocalBeaconControl(node: "pi", mode: .beacon), statusPath: dir + "/status.json", log: log)
        let message = try MQTTPublish(topic: "altbeacond/pi/beacon/set/power", payload: Array("-40".utf8))
        input.received(message)
        input.received(message)
        var lines: [String] { said.all }
        XCTAssertEqual(lines.filter { $0.contains("the beacon daemon takes no changes: no \(dir)/requests; is altbeacond running?") }.count, 1, "\(lines)")
        XCTAssertEqual(mkdir(dir + "/requests", 0o700), 0)
        input.received(message)
        XCTAssertTrue(lines.last?.contains("\"set power -40\" from altbeacond/pi/beacon/set/power handed to the beacon daemon") ?? false, "\(lines)")
        input.received(try MQTTPublish(topic: "altbeacond/pi/beacon/set/identify", payload: Array("PRESS".utf8), retain: true))
        XCTAssertTrue(lines.last?.contains("ignored") ?? false, "\(lines)")
        XCTAssertEqual(entries(dir + "/requests").count, 1)
    }

    /// Issue 38: while the daemon takes nothing, requests wait in /run only up to a bound.
    func testPendingRequestsAreBounded() throws {
        XCTAssertEqual(mkdir(dir + "/requests", 0o700), 0)
        let w = RequestWriter(statusPath: dir + "/status.json")
        for _ in 0..<RemoteChangeLimits.maximumPending { try w.write(RemoteRequest(.set(.power, "-40"))) }
        XCTAssertThrowsError(try w.write(RemoteRequest(.set(.power, "-41")))) { XCTAssertEqual($0 as? Errno, .noSpace) }
        XCTAssertEqual(RequestDirectory.pendingNames(in: dir + "/requests").count, RemoteChangeLimits.maximumPending)
        // Taken by the daemon: the next one goes through.
        let inbox = try RequestDirectory(path: dir + "/requests")
        while inbox.take().more {}
        XCTAssertNoThrow(try w.write(RemoteRequest(.set(.power, "-42"))))
    }
}
