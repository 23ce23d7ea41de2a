import BeaconKit
import Glibc
import XCTest
@testable import BeaconLinux

final class EventLoopTests: XCTestCase {
    func testTimersFireInDeadlineOrderAndCanBeCancelled() {
        let loop = EventLoop()
        var fired: [String] = []
        let a = loop.makeTimer(), b = loop.makeTimer(), c = loop.makeTimer(), stop = loop.makeTimer()
        b.schedule(afterMs: 20) { fired.append("b") }
        a.schedule(afterMs: 5) { fired.append("a") }
        c.schedule(afterMs: 10) { fired.append("c") }
        c.cancel()
        XCTAssertFalse(c.isScheduled)
        XCTAssertTrue(a.isScheduled && b.isScheduled, "each timer is its own: cancelling one leaves the others")
        stop.schedule(afterMs: 40) { loop.stop() }
        loop.run()
        XCTAssertEqual(fired, ["a", "b"])
        // The timers are used down here, so none is released (and so cancelled) before run() ends.
        XCTAssertFalse(a.isScheduled || b.isScheduled || c.isScheduled || stop.isScheduled)
        XCTAssertEqual(loop.scheduledTimerCount, 0)
    }

    func testReschedulingReplacesTheTimer() {
        let loop = EventLoop()
        var count = 0
        let t = loop.makeTimer(), guardTimer = loop.makeTimer()
        t.schedule(afterMs: 5) { count += 1 }
        t.schedule(afterMs: 10) { count += 10; loop.stop() }
        XCTAssertEqual(loop.scheduledTimerCount, 1)
        guardTimer.schedule(afterMs: 2000) { loop.stop() }
        loop.run()
        XCTAssertEqual(count, 10)
        XCTAssertFalse(t.isScheduled)
        guardTimer.cancel()
    }

    /// A LoopTimer scheduled again replaces its own earlier schedule, to a later or an earlier
    /// deadline, and may schedule itself again from its handler.
    func testALoopTimerRescheduledReplacesItself() {
        let loop = EventLoop(clock: LoopClock(virtualStartingAt: 0))
        let t = loop.makeTimer()
        var fired: [Int64] = []
        t.schedule(afterMs: 100) { fired.append(-1) }
        t.schedule(afterMs: 300) { fired.append(-2) }
        t.schedule(afterMs: 50) {
            fired.append(loop.now)
            t.schedule(afterMs: 70) { fired.append(loop.now) }
        }
        XCTAssertEqual(loop.scheduledTimerCount, 1)
        loop.runOnce()
        XCTAssertEqual(fired, [50])
        XCTAssertTrue(t.isScheduled, "scheduled again from its own handler")
        loop.runOnce()
        XCTAssertEqual(fired, [50, 120])
        XCTAssertFalse(t.isScheduled)
        XCTAssertEqual(loop.scheduledTimerCount, 0)
    }

    /// A timer's owner letting it go cancels it: a released owner is never called back.
    func testALoopTimerReleasedIsCancelled() {
        let loop = EventLoop(clock: LoopClock(virtualStartingAt: 0))
        var fired = false
        var t: LoopTimer? = loop.makeTimer()
        t?.schedule(afterMs: 10) { fired = true }
        XCTAssertEqual(loop.scheduledTimerCount, 1)
        t = nil
        XCTAssertEqual(loop.scheduledTimerCount, 0)
        let later = loop.makeTimer()
        var laterFired = false
        later.schedule(afterMs: 100) { laterFired = true }
        loop.runOnce()
        XCTAssertEqual(loop.now, 100, "the virtual clock went straight past the released timer's deadline")
        XCTAssertTrue(laterFired)
        XCTAssertFalse(fired)
    }

    /// Posted work runs on a later turn, never inside the caller, in the order posted; work it
    /// posts waits for the turn after.
    func testPostRunsOnTheNextTurnInOrderAndNeverInsideTheCaller() {
        let loop = EventLoop()
        var log: [String] = []
        loop.post {
            log.append("1")
            loop.post { log.append("3") }
            log.append("1 done")
        }
        loop.post { log.append("2") }
        XCTAssertEqual(log, [], "never inside the caller")
        // Posted work makes the turn not wait: no timers here, yet the poll returns at once.
        let t0 = monotonicMilliseconds()
        loop.runOnce(maxWaitMs: 2000)
        XCTAssertLessThan(monotonicMilliseconds() - t0, 1000)
        XCTAssertEqual(log, ["1", "1 done", "2"])
        loop.runOnce(maxWaitMs: 2000)
        XCTAssertEqual(log, ["1", "1 done", "2", "3"])

        // Posted from a handler: it runs after that handler returns.
        log = []
        let t = loop.makeTimer()
        t.schedule(afterMs: 0) {
            loop.post { log.append("posted") }
            log.append("timer done")
        }
        for _ in 0..<3 where log.count < 2 { loop.runOnce(maxWaitMs: 100) }
        XCTAssertEqual(log, ["timer done", "posted"])

        // Work posted behind a stop() keeps its place for the next run.
        log = []
        let guardTimer = loop.makeTimer()
        guardTimer.schedule(afterMs: 2000) { loop.stop() }
        loop.post { log.append("a"); loop.stop() }
        loop.post { log.append("b") }
        loop.run()
        XCTAssertEqual(log, ["a"])
        loop.post { log.append("c"); loop.stop() }
        guardTimer.schedule(afterMs: 2000) { loop.stop() }
        loop.run()
        XCTAssertEqual(log, ["a", "b", "c"])
        guardTimer.cancel()
    }

    /// On a virtual clock the loop never sleeps: it jumps to the next deadline.
    func testVirtualClockJumpsToTheNextDeadlineWithoutSleeping() {
        XCTAssertFalse(EventLoop().clock.isVirtual)
        let loop = EventLoop(clock: LoopClock(virtualStartingAt: 0))
        XCTAssertTrue(loop.clock.isVirtual)
        XCTAssertEqual(loop.now, 0)
        let ten = loop.makeTimer(), twenty = loop.makeTimer()
        var firedAt: Int64?
        ten.schedule(afterMs: 10_000) { firedAt = loop.now }
        twenty.schedule(afterMs: 20_000) {}
        let t0 = monotonicMilliseconds()
        loop.runOnce()
        XCTAssertLessThan(monotonicMilliseconds() - t0, 1000, "no real sleeping")
        XCTAssertEqual(firedAt, 10_000)
        XCTAssertEqual(loop.now, 10_000, "to the deadline, not past it")
        XCTAssertFalse(ten.isScheduled)
        XCTAssertTrue(twenty.isScheduled)
        loop.runOnce()
        XCTAssertEqual(loop.now, 20_000)
        XCTAssertFalse(twenty.isScheduled)
        XCTAssertLessThan(monotonicMilliseconds() - t0, 1000)
    }

    func testDescriptorReadinessAndIdleWithoutWork() throws {
        var fds: [Int32] = [0, 0]
        XCTAssertEqual(pipe(&fds), 0)
        let r = FileDescriptor(fds[0]), w = FileDescriptor(fds[1])
        let loop = EventLoop()
        var got: [UInt8] = []
        loop.watch(r) {
            var buf = [UInt8](repeating: 0, count: 8)
            if let n = try? r.read(into: &buf) { got += buf[0..<n] }
            loop.stop()
        }
        _ = try w.write([42])
        loop.run()
        XCTAssertEqual(got, [42])
        // Nothing ready and no timers: one poll that times out, no busy spinning.
        let before = loop.wakeups
        loop.runOnce(maxWaitMs: 30)
        XCTAssertEqual(loop.wakeups - before, 1)
    }

    /// A coalescing descriptor rests after each batch: what arrives meanwhile waits in the kernel
    /// and is read in one turn when the rest is over; a plain descriptor is read at once.
    func testACoalescingDescriptorIsReadInBatches() throws {
        var fds: [Int32] = [0, 0]
        XCTAssertEqual(pipe(&fds), 0)
        let r = FileDescriptor(fds[0]), w = FileDescriptor(fds[1])
        _ = fcntl(r.rawValue, F_SETFL, O_NONBLOCK)
        let loop = EventLoop(clock: LoopClock(virtualStartingAt: 0))
        var batches: [(at: Int64, bytes: [UInt8])] = []
        loop.watch(r, coalesceMs: 50) {
            var all: [UInt8] = [], buf = [UInt8](repeating: 0, count: 64)
            while let n = try? r.read(into: &buf), n > 0 { all += buf[0..<n] }
            batches.append((loop.now, all))
        }
        _ = try w.write([1])
        loop.runOnce()
        XCTAssertEqual(batches.map(\.bytes), [[1]], "the first read is immediate")
        _ = try w.write([2])
        _ = try w.write([3])
        // Resting: the loop does not wake for the descriptor; it waits out the rest instead.
        loop.runOnce()
        XCTAssertEqual(batches.count, 1)
        XCTAssertEqual(loop.now, 50)
        loop.runOnce()
        XCTAssertEqual(batches.map(\.bytes), [[1], [2, 3]], "what came meanwhile, in one batch")
        XCTAssertEqual(batches.last?.at, 50)
        // The rest starts again after each batch; other work is not held back meanwhile.
        let timer = loop.makeTimer()
        var timerAt: Int64?
        timer.schedule(afterMs: 10) { timerAt = loop.now }
        _ = try w.write([4])
        loop.runOnce()
        XCTAssertEqual(timerAt, 60)
        XCTAssertEqual(batches.count, 2)
        loop.runOnce()
        loop.runOnce()
        XCTAssertEqual(batches.map(\.bytes), [[1], [2, 3], [4]])
        XCTAssertEqual(batches.last?.at, 100)
    }

    func testSignalsArriveAsEvents() throws {
        let sig = try SignalDescriptor(signals: [SIGUSR1])
        kill(getpid(), SIGUSR1)
        let loop = EventLoop()
        var got: [Int32] = []
        loop.watch(sig.fd) { got += sig.read(); loop.stop() }
        let guardTimer = loop.makeTimer()
        guardTimer.schedule(afterMs: 2000) { loop.stop() }
        loop.run()
        guardTimer.cancel()
        XCTAssertEqual(got, [SIGUSR1])
    }

    func testBrokenDescriptorIsReportedOnceAndDroppedNotSpun() throws {
        var fds: [Int32] = [0, 0]
        XCTAssertEqual(pipe(&fds), 0)
        let r = FileDescriptor(fds[0])
        close(fds[1])   // the write end is gone: POLLHUP with nothing to read
        let loop = EventLoop()
        var lost: [Errno] = []
        var reads = 0
        loop.watch(r, lost: { lost.append($0) }) { reads += 1 }
        for _ in 0..<5 { loop.runOnce(maxWaitMs: 20) }
        XCTAssertEqual(lost.count, 1)
        XCTAssertEqual(reads, 0)
        // Dropped: the next turns wait their whole timeout instead of returning at once.
        let t0 = monotonicMilliseconds()
        loop.runOnce(maxWaitMs: 50)
        XCTAssertGreaterThanOrEqual(monotonicMilliseconds() - t0, 40)
    }

    func testAClosedDescriptorWithoutLostHandlerIsDropped() {
        var fds: [Int32] = [0, 0]
        XCTAssertEqual(pipe(&fds), 0)
        let r = FileDescriptor(fds[0]), w = FileDescriptor(fds[1])
        let loop = EventLoop()
        var reads = 0
        loop.watch(r) { reads += 1 }
        r.close()   // behind the loop's back: POLLNVAL
        loop.runOnce(maxWaitMs: 20)
        let t0 = monotonicMilliseconds()
        loop.runOnce(maxWaitMs: 50)
        XCTAssertGreaterThanOrEqual(monotonicMilliseconds() - t0, 40)
        XCTAssertEqual(reads, 0)
        w.close()
    }

    func testBlockingCallRunsOffTheLoopWhichKeepsServingTimers() {
        let loop = EventLoop()
        let call = BlockingCall(loop: loop)
        var ticks = 0
        var result: Errno?? = .none
        let ticker = loop.makeTimer(), guardTimer = loop.makeTimer()
        func tick() { ticks += 1; ticker.schedule(afterMs: 10) { tick() } }
        tick()
        // 300 ms in the "kernel", then EBUSY, as an ioctl would report it.
        call.start({ usleep(300_000); errno = EBUSY; return -1 }) { e in result = .some(e); loop.stop() }
        XCTAssertTrue(call.isRunning)
        guardTimer.schedule(afterMs: 5000) { loop.stop() }
        loop.run()
        // Cancelled while the loop lives: the ticker's pending handler holds the ticker itself,
        // which must not be released from inside the loop's deinit (it refers to it unowned).
        ticker.cancel()
        guardTimer.cancel()
        XCTAssertEqual(result, .some(Errno(EBUSY)))
        XCTAssertFalse(call.isRunning)
        XCTAssertGreaterThan(ticks, 10, "the loop kept running its timers while the call blocked")
        XCTAssertLessThan(loop.longestTurnMicros, 200_000)
    }
}
