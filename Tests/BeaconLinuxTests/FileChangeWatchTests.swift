import BeaconKit
import Glibc
import XCTest
@testable import BeaconLinux

/// A file another process rewrites by a rename, watched on the loop: each change told once,
/// other files not, the directory's late arrival (or return) taken at `rewatch`.
final class FileChangeWatchTests: XCTestCase {
    var dir = ""
    var path: String { dir + "/daemon/status.json" }
    var told = 0

    override func setUp() {
        var template = Array("/tmp/altbeacond-filewatch-XXXXXX".utf8CString)
        dir = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)) }
    }

    override func tearDown() {
        for f in ["status.json", "other", ".status.json.tmp"] { unlink(dir + "/daemon/" + f) }
        rmdir(dir + "/daemon"); rmdir(dir)
    }

    /// As the beacon daemon writes it: a temporary file renamed over it.
    func replace(_ text: String) {
        let tmp = dir + "/daemon/.status.json.tmp"
        let fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        XCTAssertEqual(Array(text.utf8).withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }, text.utf8.count)
        close(fd)
        XCTAssertEqual(rename(tmp, path), 0)
    }

    func started(_ loop: EventLoop) -> FileChangeWatch {
        let w = FileChangeWatch(path: path, loop: loop)
        w.start { [weak self] in self?.told += 1 }
        return w
    }

    func testEachRenameOverTheFileIsToldOnceOtherFilesAreNot() {
        mkdir(dir + "/daemon", 0o755)
        let loop = EventLoop.virtual()
        let w = started(loop)
        XCTAssertTrue(w.isWatching)
        replace("{}")
        XCTAssertTrue(loop.run(atMostMs: 1000) { told == 1 })
        loop.run(forMs: 1000)
        XCTAssertEqual(told, 1, "the temporary file's own events are not the file's")
        let other = open(dir + "/daemon/other", O_WRONLY | O_CREAT, 0o644)
        close(other)
        loop.run(forMs: 1000)
        XCTAssertEqual(told, 1, "another file in the directory")
        replace("{\"a\":1}"); replace("{\"a\":2}")
        loop.run(forMs: 1000)
        XCTAssertEqual(told, 2, "two changes before the loop looked: one")
    }

    /// The daemon starts after the monitor: its directory appears later.
    func testADirectoryMadeLaterIsWatchedFromTheNextRewatch() {
        let loop = EventLoop.virtual()
        let w = started(loop)
        XCTAssertFalse(w.isWatching)
        mkdir(dir + "/daemon", 0o755)
        replace("{}")
        loop.run(forMs: 1000)
        XCTAssertEqual(told, 0, "not watched yet")
        w.rewatch()
        XCTAssertTrue(w.isWatching)
        replace("{\"a\":1}")
        XCTAssertTrue(loop.run(atMostMs: 1000) { told == 1 })
    }

    /// The directory removed (the daemon's runtime directory goes with it): told, and watched
    /// again once it is back.
    func testADirectoryRemovedIsToldAndWatchedAgainWhenItIsBack() {
        mkdir(dir + "/daemon", 0o755)
        let loop = EventLoop.virtual()
        let w = started(loop)
        rmdir(dir + "/daemon")
        XCTAssertTrue(loop.run(atMostMs: 1000) { told == 1 })
        XCTAssertFalse(w.isWatching)
        w.rewatch()
        XCTAssertFalse(w.isWatching, "not back yet")
        mkdir(dir + "/daemon", 0o755)
        w.rewatch()
        XCTAssertTrue(w.isWatching)
        replace("{}")
        XCTAssertTrue(loop.run(atMostMs: 1000) { told == 2 })
    }

    /// The directory moved away and made again before the loop looked: told, and the new one
    /// watched at once.
    func testADirectoryReplacedIsWatchedAgainAtOnce() {
        mkdir(dir + "/daemon", 0o755)
        defer { rmdir(dir + "/daemon.old") }
        let loop = EventLoop.virtual()
        let w = started(loop)
        XCTAssertEqual(rename(dir + "/daemon", dir + "/daemon.old"), 0)
        mkdir(dir + "/daemon", 0o755)
        XCTAssertTrue(loop.run(atMostMs: 1000) { told == 1 })
        XCTAssertTrue(w.isWatching)
        replace("{}")
        XCTAssertTrue(loop.run(atMostMs: 1000) { told == 2 }, "the new directory, without a rewatch")
    }

    func testNothingIsToldAfterStop() {
        mkdir(dir + "/daemon", 0o755)
        let loop = EventLoop.virtual()
        let w = started(loop)
        w.stop()
        XCTAssertFalse(w.isWatching)
        replace("{}")
        loop.run(forMs: 1000)
        XCTAssertEqual(told, 0)
    }
}
