import BeaconKit
import Glibc
import XCTest
@testable import BeaconLinux

/// Issue 39: the monitor's end of firmware updates against real files: what the card can do,
/// and the request handed to the updater.
final class FirmwareUpdateInputTests: XCTestCase {
    final class Lines: @unchecked Sendable { var all: [String] = [] }
    let lines = Lines()
    var dir = ""
    var paths: FirmwareUpdatePaths { FirmwareUpdatePaths(directory: dir + "/update", imageMarker: dir + "/altbeacon-image") }
    let settings = MQTTSettings(host: "broker", username: "pi", passwordFile: "/p", control: .beacon)
    static let sha = String(repeating: "0123456789abcdef", count: 4)
    static let release = "{\"version\":\"1.3.0\",\"url\":\"https://host/altbeacond-1.3.0.raucb\",\"size\":123456,\"sha256\":\"\(sha)\"}"

    override func setUp() {
        var template = Array("/tmp/altbeacond-update-XXXXXX".utf8CString)
        dir = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)) }
    }

    override func tearDown() {
        for name in entries(dir + "/update") { _ = unlink(dir + "/update/" + name) }
        _ = rmdir(dir + "/update")
        _ = unlink(dir + "/altbeacon-image")
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

    func write(_ path: String, _ text: String) {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        XCTAssertGreaterThanOrEqual(fd, 0, path)
        XCTAssertEqual(text.utf8.count, Array(text.utf8).withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) })
        close(fd)
    }

    func input() -> FirmwareUpdateInput {
        let lines = lines
        return FirmwareUpdateInput(paths: paths, node: "pi", settings: settings, version: "1.2.0",
                                   log: Logger(journal: false, threshold: .info, sink: { lines.all.append($0) }))
    }

    func message(_ topic: String, _ payload: String, retain: Bool = false) throws -> MQTTPublish {
        try MQTTPublish(topic: topic, payload: Array(payload.utf8), retain: retain)
    }

    func testWhatTheCardIsFromItsFiles() {
        XCTAssertEqual(input().read(nowS: 0).capability, .package, "neither file: a package install")
        write(dir + "/altbeacon-image", "")
        XCTAssertEqual(input().read(nowS: 0).capability, .needsReflash, "an image without the updater")
        XCTAssertEqual(mkdir(dir + "/update", 0o770), 0)
        write(paths.stateFile, "installed_version=1.2.0\nslot=B\nphase=idle\n")
        let i = input()
        XCTAssertEqual(i.read(nowS: 0).capability, .ab(UpdaterState(installedVersion: "1.2.0", slot: "B", phaseWord: "idle")))
        write(paths.stateFile, "installed_version=1.2.0\nslot=B\nphase=installing\nprogress=7\n")
        XCTAssertEqual(i.read(nowS: 0).updater?.progress, 7, "read again each time")
    }

    func testInstallWritesTheRequestWhole() throws {
        XCTAssertEqual(mkdir(dir + "/update", 0o770), 0)
        write(paths.stateFile, "installed_version=1.2.0\nslot=A\nphase=idle\noutcome=none\n")
        let i = input()
        i.received(try message("altbeacond/fleet/release", Self.release, retain: true), nowS: 1_764_244_000)
        i.received(try message("altbeacond/pi/update/set", "install"), nowS: 1_764_244_001)
        XCTAssertEqual(entries(dir + "/update"), ["request", "state"], "no temporary file left")
        let bytes = try readFile(paths.requestFile)
        XCTAssertEqual(String(decoding: bytes, as: UTF8.self),
                       "version=1.3.0\nurl=https://host/altbeacond-1.3.0.raucb\n"
                       + "origin=mqtt:homeassistant\ntime=1764244001\n")
        XCTAssertEqual(lines.all.last, "altbeacond: notice: update: asked the updater for 1.3.0 from https://host/altbeacond-1.3.0.raucb "
                       + "(mqtt:homeassistant) in \(paths.requestFile)\n")
        XCTAssertEqual(i.model.outcomeText, "asked the updater for 1.3.0 (Home Assistant)")
        let before = lines.all.count
        i.received(try message("altbeacond/pi/update/set", "install"), nowS: 1_764_244_002)
        i.received(try message("altbeacond/pi/update/set", "install"), nowS: 1_764_244_003)
        XCTAssertEqual(Array(lines.all[before...]), ["altbeacond: notice: update: 1.3.0 was asked of the updater already; waiting for its outcome\n"], "said once")
    }

    /// The update gate keeps a new slot with `[mqtt]` only once the monitor reached its broker.
    func testTheBrokerSessionIsToldToTheGateOnAnABCardOnly() throws {
        let plain = input()
        plain.connection(up: true)
        XCTAssertEqual(entries(dir), [], "a package install: nothing written")
        XCTAssertEqual(mkdir(dir + "/update", 0o770), 0)
        write(paths.stateFile, "installed_version=1.2.0\nslot=B\nphase=trial\n")
        let i = input()
        i.connection(up: true)
        XCTAssertEqual(String(decoding: try readFile(paths.monitorFile), as: UTF8.self), "connected=1\n")
        write(paths.monitorFile, "changed by hand\n")
        i.connection(up: true)
        XCTAssertEqual(String(decoding: try readFile(paths.monitorFile), as: UTF8.self), "changed by hand\n", "written only on a change")
        i.connection(up: false)
        XCTAssertEqual(String(decoding: try readFile(paths.monitorFile), as: UTF8.self), "connected=0\n")
        XCTAssertEqual(entries(dir + "/update"), ["monitor", "state"], "no temporary file left")
    }

    /// The monitor connected before the updater wrote its first state (the gate starts later):
    /// the gate is told once the card turns out to be an A/B one.
    func testTheSessionIsToldWhenTheUpdaterAppearsLater() throws {
        XCTAssertEqual(mkdir(dir + "/update", 0o770), 0)
        let i = input()
        i.connection(up: true)
        XCTAssertEqual(entries(dir + "/update"), [], "no state file yet: not an A/B card as far as it knows")
        write(paths.stateFile, "installed_version=1.2.0\nslot=A\nphase=idle\n")
        _ = i.read(nowS: 0)
        XCTAssertEqual(String(decoding: try readFile(paths.monitorFile), as: UTF8.self), "connected=1\n")
    }

    func testARefusalIsSaidOnceAndShown() throws {
        let i = input()
        for s in [Int64(10), 11] { i.received(try message("altbeacond/pi/update/set", "install"), nowS: s) }
        XCTAssertEqual(lines.all, ["altbeacond: warning: update refused: an update: this card is a package install, updated with apt (sudo apt upgrade)\n"])
        XCTAssertEqual(i.model.outcomeText, "refused by the monitor: an update: this card is a package install, updated with apt (sudo apt upgrade)")
    }

    /// `request` cannot be replaced (a directory there, which stops root too): nothing asked, and said.
    func testARequestThatCannotBeWrittenIsTheOutcome() throws {
        XCTAssertEqual(mkdir(dir + "/update", 0o770), 0)
        write(paths.stateFile, "installed_version=1.2.0\nphase=idle\n")
        XCTAssertEqual(mkdir(paths.requestFile, 0o700), 0)
        defer { _ = rmdir(paths.requestFile) }
        let i = input()
        i.received(try message("altbeacond/fleet/release", Self.release, retain: true), nowS: 1)
        i.received(try message("altbeacond/pi/update/set", "install"), nowS: 2)
        XCTAssertEqual(i.model.outcomeText, "not asked: cannot hand 1.3.0 to the updater (\(paths.requestFile): Is a directory)")
        XCTAssertEqual(lines.all, ["altbeacond: warning: update: cannot ask the updater for 1.3.0: \(paths.requestFile) (Is a directory)\n"])
        XCTAssertEqual(entries(dir + "/update"), ["request", "state"], "the temporary file removed")
        i.received(try message("altbeacond/pi/update/set", "install"), nowS: 3)
        XCTAssertEqual(lines.all.count, 2, "tried again: not asked before")
    }
}
