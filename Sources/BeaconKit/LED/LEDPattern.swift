/// What the LEDs tell a person looking at the Pi (SPEC §4).
public enum BeaconHealth: Equatable, Sendable {
    /// Starting, or re-arming the controller after a fault.
    case starting
    case advertising
    /// On air with the last good config; the last edit was refused.
    case advertisingWithRefusedEdit
    /// Adapter missing, blocked by rfkill, or failing.
    case adapterFault
    /// Shutting down: LEDs dark, lines released.
    case stopped
    /// Off air on purpose (`beacon.advertising = false`).
    case advertisingOff
    /// Asked to show which Pi this is (a change from afar): a strobe for 10 s.
    case identifying
}

/// One LED's behaviour over time: steady, or a periodic blink that is lit for `onMs` at the start
/// of every `periodMs`. Times are milliseconds since the pattern started, so a pattern change
/// always begins at a known phase and one timer can serve every LED.
public enum LEDPattern: Equatable, Sendable {
    case off
    case on
    case blink(periodMs: Int64, onMs: Int64)

    /// About 5 Hz, half lit: starting or re-arming.
    public static let fastBlink = LEDPattern.blink(periodMs: 200, onMs: 100)
    /// About 1 Hz, half lit: fault LED while an edit is refused.
    public static let slowBlink = LEDPattern.blink(periodMs: 1000, onMs: 500)
    /// Lit, with a short dark blink every second: single LED, edit refused.
    public static let onWithOffBlink = LEDPattern.blink(periodMs: 1000, onMs: 850)
    /// Dark, with a short flash every 2 s: single LED, adapter fault.
    public static let shortFlash = LEDPattern.blink(periodMs: 2000, onMs: 150)
    /// 0.25 Hz, half lit: advertising turned off on purpose (slower than anything else).
    public static let slowPulse = LEDPattern.blink(periodMs: 4000, onMs: 2000)
    /// A short flash every 300 ms on both LEDs: identify, unlike any health.
    public static let strobe = LEDPattern.blink(periodMs: 300, onMs: 40)

    /// A blink whose on-time is not strictly inside its period is really steady.
    public var normalized: LEDPattern {
        guard case .blink(let period, let on) = self else { return self }
        if period <= 0 || on >= period { return on > 0 ? .on : .off }
        return on <= 0 ? .off : self
    }

    public var isSteady: Bool {
        if case .blink = normalized { return false }
        return true
    }

    /// Whether the LED is lit `t` ms after the pattern started (t < 0 counts as 0).
    public func isLit(atMs t: Int64) -> Bool {
        switch normalized {
        case .off: return false
        case .on: return true
        case .blink(let period, let on): return max(0, t) % period < on
        }
    }

    /// The first time strictly after `t` at which the level changes, or nil when steady.
    public func nextTransition(afterMs t: Int64) -> Int64? {
        guard case .blink(let period, let on) = normalized else { return nil }
        let t = max(0, t)
        let start = t - t % period
        return t % period < on ? start + on : start + period
    }
}

/// The patterns of both LEDs for one health. `fault` is nil when there is no fault LED.
public struct LEDPatterns: Equatable, Sendable {
    public var status: LEDPattern
    public var fault: LEDPattern?

    public init(status: LEDPattern, fault: LEDPattern?) {
        self.status = status
        self.fault = fault
    }

    /// SPEC §4's table. Without a fault LED, the status LED carries the fault rows itself.
    public init(health: BeaconHealth, hasFaultLED: Bool) {
        switch (health, hasFaultLED) {
        case (.starting, _): self.init(status: .fastBlink, fault: .off)
        case (.advertising, _): self.init(status: .on, fault: .off)
        case (.advertisingWithRefusedEdit, true): self.init(status: .on, fault: .slowBlink)
        case (.advertisingWithRefusedEdit, false): self.init(status: .onWithOffBlink, fault: nil)
        case (.adapterFault, true): self.init(status: .off, fault: .on)
        case (.adapterFault, false): self.init(status: .shortFlash, fault: nil)
        case (.stopped, _): self.init(status: .off, fault: .off)
        case (.advertisingOff, _): self.init(status: .slowPulse, fault: .off)
        case (.identifying, _): self.init(status: .strobe, fault: .strobe)
        }
        if !hasFaultLED { fault = nil }
    }

    public var isSteady: Bool { status.isSteady && (fault?.isSteady ?? true) }

    /// The earliest level change of either LED after `t`, or nil when both are steady.
    public func nextTransition(afterMs t: Int64) -> Int64? {
        let times = [status.nextTransition(afterMs: t), fault?.nextTransition(afterMs: t)].compactMap { $0 }
        return times.min()
    }
}
