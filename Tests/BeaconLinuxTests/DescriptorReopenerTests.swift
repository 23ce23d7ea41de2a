import XCTest
import BeaconKit
@testable import BeaconLinux

/// Issue 50: the daemon's descriptor reopening, once in the executable and tested nowhere.
final class DescriptorReopenerTests: XCTestCase {
    func testABrokenDescriptorIsOpenedAgainAfterAPauseUntilItOpens() {
        let loop = EventLoop(clock: LoopClock(virtualStartingAt: 0))
        let lines = LogLines()
        let r = DescriptorReopener(loop: loop, log: Logger(journal: false, threshold: .info, sink: { lines.lines.append($0) }))
        var tries: [Int64] = []
        var opened = false
        r.reopen("control") { () throws(Errno) in
            tries.append(loop.now)
            guard tries.count >= 3 else { throw Errno(EMFILE) }
            opened = true
        }
        XCTAssertTrue(r.isPending("control"))
        XCTAssertTrue(tries.isEmpty, "not at once: after a pause")
        while r.isPending("control") { loop.runOnce() }
        XCTAssertEqual(tries, [1000, 2000, 3000], "every second, never a busy loop")
        XCTAssertTrue(opened)
        XCTAssertEqual(r.failures["control"], nil)
        XCTAssertEqual(lines.count("control descriptor open again"), 1, "said once")
    }

    func testASecondBreakReplacesThePendingAttemptAndOthersAreApart() {
        let loop = EventLoop(clock: LoopClock(virtualStartingAt: 0))
        let r = DescriptorReopener(loop: loop, log: Logger(journal: false, threshold: .info, sink: { _ in }), afterMs: 500)
        var which: [String] = []
        r.reopen("monitor") { () throws(Errno) in which.append("first") }
        r.reopen("monitor") { () throws(Errno) in which.append("second") }
        r.reopen("signals") { () throws(Errno) in which.append("signals") }
        while r.isPending("monitor") || r.isPending("signals") { loop.runOnce() }
        XCTAssertEqual(which.sorted(), ["second", "signals"], "one attempt per descriptor, the latest")
        XCTAssertEqual(loop.now, 500)
    }

    func testNobodyIsCalledOnceTheReopenerIsGone() {
        let loop = EventLoop(clock: LoopClock(virtualStartingAt: 0))
        var r: DescriptorReopener? = DescriptorReopener(loop: loop, log: Logger(journal: false, threshold: .info, sink: { _ in }))
        var called = false
        r?.reopen("rfkill") { () throws(Errno) in called = true }
        r = nil
        loop.runOnce(maxWaitMs: 2000)
        XCTAssertFalse(called, "its timers went with it")
    }
}
