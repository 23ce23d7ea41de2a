import BeaconKit
import Glibc
import XCTest
@testable import BeaconLinux

/// One call at a time, every completion on a later loop turn: `BlockingCall`, the power calls of
/// `KernelController` on it (with and without the address repair), and `AddressRepair`.
final class BlockingCallTests: XCTestCase {
    let quiet = Logger(journal: false, threshold: .error, sink: { _ in })

    /// Runs `loop` until `done()` or two seconds passed (the helper threads are real).
    func run(_ loop: EventLoop, until done: () -> Bool) {
        let end = monotonicMilliseconds() + 2000
        while !done(), monotonicMilliseconds() < end { loop.runOnce(maxWaitMs: 10) }
    }

    func testASecondCallWhileOneRunsIsRefusedOnALaterTurnAndTheFirstCompletesItsOwnCaller() {
        let loop = EventLoop()
        let call = BlockingCall(loop: loop)
        var first: Errno?? = .none, second: Errno?? = .none
        call.start({ usleep(50_000); errno = EBUSY; return -1 }) { first = .some($0) }
        call.start({ 0 }) { second = .some($0) }
        XCTAssertEqual(second, .none, "refused on a later turn, never inside the call")
        loop.runOnce(maxWaitMs: 0)
        XCTAssertEqual(second, .some(.callInProgress))
        XCTAssertEqual(first, .none, "the first still runs")
        run(loop) { first != .none }
        XCTAssertEqual(first, .some(Errno(EBUSY)), "the first call's result goes to the first caller")
        XCTAssertFalse(call.isRunning)
        // Free again: the next call runs.
        var third: Errno?? = .none
        call.start({ 0 }) { third = .some($0) }
        run(loop) { third != .none }
        XCTAssertEqual(third, .some(nil))
    }

    func testTheCompletionNeverRunsInsideStartEvenForAnInstantCall() {
        let loop = EventLoop()
        let call = BlockingCall(loop: loop)
        var done = false
        call.start({ 0 }) { _ in done = true }
        XCTAssertFalse(done)
        run(loop) { done }
        XCTAssertTrue(done)
    }

    /// The control descriptor -1 makes HCIDEVUP/HCIDEVDOWN fail, off the loop: EBADF from the
    /// kernel, ENOTTY from qemu-user (the aarch64 unit tests), which refuses an ioctl it does not know.
    func isTheIoctlsOwnFailure(_ e: Errno??) -> Bool {
        e == .some(Errno(EBADF)) || e == .some(Errno(ENOTTY))
    }
    func testAPowerCallWhileAnotherRunsIsRefused() {
        let loop = EventLoop()
        let controller = KernelController(index: 0, loop: loop, controlFD: { -1 })
        var first: Errno?? = .none, second: Errno?? = .none
        controller.setPower(up: false) { first = .some($0) }
        XCTAssertTrue(controller.isChangingPower)
        controller.setPower(up: true) { second = .some($0) }
        XCTAssertEqual(second, .none, "refused on a later turn, never inside the call")
        run(loop) { first != .none && second != .none }
        XCTAssertEqual(second, .some(.callInProgress))
        XCTAssertTrue(isTheIoctlsOwnFailure(first), "\(String(describing: first))")
        XCTAssertFalse(controller.isChangingPower)
    }

    func testAPowerCallDuringABringUpWithAddressRepairIsRefused() {
        let loop = EventLoop()
        let controller = KernelController(index: 0, loop: loop, controlFD: { -1 })
        controller.addressRepair = AddressRepair(loop: loop, log: quiet, serialPath: "/nonexistent/serial")
        var first: Errno?? = .none, second: Errno?? = .none
        controller.setPower(up: true) { first = .some($0) }
        XCTAssertTrue(controller.isChangingPower)
        controller.setPower(up: false) { second = .some($0) }
        XCTAssertEqual(second, .none, "refused on a later turn, never inside the call")
        run(loop) { first != .none && second != .none }
        XCTAssertEqual(second, .some(.callInProgress), "the repair's steps are not interleaved with another call")
        XCTAssertTrue(isTheIoctlsOwnFailure(first), "the bring-up's outcome goes to its own caller: \(String(describing: first))")
        XCTAssertFalse(controller.isChangingPower)
    }

    func testAddressRepairAnswersOnALaterTurnEvenWhenEveryStepAnswersAtOnce() {
        let loop = EventLoop(clock: LoopClock(virtualStartingAt: 0))
        let repair = AddressRepair(loop: loop, log: quiet, serialPath: "/nonexistent/serial")
        var outcome: Errno?? = .none
        var powerCalls: [Bool] = []
        repair.bringUp(index: 0, power: { up, next in powerCalls.append(up); next(nil) },
                       address: { BluetoothAddress("B8:27:EB:18:69:7E") }) { outcome = .some($0) }
        XCTAssertEqual(outcome, .none, "never inside the call")
        loop.runOnce()
        XCTAssertEqual(outcome, .some(nil))
        XCTAssertEqual(powerCalls, [true], "an address of its own: nothing to repair")
    }
}
