import BeaconKit
import Glibc
import XCTest
@testable import BeaconLinux

/// `scan --read-identity`'s queue of reads (issue 40: out of the executable), on the virtual clock
/// with a fake scan and a fake reader: one read at a time, each device once, the name waited for,
/// the scan restarted around each read and again on Command Disallowed, the unheard time stopped
/// while the kernel has the scan.
final class IdentityReadsTests: XCTestCase {
    final class FakeScan: ScanPausing {
        var calls: [String] = []
        /// Command Disallowed to this many more resumes (the kernel's own scan commands).
        var refusedResumes = 0
        var resumeFailure: ScanFailure?
        let loop: EventLoop
        init(loop: EventLoop) { self.loop = loop }
        func pause(_ done: @escaping (HCICommandFailure?) -> Void) {
            calls.append("pause@\(loop.now)")
            loop.post { done(nil) }
        }
        func resume(_ done: @escaping (ScanFailure?) -> Void) {
            calls.append("resume@\(loop.now)")
            if refusedResumes > 0 {
                refusedResumes -= 1
                return loop.post { done(.command(.status(.leSetScanEnable, .commandDisallowed))) }
            }
            loop.post { [resumeFailure] in done(resumeFailure) }
        }
    }

    final class FakeReader: IdentityReading {
        var reads: [(peer: [UInt8], random: Bool, at: Int64)] = []
        var pending: ((Result<[UInt8], IdentityReaderFailure>) -> Void)?
        var cancelled = 0
        let loop: EventLoop
        init(loop: EventLoop) { self.loop = loop }
        func read(peer: [UInt8], random: Bool, _ done: @escaping (Result<[UInt8], IdentityReaderFailure>) -> Void) {
            reads.append((peer, random, loop.now))
            pending = done
        }
        func cancel() { cancelled += 1; pending = nil }
        /// The read in progress ends with `r`, `afterMs` from now.
        func finish(_ r: Result<[UInt8], IdentityReaderFailure>) {
            let d = pending
            pending = nil
            d?(r)
        }
    }

    final class Events: IdentityReadsDelegate {
        var reports: [IdentityReadReport] = []
        var notResumed: [ScanFailure] = []
        var named: Set<String> = []
        func identityReads(_ reads: IdentityReads, read report: IdentityReadReport) { reports.append(report) }
        func identityReads(_ reads: IdentityReads, couldNotResume failure: ScanFailure) { notResumed.append(failure) }
        func identityReads(_ reads: IdentityReads, heardNameOf address: String) -> Bool { named.contains(address) }
    }

    var loop: EventLoop!
    var scan: FakeScan!
    var reader: FakeReader!
    var events: Events!
    var reads: IdentityReads!

    override func setUp() {
        loop = EventLoop(clock: LoopClock(virtualStartingAt: 10_000))
        scan = FakeScan(loop: loop)
        reader = FakeReader(loop: loop)
        events = Events()
        reads = IdentityReads(scanner: scan, reader: reader, loop: loop, log: Logger(threshold: .error, sink: { _ in }), delegate: events)
    }

    func report(_ last: UInt8, random: Bool = false) -> AdvertisingReport {
        AdvertisingReport(eventType: 0, addressType: random ? 1 : 0, address: [last, 2, 3, 4, 5, 6], rssi: -50, data: [])
    }

    /// Loop turns for `ms` of virtual time.
    func run(forMs ms: Int64) {
        let end = loop.now + ms
        let stop = loop.makeTimer()
        stop.schedule(afterMs: ms) {}
        while loop.now < end { loop.runOnce() }
        withExtendedLifetime(stop) {}
    }

    func testOneReadAtATimeEachDeviceOnceTheNameWaitedFor() {
        events.named = [report(1).addressString]
        reads.consider(report(1))
        reads.consider(report(2, random: true))
        reads.consider(report(1))   // again in this scan: not read twice
        XCTAssertEqual(reader.reads.map(\.peer.first), [1], "named: read at once; the second waits for the first")
        XCTAssertTrue(reads.isReading)
        run(forMs: 3000)
        XCTAssertEqual(reader.reads.count, 1, "nothing more while a read runs")
        reader.finish(.success(Array(repeating: 0xAB, count: 20)))
        XCTAssertEqual(events.reports.count, 1)
        // the scan set up again settleMs after the read, then the next device: its name never
        // heard, it goes once nameWaitMs since it was queued have passed (long ago by now)
        run(forMs: IdentityReads.settleMs + 100)
        XCTAssertEqual(reader.reads.map(\.peer.first), [1, 2])
        XCTAssertEqual(reader.reads.last?.random, true, "address type 1: random")
        reader.finish(.failure(.connectTimeout(ms: 10_000)))
        run(forMs: 1000)
        XCTAssertEqual(events.reports.count, 2)
        XCTAssertEqual(reader.reads.count, 2)
        XCTAssertFalse(reads.isReading)
    }

    func testAnUnnamedDeviceWaitsForItsNameAtMostNameWaitMs() {
        reads.consider(report(7))
        XCTAssertTrue(reader.reads.isEmpty, "waiting for the scan response's name")
        run(forMs: 400)
        events.named.insert(report(7).addressString)
        reads.nameHeard()
        XCTAssertEqual(reader.reads.first?.at, 10_400, "the name came: read at once")
        reads.stop()
        reads.consider(report(8))
        XCTAssertEqual(reader.reads.count, 1, "stopped: nothing new")
        XCTAssertEqual(reader.cancelled, 1)

        setUp()
        reads.consider(report(9))
        run(forMs: IdentityReads.nameWaitMs + 50)
        XCTAssertEqual(reader.reads.first?.at, 10_000 + IdentityReads.nameWaitMs, "no name: read after nameWaitMs")
    }

    func testTheScanIsRestartedAroundEachReadAndAgainWhenRefused() {
        events.named = [report(1).addressString]
        reads.consider(report(1))
        run(forMs: 10)
        XCTAssertEqual(scan.calls, ["pause@10000", "resume@10000"], "restarted once after the connect call")
        scan.calls = []
        scan.refusedResumes = 2
        run(forMs: 1000)
        reader.finish(.success([1]))
        run(forMs: IdentityReads.settleMs + 2 * IdentityReads.resumeRetryMs + 50)
        XCTAssertEqual(scan.calls.filter { $0.hasPrefix("resume") }.count, 3, "Command Disallowed twice, then on: \(scan.calls)")
        XCTAssertTrue(events.notResumed.isEmpty)
        XCTAssertFalse(reads.isReading)
    }

    func testAScanThatCannotResumeEndsAndTheRefusalsAreBounded() {
        events.named = [report(1).addressString]
        reads.consider(report(1))
        run(forMs: 10)
        scan.refusedResumes = 100
        reader.finish(.success([1]))
        run(forMs: IdentityReads.settleMs + Int64(IdentityReads.resumeAttempts) * IdentityReads.resumeRetryMs + 100)
        XCTAssertEqual(events.notResumed, [.command(.status(.leSetScanEnable, .commandDisallowed))],
                       "after \(IdentityReads.resumeAttempts) refusals the scan is told it could not resume")
    }

    func testListeningTimeStopsWhileAReadHasTheScan() {
        XCTAssertEqual(reads.listeningMs(), 10_000)
        events.named = [report(1).addressString]
        reads.consider(report(1))
        run(forMs: 2000)
        XCTAssertEqual(reads.listeningMs(), 10_000, "paused while the kernel connects")
        reader.finish(.success([1]))
        run(forMs: IdentityReads.settleMs + 10)
        let afterRead = reads.listeningMs()
        run(forMs: 1000)
        XCTAssertEqual(reads.listeningMs() - afterRead, 1000, "listening again")
        XCTAssertEqual(afterRead, 10_000 + 10, "the read's whole pause left out (the 10 ms after the scan came back counted)")
    }

    func testDrainLetsTheReadInProgressFinishAndStartsNoOther() {
        events.named = [report(1).addressString, report(2).addressString]
        reads.consider(report(1))
        reads.consider(report(2))
        XCTAssertTrue(reads.drain(), "a read is in progress")
        reader.finish(.success([9]))
        run(forMs: 2000)
        XCTAssertEqual(reader.reads.count, 1)
        XCTAssertEqual(events.reports.count, 1)
        reads.consider(report(3))
        XCTAssertEqual(reader.reads.count, 1, "draining: nothing new")
    }
}
