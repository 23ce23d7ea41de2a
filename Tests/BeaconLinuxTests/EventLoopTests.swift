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
}
