import BeaconKit
import Glibc
import XCTest
@testable import BeaconLinux

/// `[mqtt] password_file` read as the monitor reads it: judged on the open descriptor first.
final class PasswordFileTests: XCTestCase {
    var path = ""

    override func setUp() {
        var template = Array("/tmp/altbeacond-password-XXXXXX".utf8CString)
        path = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)) } + "/mqtt-password"
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        _ = writeAll(fd, "s3cret\nsecond line\n")
        close(fd)
    }

    override func tearDown() {
        unlink(path)
        rmdir(String(path.dropLast("/mqtt-password".count)))
    }

    func testTheFirstLineOfAPrivateFile() {
        guard case .success(let p) = readPasswordFile(path) else { return XCTFail("refused") }
        XCTAssertEqual(p, Array("s3cret".utf8))
    }

    func testAFileEveryUserCanReadIsRefusedPlainly() {
        chmod(path, 0o644)
        guard case .failure(let e) = readPasswordFile(path) else { return XCTFail("accepted") }
        XCTAssertTrue(e.refused)
        XCTAssertEqual(e.text, "the MQTT password file \(path) is open to every user (mode 0644): refused (chmod o-rwx \(path))")
    }

    func testAMissingFileIsNotARefusal() {
        unlink(path)
        guard case .failure(let e) = readPasswordFile(path) else { return XCTFail("read") }
        XCTAssertFalse(e.refused, "tried again at the next connection, not fatal at start")
        XCTAssertTrue(e.text.hasPrefix("cannot read the MQTT password file \(path)"), e.text)
    }
}
