import BeaconKit
import Glibc
import XCTest
@testable import BeaconLinux

/// XCTest brings in Foundation, which has a Scanner of its own.
private typealias Scanner = BeaconLinux.Scanner

/// A scripted controller: answers each command on a later turn with the status set for its
/// opcode (success by default), or never when its opcode is in `silent` or it is the
/// `silentFrom`th command sent or later.
private final class ScriptedScanController: HCITransport, ControllerAccess {
    let index: UInt16 = 1
    let loop: EventLoop
    var extendedFeature = false
    var statuses: [HCIOpcode: HCIStatus] = [:]
    var silent: Set<HCIOpcode> = []
    var silentFrom = Int.max
    var powerError: Errno?
    /// Command Disallowed to this many more parameters commands / enables (another program's
    /// scan starting in between), then the status set as usual.
    var busyParameters = 0
    var busyEnables = 0
    var sent: [HCIOpcode] = []
    /// The parameters each opcode was last sent with.
    var parameters: [HCIOpcode: [UInt8]] = [:]
    private var onPacket: ((ArraySlice<UInt8>) -> Void)?
    private var onLost: ((Errno) -> Void)?

    init(loop: EventLoop) { self.loop = loop }

    // HCITransport
    func write(_ packet: [UInt8]) throws(Errno) {
        let op = HCIOpcode(rawValue: UInt16(packet[1]) | UInt16(packet[2]) << 8)
        sent.append(op)
        parameters[op] = Array(packet.dropFirst(4))
        if silent.contains(op) || sent.count > silentFrom { return }
        var rp: [UInt8] = [statuses[op]?.rawValue ?? 0]
        if op == .leSetScanParameters || op == .leSetExtendedScanParameters, busyParameters > 0 {
            busyParameters -= 1
            rp = [HCIStatus.commandDisallowed.rawValue]
        } else if op == .leSetScanEnable || op == .leSetExtendedScanEnable, packet.count > 4, packet[4] == 1, busyEnables > 0 {
            busyEnables -= 1
            rp = [HCIStatus.commandDisallowed.rawValue]
        }
        if op == .leReadLocalFeatures { rp += [0, extendedFeature ? 0x10 : 0, 0, 0, 0, 0, 0, 0] }
        deliver([0x0e, UInt8(3 + rp.count), 1, UInt8(op.rawValue & 0xff), UInt8(op.rawValue >> 8)] + rp)
    }
    func start(onPacket: @escaping (ArraySlice<UInt8>) -> Void, onLost: @escaping (Errno) -> Void) {
        self.onPacket = onPacket
        self.onLost = onLost
    }
    func close() { onPacket = nil }
    func deliver(_ event: [UInt8]) { loop.post { [self] in onPacket?(([0x04] + event)[...]) } }
    func breakTransport(_ e: Errno) { loop.post { [self] in onLost?(e) } }

    // ControllerAccess
    func openTransport() throws(Errno) -> HCITransport { self }
    func setPower(up: Bool, _ done: @escaping (Errno?) -> Void) { loop.post { [self] in done(powerError) } }
    var isChangingPower: Bool { false }
}

/// What a scanner told its delegate.
private final class ScannerEvents: ScannerDelegate {
    var reports: [AdvertisingReport] = []
    var lost: [Errno] = []
    func scanner(_ event: ScannerEvent) {
        switch event {
        case .reports(let r): reports += r
        case .lost(let e): lost.append(e)
        }
    }
}

final class ScannerTests: XCTestCase {
    private var loop: EventLoop!
    private var controller: ScriptedScanController!
    private var exists = true

    override func setUp() {
        loop = EventLoop(clock: LoopClock(virtualStartingAt: 0))
        controller = ScriptedScanController(loop: loop)
        exists = true
    }

    private func makeScanner() -> Scanner {
        Scanner(controller: controller, loop: loop, log: Logger(threshold: .error, sink: { _ in }),
                exists: { [weak self] () throws(Errno) -> Bool in self?.exists ?? false },   // gone: no adapter
                openTransport: { [weak self] () throws(Errno) -> HCITransport in
                    guard let self else { throw Errno.noDevice }
                    return controller
                })
    }

    /// Starts `s` and runs the loop until it reports (a bounded number of turns: a virtual clock with
    /// nothing scheduled never moves).
    private func start(_ s: Scanner, file: StaticString = #filePath, line: UInt = #line) -> ScanFailure? {
        var result: ScanFailure??
        s.start { result = .some($0) }
        for _ in 0..<1000 where result == nil { loop.runOnce() }
        guard let r = result else {
            XCTFail("start never reported", file: file, line: line)
            return .missing
        }
        return r
    }

    /// Stops `s`; what its `done` said.
    private func stop(_ s: Scanner, file: StaticString = #filePath, line: UInt = #line) -> HCICommandFailure? {
        var result: HCICommandFailure??
        s.stop { result = .some($0) }
        settle()
        guard let r = result else {
            XCTFail("stop never reported", file: file, line: line)
            return .timeout(.reset)
        }
        return r
    }

    private func settle() { for _ in 0..<20 { loop.runOnce() } }

    func testLegacySequenceThenReportsThenStop() {
        let s = makeScanner()
        XCTAssertNil(start(s))
        XCTAssertEqual(s.family, ScanFamily.legacy)
        XCTAssertEqual(controller.sent, [.leReadLocalFeatures, .leSetScanEnable, .leSetScanParameters, .leSetScanEnable])
        let events = ScannerEvents()
        s.delegate = events
        // LE Advertising Report: one report, address 1..6, 2 data bytes, RSSI -60.
        controller.deliver([0x3e, 14, 0x02, 1, 0x03, 0x00, 1, 2, 3, 4, 5, 6, 2, 0xaa, 0xbb, 0xc4])
        settle()
        XCTAssertEqual(events.reports.map(\.data), [[0xaa, 0xbb]])
        XCTAssertEqual(events.reports.first?.rssi, -60)
        XCTAssertNil(stop(s))
        XCTAssertEqual(controller.sent.last, .leSetScanEnable)
        XCTAssertNil(s.family)
    }

    func testDisableAlreadyDisabledIsNoFailure() {
        controller.statuses[.leSetScanEnable] = .commandDisallowed
        controller.statuses[.leSetExtendedScanEnable] = .commandDisallowed
        let s = makeScanner()
        // The first disable is tolerated; the enable itself refused falls back to extended, whose
        // enable is refused too: the start fails with that refusal.
        XCTAssertEqual(start(s), ScanFailure.command(.status(.leSetExtendedScanEnable, .commandDisallowed)))
        // Each family asked again busyRetries times (a scan of another program's in between, as far as it can tell).
        XCTAssertEqual(controller.sent.filter { $0 == .leSetScanParameters }.count, Scanner.busyRetries + 1)
        XCTAssertEqual(controller.sent.filter { $0 == .leSetExtendedScanParameters }.count, Scanner.busyRetries + 1)
    }

    /// Another observer on the adapter enabling scanning between our disable and our parameters
    /// or enable (the aarch64 testbed's frames-rotation failure): the legacy sequence again, not
    /// extended commands a controller without them does not know.
    func testAnotherScanInBetweenIsWaitedOutInTheLegacyFamily() {
        controller.busyParameters = 3
        controller.busyEnables = 2
        let s = makeScanner()
        XCTAssertNil(start(s))
        XCTAssertEqual(s.family, ScanFamily.legacy)
        XCTAssertFalse(controller.sent.contains(.leSetExtendedScanParameters))
        XCTAssertEqual(controller.sent.filter { $0 == .leSetScanParameters }.count, 3 + 2 + 1)
        XCTAssertEqual(controller.parameters[.leSetScanEnable]?.first, 0x01)
    }

    /// A Bluetooth 5 controller refusing legacy commands is the mixing rule, not a passing scan:
    /// one more try, then extended commands, without waiting out twenty.
    func testExtendedControllerRefusingLegacyGoesExtendedAfterOneRetry() {
        controller.extendedFeature = true
        controller.statuses[.leSetScanParameters] = .commandDisallowed
        let s = makeScanner()
        XCTAssertNil(start(s))
        XCTAssertEqual(s.family, ScanFamily.extended)
        XCTAssertEqual(controller.sent.filter { $0 == .leSetScanParameters }.count, 2)
    }

    /// A stop while a retry waits: nothing more is sent, and start reports nothing.
    func testStopDuringABusyRetrySendsNothingMore() {
        controller.busyParameters = 100
        let s = makeScanner()
        var result: ScanFailure?? = nil
        s.start { result = .some($0) }
        for _ in 0..<8 { loop.runOnce() }
        XCTAssertNil(stop(s))
        let sent = controller.sent.count
        loop.runOnce(maxWaitMs: 50)
        settle()
        XCTAssertEqual(controller.sent.count, sent)
        XCTAssertTrue(result == nil, "start reported after a stop")
    }

    func testCommandDisallowedFallsBackToExtended() {
        controller.statuses[.leSetScanParameters] = .commandDisallowed
        let s = makeScanner()
        XCTAssertNil(start(s))
        XCTAssertEqual(s.family, ScanFamily.extended)
        XCTAssertEqual(Array(controller.sent.suffix(3)), [.leSetExtendedScanEnable, .leSetExtendedScanParameters, .leSetExtendedScanEnable])
        XCTAssertNil(stop(s))
        XCTAssertEqual(controller.sent.last, .leSetExtendedScanEnable)
    }

    func testOtherLegacyFailureFallsBackOnlyWithExtendedFeature() {
        controller.statuses[.leSetScanParameters] = .invalidParameters
        XCTAssertEqual(start(makeScanner()), ScanFailure.command(.status(.leSetScanParameters, .invalidParameters)))
        XCTAssertFalse(controller.sent.contains(.leSetExtendedScanParameters))

        setUp()
        controller.extendedFeature = true
        controller.statuses[.leSetScanParameters] = .unknownCommand
        let s = makeScanner()
        XCTAssertNil(start(s))
        XCTAssertEqual(s.family, ScanFamily.extended)
    }

    func testMissingAdapterAndPowerFailures() {
        exists = false
        XCTAssertEqual(start(makeScanner()), ScanFailure.missing)
        XCTAssertTrue(controller.sent.isEmpty)

        setUp()
        controller.powerError = .rfkilled
        XCTAssertEqual(start(makeScanner()), ScanFailure.blocked)

        setUp()
        controller.powerError = .alreadyInProgress
        XCTAssertNil(start(makeScanner()))
    }

    func testSilentControllerTimesOutAfterOneSecond() {
        controller.silent = [.leReadLocalFeatures]
        XCTAssertEqual(start(makeScanner()), ScanFailure.command(.timeout(.leReadLocalFeatures)))
        XCTAssertEqual(loop.now, Scanner.commandTimeoutMs)
    }

    func testStopDuringStartSupersedesItAndDisablesWhatWasBeingEnabled() {
        controller.silentFrom = 3   // features, disable, parameters answered; the enable not
        let s = makeScanner()
        var reported = false
        s.start { _ in reported = true }
        for _ in 0..<100 where controller.sent.count < 4 { loop.runOnce() }
        XCTAssertEqual(controller.sent, [.leReadLocalFeatures, .leSetScanEnable, .leSetScanParameters, .leSetScanEnable],
                       "the enable is in flight")
        controller.silentFrom = .max
        XCTAssertNil(stop(s))
        XCTAssertFalse(reported, "a superseded start does not report")
        XCTAssertEqual(controller.sent.count, 5)
        XCTAssertEqual(controller.sent.last, .leSetScanEnable)
        while loop.now < 5000 && loop.scheduledTimerCount > 0 { loop.runOnce() }
        XCTAssertFalse(reported, "nor does its command's deadline")
    }

    func testLostWhileScanningIsReportedAndStopThenFails() {
        let s = makeScanner()
        XCTAssertNil(start(s))
        let events = ScannerEvents()
        s.delegate = events
        controller.breakTransport(.noDevice)
        settle()
        XCTAssertEqual(events.lost, [.noDevice])
        XCTAssertEqual(stop(s), HCICommandFailure.io(.noDevice))
    }

    func testPassiveUnlessActive() {
        XCTAssertNil(start(makeScanner()))
        XCTAssertEqual(controller.parameters[.leSetScanParameters], [0x00, 0x10, 0x00, 0x10, 0x00, 0x00, 0x00])
        setUp()
        let s = makeScanner()
        s.active = true
        XCTAssertNil(start(s))
        XCTAssertEqual(controller.parameters[.leSetScanParameters]?.first, 0x01, "scan requests: scan responses are reported")
        setUp()
        controller.statuses[.leSetScanParameters] = .commandDisallowed
        let e = makeScanner()
        e.active = true
        XCTAssertNil(start(e))
        XCTAssertEqual(controller.parameters[.leSetExtendedScanParameters]?[3], 0x01)
    }

    /// `--read-identity` pauses around each connection: scanning off (no reports meanwhile),
    /// then on again in the family it was in, with the same parameters.
    func testPauseThenResumeInTheSameFamily() {
        controller.statuses[.leSetScanParameters] = .commandDisallowed
        let s = makeScanner()
        s.active = true
        XCTAssertNil(start(s))
        XCTAssertEqual(s.family, ScanFamily.extended)
        let events = ScannerEvents()
        s.delegate = events
        var paused: HCICommandFailure?? = nil
        s.pause { paused = .some($0) }
        settle()
        XCTAssertEqual(paused, .some(nil))
        XCTAssertNil(s.family)
        XCTAssertEqual(controller.sent.last, .leSetExtendedScanEnable)
        XCTAssertEqual(controller.parameters[.leSetExtendedScanEnable]?.first, 0x00)
        controller.deliver([0x3e, 14, 0x02, 1, 0x03, 0x00, 1, 2, 3, 4, 5, 6, 2, 0xaa, 0xbb, 0xc4])
        settle()
        XCTAssertEqual(events.reports.count, 0, "no reports while paused")
        let before = controller.sent.count
        var resumed: ScanFailure?? = nil
        s.resume { resumed = .some($0) }
        settle()
        XCTAssertEqual(resumed, .some(nil))
        XCTAssertEqual(Array(controller.sent[before...]), [.leSetExtendedScanEnable, .leSetExtendedScanParameters, .leSetExtendedScanEnable])
        XCTAssertEqual(controller.parameters[.leSetExtendedScanParameters]?[3], 0x01, "still active")
        XCTAssertEqual(s.family, ScanFamily.extended)
        controller.deliver([0x3e, 14, 0x02, 1, 0x03, 0x00, 1, 2, 3, 4, 5, 6, 2, 0xaa, 0xbb, 0xc4])
        settle()
        XCTAssertEqual(events.reports.count, 1)
    }

    func testResumeFailuresAndSupersession() {
        let s = makeScanner()
        XCTAssertNil(start(s))
        var r: ScanFailure?? = nil
        s.resume { r = .some($0) }
        settle()
        XCTAssertEqual(r, .some(.io(Errno(EBADF))), "nothing paused")
        s.pause { _ in }
        settle()
        controller.statuses[.leSetScanEnable] = .hardwareFailure
        r = nil
        s.resume { r = .some($0) }
        settle()
        XCTAssertEqual(r, .some(.command(.status(.leSetScanEnable, .hardwareFailure))))
        // A stop while resuming supersedes the resume: it does not report.
        controller.statuses = [:]
        r = nil
        let c = controller.sent.count
        controller.silentFrom = c + 2   // disable and parameters answered, the enable not
        s.resume { r = .some($0) }
        for _ in 0..<100 where controller.sent.count < c + 3 { loop.runOnce() }
        XCTAssertEqual(controller.sent.count, c + 3, "the enable is in flight")
        controller.silentFrom = .max
        XCTAssertNil(stop(s))
        while loop.now < 5000 && loop.scheduledTimerCount > 0 { loop.runOnce() }
        XCTAssertTrue(r == nil, "a superseded resume does not report")
        XCTAssertNil(s.family)
    }
}
