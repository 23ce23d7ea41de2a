import BeaconKit
import Glibc
import XCTest
@testable import BeaconLinux

/// The edits of a config file read once they settle, on the virtual clock (the daemon's
/// config.toml and the monitor's monitor.toml both go through it).
final class ConfigEditsTests: XCTestCase {
    final class Reader: ConfigEditsDelegate {
        let loop: EventLoop
        var reads: [Int64] = []
        init(_ loop: EventLoop) { self.loop = loop }
        func configEditsSettled() { reads.append(loop.now) }
    }

    func testABurstIsOneReadAfterItSettlesButNeverLaterThanTheCap() {
        let loop = EventLoop(clock: LoopClock(virtualStartingAt: 0))
        let edits = ConfigEdits(loop: loop)
        let reader = Reader(loop)
        edits.delegate = reader
        edits.changed()
        loop.runOnce(maxWaitMs: 0)
        edits.changed()   // the same instant: one read
        loop.runOnce()
        XCTAssertEqual(reader.reads, [Debouncer().quietMs])
        // An editor that writes every 100 ms for a second: read at the cap, then once it settles.
        let start = loop.now
        let t = loop.makeTimer()
        var writes = 0
        func write() {
            edits.changed()
            writes += 1
            if writes < 10 { t.schedule(afterMs: 100) { write() } }
        }
        write()
        while loop.scheduledTimerCount > 0 { loop.runOnce() }
        XCTAssertEqual(reader.reads.dropFirst().map { $0 - start }, [Debouncer().maxDelayMs, 900 + Debouncer().quietMs])
    }

    func testAReadForAnotherReasonTakesThePlaceOfTheOneWaiting() {
        let loop = EventLoop(clock: LoopClock(virtualStartingAt: 0))
        let edits = ConfigEdits(loop: loop)
        let reader = Reader(loop)
        edits.delegate = reader
        edits.changed()
        edits.cancel()   // SIGHUP read it already
        XCTAssertEqual(loop.scheduledTimerCount, 0)
        XCTAssertTrue(reader.reads.isEmpty)
    }
}
