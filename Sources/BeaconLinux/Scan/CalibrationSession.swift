import BeaconKit

/// How a calibration ended.
public enum CalibrationOutcome: Equatable, Sendable {
    /// The time was up: `CalibrationSession.calibration` holds the samples.
    case done
    /// A signal ended it first.
    case interrupted
    case couldNotStart(ScanFailure)
    /// The adapter stopped answering.
    case adapterLost(Errno)
}

/// `altbeacond calibrate`: a passive scan of `seconds`, every report's samples recorded in
/// BeaconKit's `Calibration`, until the time is up, a signal, or the adapter going away. Its clock
/// is the loop's: the tests run it on a virtual one.
public final class CalibrationSession: ScannerDelegate {
    /// How long disabling scanning may take before the session ends anyway.
    static let stopBoundMs: Int64 = 500

    let seconds: UInt32
    let scanner: ScanRadio
    let loop: EventLoop
    let timer: LoopTimer
    public private(set) var calibration = Calibration()
    public private(set) var outcome = CalibrationOutcome.done
    var ending = false

    public init(seconds: UInt32, scanner: ScanRadio, loop: EventLoop) {
        self.seconds = seconds
        self.scanner = scanner
        self.loop = loop
        timer = loop.makeTimer()
    }

    /// Starts the scan; `scanning` runs once it is on. The loop stops when the session has ended.
    public func start(scanning: @escaping () -> Void) {
        scanner.delegate = self
        scanner.active = false
        scanner.start { [weak self] f in
            guard let self else { return }
            if let f {
                outcome = .couldNotStart(f)
                return loop.stop()
            }
            scanning()
            timer.schedule(afterMs: Int64(seconds) * 1000) { [weak self] in self?.end() }
        }
    }

    /// A signal: ends it without figures.
    public func interrupt() {
        guard !ending else { return }
        outcome = .interrupted
        end()
    }

    public func scanner(_ event: ScannerEvent) {
        switch event {
        case .reports(let reports):
            guard !ending else { return }
            for r in reports { for s in Sighting.all(in: r, atMs: loop.now) { calibration.record(s) } }
        case .lost(let e):
            guard !ending else { return }
            outcome = .adapterLost(e)
            end()
        }
    }

    private func end() {
        guard !ending else { return }
        ending = true
        scanner.stopScanning { [loop] _ in loop.stop() }
        timer.schedule(afterMs: Self.stopBoundMs) { [loop] in loop.stop() }
    }
}
