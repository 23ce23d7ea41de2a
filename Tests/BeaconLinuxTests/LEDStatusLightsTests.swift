import BeaconKit
import BeaconLinux
import XCTest

/// The host has no GPIO: these cover what must hold when the LEDs cannot be had.
final class LEDStatusLightsTests: XCTestCase {
    final class Lines: @unchecked Sendable {
        var all: [String] = []
    }

    private func logger(_ lines: Lines) -> Logger {
        Logger(journal: false, threshold: .info, sink: { lines.all.append($0) })
    }

    func testMissingChipIsLoggedOnceAndNeverThrows() {
        let lines = Lines()
        let loop = EventLoop()
        let lights = StatusLights(settings: LEDSettings(chip: "no-such-chip-label", status: .name("GPIO17"),
                                                        fault: .offset(27)),
                                  loop: loop, log: logger(lines))
        for h in [BeaconHealth.starting, .advertising, .advertisingWithRefusedEdit, .adapterFault, .starting] {
            lights.show(h)
        }
        lights.reconfigure(LEDSettings(chip: "no-such-chip-label", status: .name("GPIO17"), fault: .offset(27)))
        XCTAssertEqual(lines.all.count, 1, "\(lines.all)")
        XCTAssertTrue(lines.all[0].contains("no-such-chip-label"), lines.all[0])
        XCTAssertTrue(lines.all[0].contains("GPIO17"), lines.all[0])
        XCTAssertFalse(lights.holdsStatusLine)
        XCTAssertFalse(lights.isBlinking, "no lines, no timer")
        XCTAssertEqual(loop.scheduledTimerCount, 0)
        lights.release()
    }

    func testChangedSettingsAreRetriedAndLoggedAgain() {
        let lines = Lines()
        let loop = EventLoop()
        let lights = StatusLights(settings: LEDSettings(chip: "gpiochip97", status: .offset(17)),
                                  loop: loop, log: logger(lines))
        lights.show(.starting)
        lights.reconfigure(LEDSettings(chip: "/dev/gpiochip98", status: .offset(17)))
        XCTAssertEqual(lines.all.count, 2, "\(lines.all)")
        XCTAssertTrue(lines.all[1].contains("/dev/gpiochip98"), lines.all[1])
        lights.reconfigure(nil)
        XCTAssertEqual(lines.all.count, 2)
        lights.show(.advertising)
        XCTAssertEqual(lights.currentHealth, .advertising)
    }

    /// Every health shows at once, `.starting` included (no deferred anti-flicker step any more),
    /// and without lines nothing blinks, so nothing costs a timer.
    func testEveryHealthShowsAtOnce() {
        let loop = EventLoop()
        let lights = StatusLights(settings: LEDSettings(chip: "gpiochip97", status: .offset(1)),
                                  loop: loop, log: logger(Lines()))
        XCTAssertNil(lights.currentHealth, "nothing shown yet")
        lights.show(.starting)
        XCTAssertEqual(lights.currentHealth, .starting)
        lights.show(.adapterFault)
        XCTAssertEqual(lights.currentHealth, .adapterFault)
        lights.show(.starting)
        XCTAssertEqual(lights.currentHealth, .starting, "no loop turn needed")
        lights.show(.advertising)
        XCTAssertEqual(lights.currentHealth, .advertising)
        XCTAssertFalse(lights.isBlinking)
        lights.release()
        XCTAssertEqual(lights.currentHealth, .stopped)
        XCTAssertFalse(lights.isBlinking)
        XCTAssertEqual(loop.scheduledTimerCount, 0)
    }

    func testPathThatIsNotAChip() {
        do {
            _ = try GPIOChip(opening: "/dev/null")
            XCTFail("/dev/null opened as a GPIO chip")
        } catch {
            XCTAssertEqual(error, .notAChip("/dev/null"))
        }
        do {
            _ = try GPIOChip(opening: "/dev/gpiochip99")
            XCTFail("opened a chip that does not exist")
        } catch {
            XCTAssertEqual(error, .noChip("/dev/gpiochip99"))
        }
    }

    func testErrorWording() {
        XCTAssertEqual(GPIOError.offsetOutOfRange(40, lineCount: 28).description,
                       "offset 40 out of range (chip has 28 lines)")
        XCTAssertEqual(GPIOError.noLineNamed("GPIO99", hint: nil).description, "no line named GPIO99")
        XCTAssertTrue(GPIOError.busy(consumer: "gpioset").description.contains("line busy"))
        XCTAssertTrue(GPIOError.permissionDenied("/dev/gpiochip0").description
            .contains("permission denied on /dev/gpiochip0"))
    }

    /// No chip named and none of the header's labels present (this host has no GPIO): one clear line.
    func testNoHeaderChip() {
        do {
            _ = try GPIOChip.openHeaderChip()
            XCTFail("a header chip on a host without GPIO")
        } catch {
            XCTAssertEqual(error, .noHeaderChip)
            XCTAssertEqual(error.description,
                           "no GPIO chip of a Raspberry Pi's 40-pin header (labelled pinctrl-bcm2711, pinctrl-bcm2835, pinctrl-rp1): set leds.chip (see gpiodetect)")
        }
    }

    func testShimMatchesBuild() {
        XCTAssertTrue([1, 2].contains(GPIOChip.apiMajor))
    }
}
