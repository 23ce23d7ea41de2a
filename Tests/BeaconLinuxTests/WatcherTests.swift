import Glibc
import XCTest
@testable import BeaconLinux

/// inotify on the config's directory sees every way editors save.
final class ConfigWatcherTests: XCTestCase {
    var dir = ""
    var path: String { dir + "/config.toml" }

    override func setUp() {
        var template = Array("/tmp/altbeacond-watch-XXXXXX".utf8CString)
        dir = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)) }
        write(path, "a = 1\n")
    }

    override func tearDown() {
        for f in ["config.toml", "other", ".config.toml.swp"] { unlink(dir + "/" + f) }
        rmdir(dir)
    }

    func write(_ p: String, _ s: String) {
        let fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        _ = Array(s.utf8).withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        close(fd)
    }

    /// A config refused because it could not be read: the chmod that fixes it is an edit.
    func testAChmodOfTheFileIsSeen() throws {
        let w = try ConfigWatcher(path: path)
        XCTAssertFalse(w.drain())
        XCTAssertEqual(chmod(path, 0o600), 0)
        XCTAssertTrue(w.drain(), "IN_ATTRIB on the config file")
        XCTAssertEqual(chmod(dir + "/other", 0o600), -1, "no such file: nothing to see")
        XCTAssertFalse(w.drain())
    }

    func testInPlaceRenameAndDeleteAreSeenOtherFilesAreNot() throws {
        let w = try ConfigWatcher(path: path)
        XCTAssertEqual(w.directory, dir)
        XCTAssertEqual(w.fileName, "config.toml")
        XCTAssertFalse(w.drain())
        write(dir + "/other", "x")
        XCTAssertFalse(w.drain(), "another file in the directory")
        write(path, "a = 2\n")
        XCTAssertTrue(w.drain(), "truncate and write")
        write(dir + "/.config.toml.swp", "a = 3\n")
        _ = w.drain()
        rename(dir + "/.config.toml.swp", path)
        XCTAssertTrue(w.drain(), "rename over, as editors save")
        unlink(path)
        XCTAssertTrue(w.drain(), "deleted")
        XCTAssertTrue(w.isWatching)
    }

    func testMissingDirectoryIsNotAnError() throws {
        let w = try ConfigWatcher(path: "/nonexistent-altbeacond/config.toml")
        XCTAssertFalse(w.isWatching)
    }
}

final class CapabilitiesTests: XCTestCase {
    func testEffectiveSetFromProcStatus() {
        let both = Array("Name:\tx\nCapEff:\t0000000000003000\n".utf8)
        XCTAssertEqual(Capabilities.missingForBluetooth(status: both), [])
        let raw = Array("CapEff:\t0000000000002000\n".utf8)
        XCTAssertEqual(Capabilities.missingForBluetooth(status: raw), ["CAP_NET_ADMIN"])
        let none = Array("CapEff:\t0000000000000000\n".utf8)
        XCTAssertEqual(Capabilities.missingForBluetooth(status: none), ["CAP_NET_RAW", "CAP_NET_ADMIN"])
        XCTAssertEqual(Capabilities.missingForBluetooth(status: Array("garbage".utf8)), [], "unknown: let the kernel decide")
    }
}
