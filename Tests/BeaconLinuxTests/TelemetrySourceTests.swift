import BeaconKit
import Glibc
import XCTest
@testable import BeaconLinux

/// The thermal zone as TLM and the monitor's local machine read it.
final class TelemetrySourceTests: XCTestCase {
    func reading(_ text: String?) -> TelemetrySource {
        let path = "/tmp/altbeacond-thermal-\(getpid())"
        unlink(path)
        if let text {
            let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
            XCTAssertEqual(Array(text.utf8).withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }, text.utf8.count)
            close(fd)
        }
        addTeardownBlock { unlink(path) }
        return TelemetrySource(thermalPath: path)
    }

    func testTheZoneIsReadInMillidegrees() {
        XCTAssertEqual(reading("48312\n").millidegrees(), 48312)
        XCTAssertEqual(reading("-1250\n").millidegrees(), -1250, "below zero")
        XCTAssertEqual(reading("48312\n").temperature(), Telemetry.fixed88(millidegrees: 48312), "TLM's 8.8 of the same reading")
    }

    func testNoReadingIsNil() {
        XCTAssertNil(reading(nil).millidegrees(), "no thermal zone (a VM)")
        XCTAssertNil(reading("").millidegrees())
        XCTAssertNil(reading("-\n").millidegrees())
        XCTAssertNil(reading("n/a\n").temperature(), "TLM says not supported")
    }
}
