import XCTest
@testable import BeaconKit

/// Issue 39: the root-side updater's state file, as the monitor reads it.
final class UpdaterStateTests: XCTestCase {
    func testEveryKeyOfTheContract() {
        let s = UpdaterState.parse(Array("""
            installed_version=1.2.0
            slot=A
            phase=installing
            progress=42
            outcome=rolled-back
            outcome_version=1.3.0
            message=its beacon was not on air within 600 s
            time=1764244000

            """.utf8))
        XCTAssertEqual(s, UpdaterState(installedVersion: "1.2.0", slot: "A", phaseWord: "installing", progress: 42, outcome: .rolledBack,
                                       outcomeVersion: "1.3.0", message: "its beacon was not on air within 600 s", time: 1_764_244_000))
        XCTAssertEqual(s.phase, .installing)
        XCTAssertFalse(s.isIdle)
        XCTAssertEqual(s.outcomeText, "rolled back from 1.3.0: its beacon was not on air within 600 s")
    }

    func testUnknownKeysBadValuesAndAbsentOnesAreSkipped() {
        let s = UpdaterState.parse(Array("future=1\nslot=B\r\nprogress=101\noutcome=exploded\nno equals sign\nmessage=\ntime=soon\nphase=idle=x\n".utf8))
        XCTAssertEqual(s, UpdaterState(slot: "B", phaseWord: "idle=x"), "the value is all after the first =")
        XCTAssertNil(s.phase, "a phase this monitor does not know")
        XCTAssertFalse(s.isIdle, "taken as busy")
        XCTAssertNil(s.outcomeText)
        XCTAssertTrue(UpdaterState.parse([]).isIdle, "no phase: nothing says an update is under way")
        XCTAssertEqual(UpdaterState.parse(Array(repeating: 0x41, count: UpdaterState.maxBytes + 1)), UpdaterState())
    }

    func testTheOutcomeInWords() {
        func text(_ o: UpdaterState.Outcome, _ v: String?, _ m: String?) -> String? {
            UpdaterState(outcome: o, outcomeVersion: v, message: m).outcomeText
        }
        XCTAssertEqual(text(.installed, "1.3.0", nil), "installed 1.3.0")
        XCTAssertEqual(text(.refused, "1.3.0", "signature not valid"), "refused 1.3.0: signature not valid")
        XCTAssertEqual(text(.failed, nil, "download: 404"), "failed: download: 404")
        XCTAssertEqual(text(.rolledBack, nil, ""), "rolled back")
        XCTAssertNil(text(.none, "1.3.0", "x"))
    }

    func testThePaths() {
        XCTAssertEqual(FirmwareUpdatePaths.standard.stateFile, "/run/altbeacon-update/state")
        XCTAssertEqual(FirmwareUpdatePaths.standard.requestFile, "/run/altbeacon-update/request")
        XCTAssertEqual(FirmwareUpdatePaths.standard.imageMarker, "/usr/lib/altbeacon-image")
    }
}
