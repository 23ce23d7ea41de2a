import XCTest
@testable import BeaconKit

final class LEDPatternTests: XCTestCase {
    /// Levels sampled every 10 ms over `ms`: (lit share, rising edges).
    private func profile(_ p: LEDPattern, overMs ms: Int64) -> (litShare: Double, rises: Int) {
        var lit = 0, rises = 0, prev = p.isLit(atMs: 0)
        for t in stride(from: Int64(0), to: ms, by: 10) {
            let v = p.isLit(atMs: t)
            if v { lit += 1 }
            if v && !prev { rises += 1 }
            prev = v
        }
        return (Double(lit) / Double(ms / 10), rises)
    }

    // SPEC §4, row by row, with a fault LED and without.

    func testStartingBlinksFastAbout5Hz() {
        for hasFault in [true, false] {
            let p = LEDPatterns(health: .starting, hasFaultLED: hasFault)
            XCTAssertEqual(p.fault, hasFault ? .off : nil)
            let (share, rises) = profile(p.status, overMs: 2000)
            XCTAssertEqual(rises, 9)   // 10 flashes in 2 s, the first one lit from t = 0
            XCTAssertEqual(share, 0.5, accuracy: 0.01)
            XCTAssertFalse(p.isSteady)
        }
    }

    func testAdvertisingIsSteadyOn() {
        for hasFault in [true, false] {
            let p = LEDPatterns(health: .advertising, hasFaultLED: hasFault)
            XCTAssertEqual(p.status, .on)
            XCTAssertEqual(p.fault, hasFault ? .off : nil)
            XCTAssertTrue(p.isSteady)
            XCTAssertNil(p.nextTransition(afterMs: 12345))
        }
    }

    func testRefusedEditBlinksFaultLEDAbout1Hz() throws {
        let p = LEDPatterns(health: .advertisingWithRefusedEdit, hasFaultLED: true)
        XCTAssertEqual(p.status, .on)
        let fault = try XCTUnwrap(p.fault)
        let (share, rises) = profile(fault, overMs: 4000)
        XCTAssertEqual(rises, 3)
        XCTAssertEqual(share, 0.5, accuracy: 0.01)
    }

    func testRefusedEditSingleLEDIsOnWithShortOffBlinkEverySecond() {
        let p = LEDPatterns(health: .advertisingWithRefusedEdit, hasFaultLED: false)
        XCTAssertNil(p.fault)
        let (share, rises) = profile(p.status, overMs: 4000)
        XCTAssertEqual(rises, 3)
        XCTAssertGreaterThan(share, 0.75)   // mostly lit: "on, with a short off-blink"
        XCTAssertLessThan(share, 0.95)
    }

    func testAdapterFaultLightsFaultLEDSteady() {
        let p = LEDPatterns(health: .adapterFault, hasFaultLED: true)
        XCTAssertEqual(p.status, .off)
        XCTAssertEqual(p.fault, .on)
        XCTAssertTrue(p.isSteady)
    }

    func testAdapterFaultSingleLEDFlashesShortlyEvery2s() {
        let p = LEDPatterns(health: .adapterFault, hasFaultLED: false)
        let (share, rises) = profile(p.status, overMs: 8000)
        XCTAssertEqual(rises, 3)   // flashes at 0, 2, 4, 6 s
        XCTAssertGreaterThan(share, 0.03)
        XCTAssertLessThan(share, 0.2)
    }

    func testStoppedIsDark() {
        for hasFault in [true, false] {
            let p = LEDPatterns(health: .stopped, hasFaultLED: hasFault)
            XCTAssertEqual(p.status, .off)
            XCTAssertEqual(p.fault, hasFault ? .off : nil)
            XCTAssertTrue(p.isSteady)
        }
    }

    // The timing function one timer relies on.

    func testNextTransitionFollowsEdges() {
        let p = LEDPattern.blink(periodMs: 1000, onMs: 850)
        XCTAssertEqual(p.nextTransition(afterMs: 0), 850)
        XCTAssertEqual(p.nextTransition(afterMs: 849), 850)
        XCTAssertEqual(p.nextTransition(afterMs: 850), 1000)
        XCTAssertEqual(p.nextTransition(afterMs: 999), 1000)
        XCTAssertEqual(p.nextTransition(afterMs: 1000), 1850)
        XCTAssertEqual(p.nextTransition(afterMs: -5), 850)
        XCTAssertTrue(p.isLit(atMs: 849))
        XCTAssertFalse(p.isLit(atMs: 850))
        XCTAssertTrue(p.isLit(atMs: 1000))
    }

    func testLevelChangesExactlyAtNextTransition() throws {
        for p in [LEDPattern.fastBlink, .slowBlink, .onWithOffBlink, .shortFlash] {
            var t: Int64 = 0
            for _ in 0..<20 {
                let next = try XCTUnwrap(p.nextTransition(afterMs: t))
                XCTAssertGreaterThan(next, t)
                XCTAssertEqual(p.isLit(atMs: next - 1), p.isLit(atMs: t))
                XCTAssertNotEqual(p.isLit(atMs: next), p.isLit(atMs: t))
                t = next
            }
        }
    }

    func testCombinedNextTransitionIsEarliest() {
        let p = LEDPatterns(status: .fastBlink, fault: .slowBlink)
        XCTAssertEqual(p.nextTransition(afterMs: 0), 100)
        XCTAssertEqual(p.nextTransition(afterMs: 450), 500)
        let q = LEDPatterns(status: .on, fault: .shortFlash)
        XCTAssertEqual(q.nextTransition(afterMs: 10), 150)
    }

    func testDegenerateBlinksAreSteady() {
        XCTAssertEqual(LEDPattern.blink(periodMs: 0, onMs: 0).normalized, .off)
        XCTAssertEqual(LEDPattern.blink(periodMs: 100, onMs: 100).normalized, .on)
        XCTAssertEqual(LEDPattern.blink(periodMs: 100, onMs: 0).normalized, .off)
        XCTAssertEqual(LEDPattern.blink(periodMs: -1, onMs: 5).normalized, .on)
        XCTAssertNil(LEDPattern.blink(periodMs: 100, onMs: 200).nextTransition(afterMs: 0))
        XCTAssertTrue(LEDPattern.blink(periodMs: 100, onMs: 100).isLit(atMs: 7))
    }
}
