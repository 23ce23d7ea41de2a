import BeaconKit
import Glibc
@testable import BeaconLinux

/// What the scripted controller answers to one command, instead of what its model says.
enum ScriptedAnswer: Equatable {
    /// Command Complete with this status (`.success`: the modelled effect and return parameters).
    case status(HCIStatus)
    /// A Command Status with this status, and nothing else.
    case commandStatus(HCIStatus)
    /// Never answered, and no effect: the hang.
    case silence
    /// Command Complete with exactly these return parameters (status first), and no effect.
    case returnParameters([UInt8])
}

/// What one HCIDEVUP / HCIDEVDOWN does.
enum PowerAnswer: Equatable {
    /// nil: what the model says (EALREADY when already up, ERFKILL when blocked, ENODEV when gone).
    case result(Errno?, afterMs: Int64)
    /// Never returns (a hung HCIDEVUP), until `finishHungPower`.
    case never
}

/// An in-process Bluetooth controller for the unit tests: a `ControllerAccess` that opens
/// `ScriptedHCITransport`s, decodes each command packet written to them (H4 0x01, opcode LE, length,
/// parameters), applies it to a model of the controller's advertising state and answers on a
/// later loop turn, the way the kernel's raw HCI socket would. A script overrides the model per
/// opcode (once or always): any status, a Command Status, or silence.
final class ScriptedHCIController: ControllerAccess {
    let index: UInt16
    let loop: EventLoop

    // What the controller can do.
    var hciVersion: UInt8
    var extended: Bool
    var supportedSets: UInt8
    /// Refuses non-connectable intervals under 100 ms with Invalid HCI Command Parameters (4.x).
    var refusesShortIntervals = false
    /// Refuses legacy advertising commands once extended ones were used, and the reverse, until
    /// reset or power cycle (Core v5.x Vol 4 Part E §3.1.1).
    var enforcesCommandKinds = false
    /// As the Core spec says: LE Clear Advertising Sets is refused with Command Disallowed while any
    /// set is enabled. false: clears whatever their state.
    var strictClear = true
    /// Answers Command Disallowed to an enable when already enabled (or a disable when disabled).
    var refusesRedundantEnable = false
    /// Answers Command Disallowed to every enable while a central is connected (a controller that
    /// cannot advertise beside a peripheral link), leaving advertising off.
    var refusesEnableWhileConnected = false
    /// Every answer comes this long after the command (0: on the next loop turn).
    var answerDelayMs: Int64 = 0
    /// Hung: commands are neither executed nor answered.
    var silent = false

    // The model: what it advertises (the advertiser keeps the same model of what it put there).
    var state = AdvertisingState()
    /// What `advertisingAddress` answers the advertiser (the address repair's static random one).
    var advertisingAddress: BluetoothAddress?
    /// Another program scans with this controller (LE Set Random Address is then refused).
    var scanning = false
    /// Links to centrals by handle, and the kernel disconnects asked for (addresses).
    var links: [UInt16: [UInt8]] = [:]
    var disconnectRequests: [[UInt8]] = []
    var isUp = true
    var isPresent = true
    var rfkillBlocked = false
    enum Kind { case legacy, extended }
    var usedKind: Kind?

    // The model as the tests read it.
    var sets: [UInt8: AdvertisingState.Slot] {
        get { state.sets }
        set { state.sets = newValue }
    }
    var legacyEnabled: Bool { state.legacy.enabled }
    var legacyData: [UInt8] { state.legacy.data }
    var legacyIntervalUnits: UInt32 { state.legacy.intervalUnits }
    var legacyConnectable: Bool { state.legacy.connectable }
    var legacyScanResponse: [UInt8] { state.legacy.scanResponse }
    var legacyOwnRandom: Bool { state.legacy.ownRandom }
    /// LE Set Random Address's address.
    var legacyRandomAddress: [UInt8]? { state.randomAddress }

    // The script.
    var once: [HCIOpcode: [ScriptedAnswer]] = [:]
    var always: [HCIOpcode: ScriptedAnswer] = [:]
    var powerUpScript: [PowerAnswer] = []
    var powerUpDefault: PowerAnswer = .result(nil, afterMs: 0)
    var powerDownScript: [PowerAnswer] = []
    var powerDownDefault: PowerAnswer = .result(nil, afterMs: 0)

    // What happened.
    var log: [HCIOpcode] = []
    var written: [(opcode: HCIOpcode, parameters: [UInt8], at: Int64)] = []
    var powerCalls: [(up: Bool, at: Int64)] = []
    /// Every change of what a receiver hears, with its virtual time.
    var airHistory: [(at: Int64, air: [[UInt8]])] = []
    var transports: [ScriptedHCITransport] = []

    /// The kernel's HCI monitor: every command written to this controller, ours and `foreign`
    /// ones, on a later turn (wire it to `AdapterSession.monitored`).
    var monitor: ((HCIOpcode, [UInt8]) -> Void)?
    /// The kernel's device events for this index (wire it to `AdapterSession.deviceEvent`).
    var onDeviceEvent: ((HCIDeviceEventKind) -> Void)?

    private var powerRunning: ((Errno?) -> Void)?
    private var hungPowerUp: Bool?
    private var pendingTimers: [Int: LoopTimer] = [:]
    private var nextTimer = 0

    init(index: UInt16 = 0, loop: EventLoop, hciVersion: UInt8 = 0x09, extended: Bool = true, sets: UInt8 = 4) {
        self.index = index
        self.loop = loop
        self.hciVersion = hciVersion
        self.extended = extended
        supportedSets = sets
    }

    /// A Bluetooth 4.0 controller without extended advertising (the Pi 3's BCM43438).
    static func legacy(index: UInt16 = 0, loop: EventLoop) -> ScriptedHCIController {
        let c = ScriptedHCIController(index: index, loop: loop, hciVersion: 0x06, extended: false, sets: 0)
        c.refusesShortIntervals = true
        return c
    }

    // MARK: what a receiver hears

    /// The payload of legacy advertising (when enabled), then of every enabled set, highest handle first.
    var onAir: [[UInt8]] {
        guard isUp, isPresent else { return [] }
        return state.onAir
    }

    func count(_ op: HCIOpcode) -> Int { log.filter { $0 == op }.count }

    // MARK: the script

    func answer(_ op: HCIOpcode, _ a: ScriptedAnswer, times: Int = 1) {
        once[op, default: []] += Array(repeating: a, count: times)
    }

    func answerAlways(_ op: HCIOpcode, _ a: ScriptedAnswer?) { always[op] = a }

    /// Sets a previous process left enabled (SIGKILL).
    func preload(handle: UInt8, data: [UInt8], enabled: Bool = true) {
        sets[handle] = AdvertisingState.Slot(enabled: enabled, data: data, intervalUnits: 160)
        usedKind = .extended
        noteAir()
    }

    // MARK: faults from outside

    /// Another process's command (hcitool, bluetoothd): executed, seen on the monitor, not answered to us.
    func foreign(_ command: any HCICommand) {
        let op = type(of: command).opcode, params = command.parameters
        if isUp, isPresent, !silent { _ = execute(op, params) }
        if let m = monitor { loop.post { m(op, params) } }
    }

    /// `hciconfig hciN down` by someone else.
    func externalDown() {
        guard isUp else { return }
        isUp = false
        forget()
        event(.down)
    }

    func block() {
        rfkillBlocked = true
        externalDown()
    }

    func unblock() { rfkillBlocked = false }

    /// Driver unbound, dongle pulled: transports break (ENODEV), the index is unregistered.
    func unplug() {
        isPresent = false
        isUp = false
        forget()
        loseTransports(.noDevice)
        event(.unregistered)
    }

    /// The open sockets break (`onLost`), the controller itself stays.
    func loseTransports(_ e: Errno = .noDevice) {
        for t in transports where !t.isClosed { loop.post { t.lose(e) } }
    }

    /// Back again: registered, down, nothing configured.
    func plugIn() {
        isPresent = true
        isUp = false
        forget()
        event(.registered)
    }

    /// The firmware hangs: its radio stops and commands go unanswered until `silent` is false again.
    func hang() {
        silent = true
        forget()
    }

    /// The controller forgets every set and advertising (a reset).
    func reset() { forget() }

    func hardwareError(code: UInt8 = 0x01) {
        for t in transports where !t.isClosed { reply(t, [0x04, 0x10, 1, code]) }
    }

    /// Ends a `.never` power call with `result` (nil: what the model says).
    func finishHungPower(_ result: Errno? = nil) {
        guard let up = hungPowerUp else { return }
        hungPowerUp = nil
        completePower(up: up, scripted: result)
    }

    var openTransports: Int { transports.filter { !$0.isClosed }.count }

    // MARK: ControllerAccess

    func openTransport() throws(Errno) -> HCITransport {
        guard isPresent else { throw .noDevice }
        let t = ScriptedHCITransport(controller: self)
        transports.append(t)
        return t
    }

    /// As `KernelController` (a BlockingCall): one call at a time; a call made while another runs
    /// is refused (`Errno.callInProgress`, on a later turn) and not counted in `powerCalls`.
    func setPower(up: Bool, _ done: @escaping (Errno?) -> Void) {
        guard powerRunning == nil else { return loop.post { done(.callInProgress) } }
        powerCalls.append((up, loop.now))
        powerRunning = done
        let a: PowerAnswer
        if up {
            a = powerUpScript.isEmpty ? powerUpDefault : powerUpScript.removeFirst()
        } else {
            a = powerDownScript.isEmpty ? powerDownDefault : powerDownScript.removeFirst()
        }
        switch a {
        case .never: hungPowerUp = up
        case .result(let e, let ms): after(ms) { [weak self] in self?.completePower(up: up, scripted: e) }
        }
    }

    var isChangingPower: Bool { powerRunning != nil }

    private func completePower(up: Bool, scripted: Errno?) {
        var result = scripted
        if result == nil {
            if !isPresent {
                result = .noDevice
            } else if up && rfkillBlocked {
                result = .rfkilled
            } else if up && isUp {
                result = .alreadyInProgress
            } else if up != isUp {
                isUp = up
                forget()
                // The kernel's event, read while the call is still running (ours, not a fault).
                event(up ? .up : .down)
            }
        }
        loop.post { [weak self] in
            guard let self else { return }
            let done = powerRunning
            powerRunning = nil
            done?(result)
        }
    }

    /// A central connects to the connectable advertising on air, as a controller does: the
    /// connectable set (legacy: all advertising) stops; LE Connection Complete, peripheral role.
    func centralConnects(handle: UInt16, peer: [UInt8] = [1, 2, 3, 4, 5, 6]) {
        if state.legacy.connectable { state.legacy.enabled = false }
        for (h, set) in sets where set.connectable && set.enabled { sets[h]!.enabled = false }
        links[handle] = peer
        noteAir()
        var e: [UInt8] = [0x04, 0x3e, 19, 0x01, 0x00, UInt8(handle & 0xff), UInt8(handle >> 8), 0x01, 0x00]
        e += peer
        e += [0x28, 0x00, 0x00, 0x00, 0xc8, 0x00, 0x00]
        for t in transports where !t.isClosed { reply(t, e) }
    }

    /// The link ends (the central left, or the kernel disconnected it): Disconnection Complete.
    func linkEnds(handle: UInt16) {
        guard links.removeValue(forKey: handle) != nil else { return }
        for t in transports where !t.isClosed { reply(t, [0x04, 0x05, 4, 0x00, UInt8(handle & 0xff), UInt8(handle >> 8), 0x13]) }
    }

    func disconnect(address: [UInt8], random: Bool) throws(Errno) {
        disconnectRequests.append(address)
        for (h, peer) in links where peer == address { linkEnds(handle: h) }
    }

    func forget() {
        state.forget()
        usedKind = nil
        noteAir()
    }

    func noteAir() {
        let air = onAir
        if airHistory.last?.air != air { airHistory.append((loop.now, air)) }
    }

    private func event(_ kind: HCIDeviceEventKind) {
        guard let e = onDeviceEvent else { return }
        loop.post { e(kind) }
    }

    func after(_ ms: Int64, _ work: @escaping () -> Void) {
        guard ms > 0 else { return loop.post(work) }
        nextTimer += 1
        let id = nextTimer, t = loop.makeTimer()
        pendingTimers[id] = t
        t.schedule(afterMs: ms) { [weak self] in
            guard let self else { return }
            pendingTimers[id] = nil
            work()
        }
    }
}
