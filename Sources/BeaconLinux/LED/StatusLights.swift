import BeaconKit

/// The status and fault LEDs (SPEC §4). Never throws: an LED that cannot be had is logged once,
/// naming chip and line, and the beacon goes on without it. Blinking costs one event-loop timer
/// of its own, cancelled whenever every LED is steady.
///
/// Size: 13 stored fields, one past 12: the GPIO chip and its two lines, each given back on exit,
/// the blink timer, and what is shown on them (health, pattern, its origin, the levels written);
/// the patterns themselves are BeaconKit's `LEDPatterns`.
public final class StatusLights {
    public static let consumer = "altbeacond"

    private let blink: LoopTimer
    private let log: Logger
    private let now: () -> Int64
    private var settings: LEDSettings?
    private var chip: GPIOChip?
    private var status: GPIOOutputLine?
    private var fault: GPIOOutputLine?
    /// Last level written to each line, so a repeated level costs no syscall and no glitch.
    private var written: (status: Bool?, fault: Bool?) = (nil, nil)
    private var health: BeaconHealth = .starting
    private var shown = false
    private var patterns = LEDPatterns(status: .off, fault: nil)
    private var origin: Int64 = 0
    /// Messages already logged for the current settings: each failure is said once.
    private var said: Set<String> = []

    public init(settings: LEDSettings, loop: EventLoop, log: Logger,
                clock: @escaping () -> Int64 = monotonicMilliseconds) {
        blink = loop.makeTimer()
        self.log = log
        self.now = clock
        self.settings = settings
        acquire()
    }

    deinit { releaseLines() }

    /// Whether the status line is held (tests).
    public var holdsStatusLine: Bool { status != nil }
    public var currentHealth: BeaconHealth? { shown ? health : nil }
    /// True while a pattern needs its timer (tests: steady LEDs cost no wakeups).
    public var isBlinking: Bool { blink.isScheduled }

    /// Shows `health`. The same health again changes nothing, so a blink keeps its phase. The
    /// daemon calls this once per change of its status, after the loop turn's events were handled.
    public func show(_ health: BeaconHealth) {
        if shown && health == self.health { return }
        let wasStopped = shown && self.health == .stopped
        self.health = health
        shown = true
        if health == .stopped {
            releaseLines()
            return
        }
        if wasStopped { acquire() }
        restartPattern()
    }

    /// Drives every LED dark and gives the lines back to the kernel (on exit).
    public func release() {
        health = .stopped
        shown = true
        releaseLines()
    }

    /// New `[leds]` settings (nil: no LEDs). Lines are released and requested again when the
    /// settings changed, or retried when some could not be had before.
    public func reconfigure(_ new: LEDSettings?) {
        let changed = new != settings
        let missing = new != nil && (chip == nil || status == nil || (new?.fault != nil && fault == nil))
        guard changed || missing else { return }
        releaseLines()
        settings = new
        if changed { said.removeAll() }
        if shown && health == .stopped { return }
        acquire()
        if shown { restartPattern() }
    }

    // MARK: - lines

    private func acquire() {
        guard let s = settings else { return }
        let chip: GPIOChip
        do {
            if let spec = s.chip { chip = try GPIOChip(opening: spec) } else { chip = try GPIOChip.openHeaderChip() }
        } catch {
            say("LEDs off: GPIO chip " + (s.chip.map { "\"\($0)\"" } ?? "of the header") + " (status LED line \(s.status)): \(error)")
            return
        }
        let what = "\(chip.path) (\(chip.label))"
        status = request(s.status, role: "status", on: chip, what: what, activeLow: s.activeLow)
        if let f = s.fault {
            fault = request(f, role: "fault", on: chip, what: what, activeLow: s.activeLow)
        }
        guard status != nil || fault != nil else { return }
        self.chip = chip
        let held = [status.map { "status on line \($0.offset)" }, fault.map { "fault on line \($0.offset)" }]
            .compactMap { $0 }.joined(separator: ", ")
        say("LEDs: \(held) of \(what)\(s.activeLow ? ", active-low" : "")", level: .info)
    }

    private func request(_ ref: GPIOLineRef, role: String, on chip: GPIOChip, what: String,
                         activeLow: Bool) -> GPIOOutputLine? {
        do {
            let off = try chip.offset(of: ref)
            return try chip.requestOutput(offset: off, consumer: Self.consumer, activeLow: activeLow, lit: false)
        } catch {
            say("\(role) LED unavailable: line \(ref) of GPIO chip \(what): \(error)")
            return nil
        }
    }

    /// Dark first, then released: on most chips a released line keeps its last level.
    private func releaseLines() {
        blink.cancel()
        for line in [status, fault].compactMap({ $0 }) {
            try? line.set(lit: false)
            line.release()
        }
        status = nil
        fault = nil
        written = (nil, nil)
        chip?.close()
        chip = nil
    }

    // MARK: - patterns

    private func restartPattern() {
        log.debug("LEDs: \(health)")
        patterns = LEDPatterns(health: health, hasFaultLED: fault != nil)
        origin = now()
        tick()
    }

    /// Writes the levels due now and schedules the next change, if any.
    private func tick() {
        let t = now() - origin
        write(&written.status, patterns.status.isLit(atMs: t), to: status, role: "status")
        write(&written.fault, patterns.fault?.isLit(atMs: t) ?? false, to: fault, role: "fault")
        // Only held lines need the timer; if only the status line is held its pattern decides.
        let next = [status.flatMap { _ in patterns.status.nextTransition(afterMs: t) },
                    fault.flatMap { _ in patterns.fault?.nextTransition(afterMs: t) }].compactMap { $0 }.min()
        guard let next else { return blink.cancel() }
        blink.schedule(afterMs: next - t) { [weak self] in self?.tick() }
    }

    private func write(_ last: inout Bool?, _ lit: Bool, to line: GPIOOutputLine?, role: String) {
        guard let line, last != lit else { return }
        do {
            try line.set(lit: lit)
            last = lit
        } catch {
            say("\(role) LED: cannot set line \(line.offset): \(error)")
        }
    }

    private func say(_ message: String, level: LogLevel = .warning) {
        guard said.insert(message).inserted else { return }
        log.log(level, message)
    }
}
