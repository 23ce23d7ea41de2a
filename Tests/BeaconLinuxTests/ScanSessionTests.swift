import BeaconKit
import Glibc
import XCTest
@testable import BeaconLinux

/// `scan`'s session (issue 40: out of the executable) on the virtual clock, with a fake radio, a
/// pipe standing in for the kernel's adapter events and a recorded output: what it lists and
/// when, how it ends, and what it leaves the controller in.
final class ScanSessionTests: XCTestCase {
    final class FakeRadio: ScanRadio {
        let index: UInt16 = 0
        var family: ScanFamily? = .legacy
        var active = false
        weak var delegate: ScannerDelegate?
        var startFailure: ScanFailure?
        var calls: [String] = []
        /// Disabling scanning never confirms (a controller gone quiet).
        var stopHangs = false
        let loop: EventLoop
        init(loop: EventLoop) { self.loop = loop }
        func start(_ done: @escaping (ScanFailure?) -> Void) {
            calls.append("start active=\(active)")
            loop.post { [startFailure] in done(startFailure) }
        }
        func stopScanning(_ done: @escaping (HCICommandFailure?) -> Void) {
            calls.append("stop@\(loop.now)")
            if !stopHangs { loop.post { done(nil) } }
        }
        func pause(_ done: @escaping (HCICommandFailure?) -> Void) { loop.post { done(nil) } }
        func resume(_ done: @escaping (ScanFailure?) -> Void) { loop.post { done(nil) } }
        func hear(_ reports: [AdvertisingReport]) { delegate?.scanner(.reports(reports)) }
    }

    /// The kernel's adapter events: a pipe to wake the loop, the events queued beside it.
    final class FakeAdapterEvents: AdapterEventSource {
        let fd: FileDescriptor
        let writeEnd: FileDescriptor
        var queued: [(HCIDeviceEventKind, UInt16)] = []
        var addressError: Errno?
        init() {
            var fds: [Int32] = [0, 0]
            precondition(pipe(&fds) == 0)
            _ = fcntl(fds[0], F_SETFL, O_NONBLOCK)
            fd = FileDescriptor(fds[0]); writeEnd = FileDescriptor(fds[1])
        }
        func send(_ kind: HCIDeviceEventKind, index: UInt16 = 0) {
            queued.append((kind, index))
            _ = try? writeEnd.write([1])
        }
        func readDeviceEvents() throws(Errno) -> [(HCIDeviceEventKind, UInt16)] {
            var b = [UInt8](repeating: 0, count: 64)
            _ = try? fd.read(into: &b)
            defer { queued = [] }
            return queued
        }
        func deviceAddress(index: UInt16) throws(Errno) -> [UInt8] {
            if let addressError { throw addressError }
            return [1, 2, 3, 4, 5, 6]
        }
    }

    final class Recorded: ScanOutput {
        var isTerminal = false
        var text: [String] = []
        /// The reader goes away after this many writes.
        var closesAfter: Int?
        func write(_ s: String) -> Bool {
            if let n = closesAfter, text.count >= n { return false }
            text.append(s)
            return true
        }
        var lines: [String] { text.joined().split(separator: "\n").map(String.init) }
    }

    var loop: EventLoop!
    var radio: FakeRadio!
    var events: FakeAdapterEvents!
    var output: Recorded!
    final class Lines: @unchecked Sendable { var all: [String] = [] }
    var log = Lines()
    var logged: [String] { log.all }

    override func setUp() {
        loop = EventLoop(clock: LoopClock(virtualStartingAt: 50_000))
        radio = FakeRadio(loop: loop)
        events = FakeAdapterEvents()
        output = Recorded()
        log = Lines()
    }

    func session(json: Bool = false, readIdentity: Bool = false) -> ScanSession {
        let lines = log
        let logger = Logger(journal: false, threshold: .info, sink: { lines.all.append($0.hasSuffix("\n") ? String($0.dropLast()) : $0) })
        return ScanSession(adapter: "hci0", scanner: radio, adapterEvents: events, output: output, loop: loop, log: logger,
                           json: json, readIdentity: readIdentity) { _ in preconditionFailure("no reads in these tests") }
    }

    func altbeacon(minor: UInt16, rssi: Int8 = -60) -> AdvertisingReport {
        let id = BeaconIdentity(uuid: Array(repeating: 0x2f, count: 16), major: 1, minor: minor)
        return AdvertisingReport(eventType: 3, addressType: 0, address: [UInt8(minor), 2, 3, 4, 5, 6], rssi: rssi,
                                 data: AltBeacon.advertisingData(id))
    }


    func testLinesForNewChangedAndGoneFramesThenTheTimeEndsIt() {
        let s = session()
        s.start(timeoutSeconds: 20)
        loop.turn(forMs: 10)
        XCTAssertEqual(radio.calls, ["start active=false"], "a plain scan is passive: nothing sent on air")
        radio.hear([altbeacon(minor: 7)])
        radio.hear([altbeacon(minor: 7)])
        XCTAssertEqual(output.lines.count, 1, "heard twice, listed once")
        XCTAssertTrue(output.lines[0].hasPrefix("new 2f2f2f2f-"), output.lines[0])
        radio.hear([altbeacon(minor: 7, rssi: -80)])
        XCTAssertTrue(output.lines.last?.hasPrefix("changed ") == true, "\(output.lines)")
        loop.turn(forMs: BeaconTable.dropAfterMs - 600)
        XCTAssertEqual(output.lines.count, 2, "not gone before 8.5 s unheard")
        loop.turn(forMs: 1200)
        XCTAssertTrue(output.lines.last?.hasPrefix("gone ") == true, "\(output.lines)")
        loop.turn(forMs: 60_000)
        XCTAssertTrue(loop.isStopped)
        XCTAssertEqual(s.outcome, .ended)
        XCTAssertEqual(radio.calls.last, "stop@70000", "scanning disabled at the time: 20 s after it started at 50 000")
    }

    func testJSONHasALinePerSighting() {
        let s = session(json: true)
        s.start(timeoutSeconds: nil)
        loop.turn(forMs: 10)
        radio.hear([altbeacon(minor: 7), altbeacon(minor: 7)])
        XCTAssertEqual(output.lines.count, 2)
        XCTAssertTrue(output.lines.allSatisfy { $0.hasPrefix("{") && $0.hasSuffix("}") }, "\(output.lines)")
        s.finish()
        loop.turn(forMs: 1000)
        XCTAssertTrue(loop.isStopped)
    }

    func testAStartFailureIsTheOutcome() {
        radio.startFailure = .blocked
        let s = session()
        s.start(timeoutSeconds: nil)
        loop.turn(forMs: 1000)
        XCTAssertTrue(loop.isStopped)
        XCTAssertEqual(s.outcome, .couldNotStart(.blocked))
        XCTAssertEqual(radio.calls, ["start active=false"], "nothing to disable: it never started")
    }

    func testTheAdapterGoingDownEndsTheScanUnavailable() {
        let s = session()
        s.start(timeoutSeconds: nil)
        loop.turn(forMs: 10)
        events.send(.down, index: 1)
        loop.turn(forMs: 100)
        XCTAssertFalse(loop.isStopped, "another adapter's event")
        events.send(.down)
        loop.turn(forMs: 100)
        XCTAssertTrue(loop.isStopped)
        XCTAssertEqual(s.outcome, .adapterLost)
        XCTAssertTrue(logged.contains { $0.hasSuffix("hci0 went down; scan ended") }, "\(logged)")
    }

    func testALostChannelEndsItAndAQuietControllerDoesNotHoldTheExit() {
        radio.stopHangs = true
        let s = session()
        s.start(timeoutSeconds: nil)
        loop.turn(forMs: 10)
        let from = loop.now
        radio.delegate?.scanner(.lost(.noDevice))
        loop.turn(forMs: 5000)
        XCTAssertTrue(loop.isStopped)
        XCTAssertEqual(s.outcome, .adapterLost)
        XCTAssertEqual(loop.now - from, ScanSession.stopBoundMs, "ended at the bound without the controller's word")
    }

    func testAClosedPipeEndsTheScan() {
        output.closesAfter = 1
        let s = session()
        s.start(timeoutSeconds: nil)
        loop.turn(forMs: 10)
        radio.hear([altbeacon(minor: 1), altbeacon(minor: 2)])
        loop.turn(forMs: 1000)
        XCTAssertTrue(loop.isStopped)
        XCTAssertEqual(s.outcome, .ended)
        XCTAssertEqual(output.lines.count, 1)
    }

    func testATerminalGetsTheLiveTableRedrawnEveryTick() {
        output.isTerminal = true
        let s = session()
        s.start(timeoutSeconds: nil)
        loop.turn(forMs: 10)
        radio.hear([altbeacon(minor: 7)])
        let before = output.text.count
        loop.turn(forMs: 2 * ScanSession.tickMs)
        XCTAssertEqual(output.text.count - before, 2, "a redraw per tick while a beacon is listed (its heard column ages)")
        XCTAssertTrue(output.text.last?.hasPrefix(ScanSession.clearScreen + "altbeacond scan on hci0 (legacy passive scan), 1 beacon;") == true,
                      output.text.last ?? "")
        s.finish()
    }

    func testReadingIdentitiesNeedsTheAdapterAddress() {
        events.addressError = .noDevice
        let s = session(readIdentity: true)
        s.start(timeoutSeconds: nil)
        loop.turn(forMs: 1000)
        XCTAssertEqual(radio.calls.first, "start active=true", "reading identities scans actively (names are in scan responses)")
        XCTAssertTrue(loop.isStopped)
        XCTAssertEqual(s.outcome, .adapterLost)
        XCTAssertTrue(logged.contains { $0.hasSuffix("--read-identity needs it") }, "\(logged)")
    }
}
