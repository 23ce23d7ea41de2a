import BeaconKit
import Glibc
import XCTest
@testable import BeaconLinux

/// The requests directory (issue 32) against a real temporary directory and inotify.
final class RequestDirectoryTests: XCTestCase {
    var dir = ""

    override func setUp() {
        var template = Array("/tmp/altbeacond-requests-XXXXXX".utf8CString)
        dir = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)) }
    }

    override func tearDown() {
        _ = system("rm -rf '\(dir)'")
    }

    private func put(_ name: String, _ text: String) {
        let fd = open(dir + "/requests/" + name, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        XCTAssertGreaterThanOrEqual(fd, 0)
        _ = Array(text.utf8).withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
    }

    private func ready(_ fd: FileDescriptor) -> Bool {
        var p = pollfd(fd: fd.rawValue, events: Int16(POLLIN), revents: 0)
        return poll(&p, 1, 0) == 1
    }

    func testMadeWatchedAndTakenInOrderOnce() throws {
        let r = try RequestDirectory(path: dir + "/requests")
        var st = stat()
        XCTAssertEqual(stat(r.path, &st), 0)
        XCTAssertEqual(st.st_mode & 0o777, 0o700, "only the service's user may leave requests")
        XCTAssertFalse(ready(r.fd))
        put("0000000200-1.request", "set power -40\n")
        put("0000000100-2.request", "identify\n")
        put(".tmp-1-3", "set major 1\n")   // still being written: not a request yet
        XCTAssertTrue(ready(r.fd), "inotify saw the requests")
        r.drain()
        XCTAssertFalse(ready(r.fd))
        let taken = r.take().requests
        XCTAssertEqual(taken.map(\.name), ["0000000100-2.request", "0000000200-1.request"], "oldest first")
        XCTAssertEqual(try taken[0].bytes.get(), Array("identify\n".utf8))
        XCTAssertTrue(r.take().requests.isEmpty, "each request is taken once")
        XCTAssertEqual(access(dir + "/requests/.tmp-1-3", F_OK), 0, "a temporary file is left for its writer")
        // A directory that exists already (a restart) is used as it is.
        _ = try RequestDirectory(path: dir + "/requests")
    }

    func testOversizedAndOddFilesAreRemovedUnread() throws {
        let r = try RequestDirectory(path: dir + "/requests")
        put("1.request", String(repeating: "x", count: RemoteRequest.maximumBytes + 1))
        XCTAssertEqual(symlink("/etc/passwd", dir + "/requests/2.request"), 0)
        let taken = r.take().requests
        XCTAssertEqual(taken.count, 2)
        for t in taken { XCTAssertThrowsError(try t.bytes.get(), t.name) }
        XCTAssertTrue(r.take().requests.isEmpty)
    }

    /// Issue 38: every pending request is taken, in bounded batches (300 published at once left
    /// 258 pending when only 16 were taken per inotify wake-up).
    func testEveryPendingRequestIsTakenInBatches() throws {
        let r = try RequestDirectory(path: dir + "/requests")
        for i in 0..<300 { put(String(1_000_000 + i) + "-1.request", "set power -\(i % 100)\n") }
        var names: [String] = []
        var turns = 0
        while true {
            let (batch, more) = r.take(limit: 128)
            names += batch.map(\.name)
            turns += 1
            if !more { break }
        }
        XCTAssertEqual(names.count, 300)
        XCTAssertEqual(turns, 3)
        XCTAssertEqual(names, names.sorted(), "oldest first across batches")
        XCTAssertTrue(r.pendingNames().isEmpty)
    }
}
