import Glibc
import XCTest
@testable import BeaconLinux

final class EventLoopTests: XCTestCase {
    func testTimersFireInDeadlineOrderAndCanBeCancelled() {
        let loop = EventLoop()
        var fired: [String] = []
        loop.schedule("b", afterMs: 20) { fired.append("b") }
        loop.schedule("a", afterMs: 5) { fired.append("a") }
        loop.schedule("c", afterMs: 10) { fired.append("c") }
        loop.cancel("c")
        loop.schedule("stop", afterMs: 40) { loop.stop() }
        loop.run()
        XCTAssertEqual(fired, ["a", "b"])
        XCTAssertTrue(loop.timerNames.isEmpty)
    }

    func testReschedulingReplacesTheTimer() {
        let loop = EventLoop()
        var count = 0
        loop.schedule("t", afterMs: 5) { count += 1 }
        loop.schedule("t", afterMs: 10) { count += 10; loop.stop() }
        loop.run()
        XCTAssertEqual(count, 10)
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

    func testSignalsArriveAsEvents() throws {
        let sig = try SignalDescriptor(signals: [SIGUSR1])
        kill(getpid(), SIGUSR1)
        let loop = EventLoop()
        var got: [Int32] = []
        loop.watch(sig.fd) { got += sig.read(); loop.stop() }
        loop.schedule("guard", afterMs: 2000) { loop.stop() }
        loop.run()
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
        func tick() { ticks += 1; loop.schedule("tick", afterMs: 10) { tick() } }
        tick()
        // 300 ms in the "kernel", then EBUSY, as an ioctl would report it.
        call.start({ usleep(300_000); errno = EBUSY; return -1 }) { e in result = .some(e); loop.stop() }
        XCTAssertTrue(call.isRunning)
        loop.schedule("guard", afterMs: 5000) { loop.stop() }
        loop.run()
        XCTAssertEqual(result, .some(Errno(EBUSY)))
        XCTAssertFalse(call.isRunning)
        XCTAssertGreaterThan(ticks, 10, "the loop kept running its timers while the call blocked")
        XCTAssertLessThan(loop.longestTurnMicros, 200_000)
    }
}
