/// Puts the configured frames on air on one controller, the way the study guide does by hand,
/// with the fallbacks real controllers need (SPEC §3): one extended advertising set per frame
/// where the controller has them, else legacy commands with the frames taking turns (`AirPlan`).
/// Pure: the runner's outcomes (channel, power, command replies, controller events) in, the next
/// commands and events out (`AdvertiserAction`). One operation runs at a time: an arm supersedes
/// whatever was in flight (its replies never come: the runner abandons them), rotations, probes
/// and telemetry refreshes queue behind each other.
///
/// It sequences operations; its parts own the rest: `AdvertisedFrames` (the frames' bytes and how
/// they are sent), `CommandSteps` (one command in flight, how a refusal counts), `ControllerBringUp` (learning
/// the controller), `OwnedAdvertising`
/// (what of ours is on the controller), `FrameRotation`, `CentralLinks`, and `AdvertisingState`
/// (the controller's model, which the tests' controller also runs on).
///
/// Size (about 490 lines over 4 files, past the house's 250): what is left is the one sequence of
/// SPEC §3's stages and fallbacks (bring-up, leave, extended or legacy, the other on refusal) and
/// the upkeep queued behind it; cut further, an arm's order would be read across types.
public struct AdvertiserProcedure {
    public let index: UInt16
    /// What we put on the controller (accepted commands applied).
    public internal(set) var controller = AdvertisingState()
    public internal(set) var info: ControllerInfo?
    public internal(set) var channelOpen = false
    /// Centrals connected to our advertising.
    public internal(set) var links = CentralLinks()
    var frames = AdvertisedFrames()
    var steps = CommandSteps()
    var ours = OwnedAdvertising()
    var rotation = FrameRotation()
    var bringUp = ControllerBringUp()
    /// The operation in flight, its stage, and what waits behind it.
    var work = Work()

    struct Work {
        var operation: Operation?
        var stage = Stage.idle
        /// Rotations, probes and refreshes asked for while another operation ran.
        var waiting: [Operation] = []
    }

    enum Operation {
        case arm(generation: Int, config: BeaconConfig, scope: ArmScope, sameFrames: Bool)
        case rotate, refreshPayloads, probe
        case takeDown(deadlineMs: Int64)
    }

    public init(index: UInt16) {
        self.index = index
    }

    var adapter: String { "hci\(index)" }

    // MARK: what it tells

    public var commandTimeoutMs: Int64 {
        get { steps.commandTimeoutMs }
        set { steps.commandTimeoutMs = newValue }
    }
    /// The board's uptime and temperature for the TLM frame, as the runner last read them (it
    /// reads them before each operation while a frame carries telemetry); nil: none yet.
    public var board: BoardReading? {
        get { frames.board }
        set { frames.board = newValue }
    }
    public var effectiveIntervalMs: UInt16 { frames.effectiveIntervalMs }
    /// How the frames share the controller; nil when nothing of ours is known to be on air.
    public var plan: AirPlan? { ours.plan }
    /// The plan of the last arm, kept for the monitor and the status while re-arming.
    public var lastPlan: AirPlan? { ours.lastPlan }
    /// PDUs scheduled while each slot was enabled: what the TLM frame counts.
    public var counter: AdvertisingCounter { frames.counter }
    /// "legacy", "legacy, 3 frames in turn", "extended, sets 2 1 0"; "" before the first arm.
    public var mode: String { ours.mode }

    /// Ours on air, for classifying others' commands: every frame's payload and what each slot carries.
    public var onAir: OnAirAdvertising {
        let slots = [controller.legacy.data] + controller.sets.keys.sorted(by: >).map { controller.sets[$0]!.data }
        let responses = [controller.legacy.scanResponse] + controller.sets.values.map(\.scanResponse)
        return OnAirAdvertising(handles: (ours.plan ?? ours.lastPlan)?.handles,
                                payloads: frames.configured.map { $0.frame.advertisingData(.zero) } + slots.filter { !$0.isEmpty },
                                scanResponses: frames.configured.map(\.scanResponse).filter { !$0.isEmpty } + responses.filter { !$0.isEmpty })
    }

    var summary: AirSummary {
        guard let plan = ours.plan else { return AirSummary() }
        return AirSummary(rotates: plan.rotates, refreshesPayloads: !frames.standingRefreshedSlots(plan).isEmpty)
    }

    /// True when `config` (or, without one, what is configured now) has a frame that carries
    /// telemetry: the runner then reads the board before handing in an operation.
    public func wantsBoardReading(for config: BeaconConfig? = nil) -> Bool { frames.wantsBoardReading(for: config) }

    // MARK: operations

    /// Configures and enables advertising for `config` (generation `generation`); `.armed` once
    /// every frame is on air. `.powerCycle` takes the adapter down first (the kernel then re-runs
    /// the controller's setup). `randomAddress`: the static random address to send from, if any.
    public mutating func arm(_ config: BeaconConfig, scope: ArmScope, generation: Int,
                             randomAddress: BluetoothAddress?, now: Int64) -> [AdvertiserAction] {
        var a = supersede()
        let (sameFrames, before) = frames.take(config, randomAddress: randomAddress)
        rotation.arming(from: before, to: frames.configured.map(\.name))
        work.operation = .arm(generation: generation, config: config, scope: scope, sameFrames: sameFrames)
        guard scope >= .full || !channelOpen || info == nil else { return a + configureNow(now) }
        ours.plan = nil
        guard channelOpen else {
            work.stage = .opening
            return a + [.openChannel]
        }
        a += prepare(powerCycle: scope == .powerCycle, now)
        return a
    }

    /// The next frame of the rotating slot (every `rotation_ms`).
    public mutating func rotate(now: Int64) -> [AdvertiserAction] { begin(.rotate, now) }

    /// Re-sends the frames with telemetry that have a slot of their own (fresh uptime and count).
    public mutating func refreshPayloads(now: Int64) -> [AdvertiserAction] { begin(.refreshPayloads, now) }

    /// The health probe (SPEC §5): proves advertising is on, not only that the controller
    /// answers, by sending the same data and enable again.
    public mutating func probe(now: Int64) -> [AdvertiserAction] { begin(.probe, now) }

    /// Takes every frame off air and closes the channel: each set of ours (whatever the last plan
    /// said) is disabled and removed, legacy advertising disabled, each command with
    /// `perCommandMs`; the whole within `deadlineMs`. Whatever was in flight is given up first,
    /// so a command a hung controller never answers cannot hold the sequence. The links in
    /// `disconnecting` are ended through the kernel first: nothing of ours stays reachable.
    public mutating func takeDown(perCommandMs: Int64, deadlineMs: Int64, disconnecting: [UInt16], now: Int64) -> [AdvertiserAction] {
        var a = abandon(now: now)
        guard channelOpen else { return a + close(now: now) + [.event(.tookDown(confirmed: true))] }
        for h in disconnecting.sorted() { a += links.release(handle: h) ?? [] }
        work.operation = .takeDown(deadlineMs: deadlineMs)
        work.stage = .takingDown(failures: 0, perCommandMs: perCommandMs)
        steps.replace(with: ours.takeDownSteps())
        return a + [.startDeadline(ms: deadlineMs)] + next(now)
    }

    /// `takeDown`'s deadline passed before the controller answered everything.
    public mutating func deadlinePassed(now: Int64) -> [AdvertiserAction] {
        guard case .takeDown = work.operation else { return [] }
        return finishTakeDown(confirmed: false, now: now)
    }

    /// Gives up whatever operation is in flight: its outcome is never reported.
    public mutating func abandon(now: Int64) -> [AdvertiserAction] {
        let a = supersede()
        offAir(now)
        return a
    }

    public mutating func close(now: Int64) -> [AdvertiserAction] {
        var a = abandon(now: now)
        if channelOpen { a.append(.closeChannel) }
        channelOpen = false
        info = nil
        ours.controllerForgot()
        return a
    }

    /// Asks the kernel to end a central's connection; one not known is reported gone at once
    /// (the caller forgets it). Disconnection Complete follows otherwise.
    public mutating func disconnect(handle: UInt16) -> [AdvertiserAction] {
        links.release(handle: handle) ?? [.event(.centralDisconnected(handle))]
    }

    /// Nothing of ours is known to be on air any more (a failure, a reset, a stop).
    mutating func offAir(_ now: Int64) {
        frames.counter.allDisabled(at: now)
        ours.plan = nil
    }

    /// Drops the operation in flight and those waiting: their replies are abandoned.
    mutating func supersede() -> [AdvertiserAction] {
        work = Work()
        bringUp.stop()
        steps.replace(with: [])
        return channelOpen ? [.abandonCommands] : []
    }
}
