import BeaconKit
import Glibc
import XCTest
@testable import BeaconLinux

/// The state file against a real temporary directory.
final class StateFileTests: XCTestCase {
    var dir = ""

    override func setUp() {
        var template = Array("/tmp/altbeacond-state-XXXXXX".utf8CString)
        dir = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)) }
    }

    override func tearDown() {
        _ = chmod(dir, 0o700)
        for name in names() { _ = unlink(dir + "/" + name) }
        _ = rmdir(dir)
    }

    func testReadWriteReplace() throws {
        let f = StateFile(directory: dir, name: "last-good.toml")
        XCTAssertEqual(f.path, dir + "/last-good.toml")
        XCTAssertNil(try f.read())
        try f.write(Array("first\n".utf8))
        XCTAssertEqual(try f.read(), Array("first\n".utf8))
        try f.write(Array("second, longer\n".utf8))
        XCTAssertEqual(try f.read(), Array("second, longer\n".utf8))
        try f.write([])
        XCTAssertEqual(try f.read(), [])
        // No temp file is left behind, and the file is private (0600).
        XCTAssertEqual(names(), ["last-good.toml"])
        var st = stat()
        XCTAssertEqual(stat(f.path, &st), 0)
        XCTAssertEqual(st.st_mode & 0o777, 0o600)
    }

    /// The directory's entries but . and .., sorted.
    func names(_ path: String? = nil) -> [String] {
        guard let d = opendir(path ?? dir) else { return [] }
        defer { closedir(d) }
        var out: [String] = []
        while let e = readdir(d) {
            let n = withUnsafeBytes(of: e.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if n != "." && n != ".." { out.append(n) }
        }
        return out.sorted()
    }

    /// The one atomic writer, as the status file and the requests use it: the mode whatever the
    /// umask, a symlink at the path replaced (never written through), nothing left on failure.
    func testReplaceFileForRunningFiles() throws {
        let old = umask(0o077)
        defer { umask(old) }
        let path = dir + "/status.json"
        try replaceFile(path, with: Array("{}\n".utf8), mode: 0o644, durability: .running)
        var st = stat()
        XCTAssertEqual(stat(path, &st), 0)
        XCTAssertEqual(st.st_mode & 0o777, 0o644)
        XCTAssertEqual(try readFile(path, limit: 100), Array("{}\n".utf8))
        // a symlink planted at the path: replaced by the file, its target untouched
        let target = dir + "/target"
        try replaceFile(target, with: [7], mode: 0o600, durability: .powerCut)
        XCTAssertEqual(unlink(path), 0)
        XCTAssertEqual(symlink(target, path), 0)
        try replaceFile(path, with: [1, 2], mode: 0o644, durability: .running)
        XCTAssertEqual(try readFile(target, limit: 10), [7])
        XCTAssertEqual(lstat(path, &st), 0)
        XCTAssertEqual(st.st_mode & S_IFMT, S_IFREG)
        XCTAssertEqual(names(), ["status.json", "target"], "no temporary file left")
        // a directory that is not there: the error, nothing made
        XCTAssertThrowsError(try replaceFile(dir + "/none/x", with: [1], mode: 0o644, durability: .running)) {
            XCTAssertEqual($0 as? Errno, .noEntry)
        }
        XCTAssertEqual(names(), ["status.json", "target"])
    }

    func testAnUnwritableDirectoryThrowsAndKeepsTheOldCopy() throws {
        let f = StateFile(directory: dir, name: "last-good.toml")
        try f.write(Array("kept\n".utf8))
        XCTAssertEqual(chmod(dir, 0o500), 0)
        defer { _ = chmod(dir, 0o700) }
        if geteuid() == 0 { throw XCTSkip("root writes anywhere") }
        XCTAssertThrowsError(try f.write(Array("new\n".utf8)))
        XCTAssertEqual(try f.read(), Array("kept\n".utf8))
    }

    func testADirectoryThatIsAFileThrowsEvenForRoot() throws {
        let blocker = StateFile(directory: dir, name: "last-good.toml")
        try blocker.write(Array("x".utf8))
        let f = StateFile(directory: blocker.path, name: "inner.toml")
        XCTAssertThrowsError(try f.write([1])) { XCTAssertEqual($0 as? Errno, Errno(ENOTDIR)) }
    }

    func testAMissingDirectoryIsCreatedButNotItsParents() throws {
        let f = StateFile(directory: dir + "/sub", name: "last-good.toml")
        XCTAssertNil(try f.read())
        try f.write([1, 2, 3])
        XCTAssertEqual(try f.read(), [1, 2, 3])
        var st = stat()
        XCTAssertEqual(stat(dir + "/sub", &st), 0)
        XCTAssertEqual(st.st_mode & 0o777, 0o700)
        XCTAssertEqual(unlink(f.path), 0)
        XCTAssertEqual(rmdir(dir + "/sub"), 0)
        let deep = StateFile(directory: dir + "/no/such", name: "last-good.toml")
        XCTAssertThrowsError(try deep.write([1])) { XCTAssertEqual($0 as? Errno, .noEntry) }
    }

    /// The last good copy is written off the loop: the loop turn that asks for it returns at once,
    /// the result comes back on a later turn, and a newer config waiting replaces an older one.
    func testLastGoodStoreWritesOnAHelperThreadNewestWins() throws {
        let loop = EventLoop()
        let f = StateFile(directory: dir, name: "last-good.toml")
        let store = LastGoodStore(file: f, stored: nil, loop: loop, log: Logger(journal: false, threshold: .error, sink: { _ in }))
        store.store(Array("one\n".utf8))
        XCTAssertTrue(store.isWriting, "the write runs in the background")
        store.store(Array("two\n".utf8))
        store.store(Array("three\n".utf8))
        let guardTimer = loop.makeTimer()
        guardTimer.schedule(afterMs: 5000) { loop.stop() }
        while store.isWriting && !loop.isStopped { loop.runOnce(maxWaitMs: 100) }
        XCTAssertEqual(store.stored, Array("three\n".utf8))
        XCTAssertEqual(try f.read(), Array("three\n".utf8))
        store.store(Array("three\n".utf8))
        XCTAssertFalse(store.isWriting, "the same bytes again are not written")
    }
}
