/// What the advertiser reports to whoever runs the beacon on its adapter (the adapter session).
public enum AdvertiserEvent: Equatable, Sendable {
    /// The outcome of `arm` for config generation `generation`.
    case armed(generation: Int, Result<AirSummary, ArmFailure>)
    case probed(ArmFailure?)
    case rotated(ArmFailure?)
    case payloadsRefreshed(ArmFailure?)
    /// `takeDown` ended: `confirmed` when the controller answered every command in time.
    case tookDown(confirmed: Bool)
    /// The adapter is up, before our commands: what the kernel sent to initialise it (a Reset
    /// among them) is not interference.
    case broughtUp
    case hardwareError(UInt8)
    /// A central connected to our connectable advertising (handle), or its link ended.
    case centralConnected(UInt16)
    case centralDisconnected(UInt16)
    /// A central's link (address) is about to be cut by us: what serves it lets go first.
    case releasingCentral([UInt8])
}

/// What the advertiser asks of its runner, in order.
public enum AdvertiserAction {
    /// Open the adapter's command channel; answer `channelOpened`.
    case openChannel
    case closeChannel
    /// Forget every command queued or in flight: a newer sequence goes to the kernel now.
    case abandonCommands
    /// HCIDEVUP / HCIDEVDOWN, off the loop; answer `powered` (one at a time: a change already
    /// running answers for this one).
    case power(up: Bool)
    /// Send on the channel; answer `replied`.
    case send(any HCICommand, timeoutMs: Int64)
    /// Ask the kernel to end the link to `address` (see `ControllerAccess.disconnect`).
    case disconnect(address: [UInt8], random: Bool)
    /// `takeDown`'s deadline: answer `deadlinePassed` unless the channel is closed first.
    case startDeadline(ms: Int64)
    case log(LogLevel, String)
    case event(AdvertiserEvent)
}

/// Puts the configured frames on air on one controller, the way the study guide does by hand,
/// with the fallbacks real controllers need (SPEC §3): one extended advertising set per frame
/// where the controller has them, else legacy commands with the frames taking turns (`AirPlan`).
/// Pure: the runner's outcomes (channel, power, command replies, controller events) in, the next
/// commands and events out (`AdvertiserAction`). One operation runs at a time: an arm supersedes
/// whatever was in flight (its replies never come: the runner abandons them), rotations, probes
/// and telemetry refreshes queue behind each other. What the controller has is kept as
/// `AdvertisingState`, the model the tests' controller also runs on.
public struct AdvertiserProcedure {
    /// Just longer than the kernel's own HCI command timeout (2 s, SPEC §5): a command the kernel
    /// is still waiting for is not yet lost, and one it gave up on is retried at once.
    public var commandTimeoutMs: Int64 = 2100
    public let index: UInt16
    /// The board's uptime and temperature for the TLM frame, as the runner last read them (it
    /// reads them before each operation while a frame carries telemetry); nil: none yet.
    public var board: BoardReading?

    /// What we put on the controller (accepted commands applied).
    public internal(set) var controller = AdvertisingState()
    public internal(set) var info: ControllerInfo?
    public internal(set) var effectiveIntervalMs: UInt16 = 0
    /// How the frames share the controller; nil when nothing of ours is known to be on air.
    public internal(set) var plan: AirPlan?
    /// The plan of the last arm, kept for the monitor and the status while re-arming.
    public internal(set) var lastPlan: AirPlan?
    /// PDUs scheduled while each slot was enabled: what the TLM frame counts.
    public internal(set) var counter = AdvertisingCounter()
    /// Centrals connected to our advertising, by connection handle.
    public internal(set) var links: [UInt16: (address: [UInt8], random: Bool)] = [:]
    public internal(set) var channelOpen = false

    var frames: [ConfiguredFrame] = []
    /// What is ours on the controller, beyond `controller`'s model.
    var armed = Armed()
    /// Which frame is on air where they take turns.
    var rotation = Rotation()
    /// How the frames are sent, as of the last arm.
    var sending = Sending()
    /// Warnings said once per process.
    var warned = Warned()
    /// The static random address to send from (the address repair's), as of the last bring-up.
    var randomAddress: BluetoothAddress?
    /// The operation in flight, its stage, the steps left in it, and what waits behind it.
    var work = Work()

    struct Armed {
        /// Every set handle configured on this controller and not removed since: what a new plan
        /// with fewer sets, a stop or an adapter move must take off air, whatever `plan` says.
        var handles: Set<UInt8> = []
        /// Legacy advertising may be enabled (we enabled it and did not disable it since).
        var legacy = false
        /// Sets of a previous process were cleared (once per session, at its first arm).
        var clearedPrevious = false
    }

    struct Rotation {
        /// The frame of the rotating (last) slot that is on air.
        var turn = 0
        /// Where a legacy arm starts its rotation: the first frame not on air before it (a frame
        /// switched on from afar is heard at once, not a whole rotation later), else the first.
        var legacyFirstFrame = 0
        /// Probes since the last one that re-sent the scan responses.
        var probesSinceScanResponse = 0
    }
    static let scanResponseProbeEvery = 6

    struct Sending {
        /// The arm in progress only left out frames at the end: extended sets stay extended.
        var keepsFamily = false
        var wantedIntervalMs: UInt16 = 0
        var txPowerDbm: Int8?
        /// What the frames are sent from, chosen at each arm.
        var ownAddress: OwnAddressType = .public
    }

    struct Warned {
        var txPower = false
        var randomAddress = false
    }

    struct Work {
        var operation: Operation?
        var stage = Stage.idle
        var steps: [Step] = []
        var running: Running?
        /// Rotations, probes and refreshes asked for while another operation ran.
        var waiting: [Operation] = []
    }

    public init(index: UInt16) {
        self.index = index
    }

    var adapter: String { "hci\(index)" }

    // MARK: what it tells

    /// "legacy", "legacy, 3 frames in turn", "extended, sets 2 1 0"; "" before the first arm.
    public var mode: String {
        guard let p = plan ?? lastPlan else { return "" }
        var s = p.handles.map { "extended, set\($0.count > 1 ? "s" : "") " + $0.map { "\($0)" }.joined(separator: " ") } ?? "legacy"
        if p.rotates { s += ", \(p.frameCount - p.slotCount + 1) frames in turn" }
        return s
    }

    /// Ours on air, for classifying others' commands: every frame's payload and what each slot carries.
    public var onAir: OnAirAdvertising {
        let slots = [controller.legacy.data] + controller.sets.keys.sorted(by: >).map { controller.sets[$0]!.data }
        let responses = [controller.legacy.scanResponse] + controller.sets.values.map(\.scanResponse)
        return OnAirAdvertising(handles: (plan ?? lastPlan)?.handles,
                                payloads: frames.map { $0.frame.advertisingData(.zero) } + slots.filter { !$0.isEmpty },
                                scanResponses: frames.map(\.scanResponse).filter { !$0.isEmpty } + responses.filter { !$0.isEmpty })
    }

    var summary: AirSummary {
        guard let plan else { return AirSummary() }
        return AirSummary(rotates: plan.rotates, refreshesPayloads: !standingRefreshedSlots.isEmpty)
    }

    /// The slots that carry one frame refreshed on air (`isRefreshedOnAir`), always the same one (not in turn).
    var standingRefreshedSlots: [Int] {
        guard let plan else { return [] }
        return (0..<plan.slotCount).filter { s in
            let r = plan.frames(inSlot: s)
            return r.count == 1 && frames[r.lowerBound].frame.isRefreshedOnAir
        }
    }

    /// True when frame `f` goes on air connectable (ADV_IND: the GATT identity).
    func isConnectable(frame f: Int) -> Bool { f < frames.count && frames[f].frame.isConnectable }

    /// The PDU frame `f` goes out as: ADV_SCAN_IND with the beacon's name (`ConfiguredFrame.pdu`).
    func pdu(ofFrame f: Int) -> LegacyPDU { f < frames.count ? frames[f].pdu : .nonConnectable }

    /// Frame `f`'s bytes as they go on air now (a TLM frame with fresh telemetry).
    func payload(ofFrame f: Int, now: Int64) -> [UInt8] {
        let frame = frames[f].frame
        guard frame.isRefreshedOnAir else { return frame.advertisingData(.zero) }
        let count = counter.count(at: now)
        return frame.advertisingData(board?.telemetry(advertisingCount: count, now: now)
                                     ?? Telemetry(uptimeDeciseconds: 0, advertisingCount: count, temperature: nil))
    }

    /// True when `config` (or, without one, what is configured now) has a frame that carries
    /// telemetry: the runner then reads the board before handing in an operation.
    public func wantsBoardReading(for config: BeaconConfig? = nil) -> Bool {
        if let config { return config.airFrames().contains { $0.frame.carriesTelemetry } }
        return frames.contains { $0.frame.carriesTelemetry }
    }

    // MARK: operations

    /// Configures and enables advertising for `config` (generation `generation`); `.armed` once
    /// every frame is on air. `.powerCycle` takes the adapter down first (the kernel then re-runs
    /// the controller's setup). `randomAddress`: the static random address to send from, if any.
    public mutating func arm(_ config: BeaconConfig, scope: ArmScope, generation: Int,
                             randomAddress: BluetoothAddress?, now: Int64) -> [AdvertiserAction] {
        var a = supersede()
        let airFrames = config.airFrames()
        let sameFrames = frames.map(\.name) == airFrames.map(\.name)
        let before = frames.map(\.name)
        rotation.legacyFirstFrame = airFrames.firstIndex { !before.contains($0.name) } ?? 0
        // The GATT identity left out while a central is connected: the frames keep the kind of
        // advertising they are on (an edit to fewer frames goes back to legacy commands).
        sending.keepsFamily = frames.map(\.name) == airFrames.map(\.name) + [GATTIdentity.name]
        frames = airFrames
        sending.wantedIntervalMs = config.bluetooth.intervalMs
        self.randomAddress = randomAddress
        work.operation = .arm(generation: generation, config: config, scope: scope, sameFrames: sameFrames)
        guard scope >= .full || !channelOpen || info == nil else { return a + configureNow(now) }
        plan = nil
        guard channelOpen else {
            work.stage = .opening
            return a + [.openChannel]
        }
        a += prepare(powerCycle: scope == .powerCycle)
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
        for h in disconnecting.sorted() {
            guard let l = links[h] else { continue }
            a += [.event(.releasingCentral(l.address)), .disconnect(address: l.address, random: l.random)]
        }
        let handles = armed.handles.union(lastPlan?.handles ?? []).sorted(by: >)
        var commands: [any HCICommand] = []
        for h in handles {
            commands.append(LESetExtendedAdvertisingEnable(false, handle: h))
            commands.append(LERemoveAdvertisingSet(handle: h))
        }
        if handles.isEmpty || armed.legacy { commands.append(LESetAdvertiseEnable(false)) }
        work.operation = .takeDown(deadlineMs: deadlineMs)
        work.stage = .takingDown(failures: 0, perCommandMs: perCommandMs)
        work.steps = commands.map { .send(.fixed($0), Handling(tolerating: [.commandDisallowed, .unknownAdvertisingIdentifier, .unknownCommand])) }
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
        plan = nil
        armed.handles = []
        armed.legacy = false
        return a
    }

    /// Asks the kernel to end a central's connection; one not known is reported gone at once
    /// (the caller forgets it). Disconnection Complete follows otherwise.
    public mutating func disconnect(handle: UInt16) -> [AdvertiserAction] {
        guard let l = links[handle] else { return [.event(.centralDisconnected(handle))] }
        return [.event(.releasingCentral(l.address)), .disconnect(address: l.address, random: l.random)]
    }

    /// Nothing of ours is known to be on air any more (a failure, a reset, a stop).
    mutating func offAir(_ now: Int64) {
        counter.allDisabled(at: now)
        plan = nil
    }

    /// Drops the operation in flight and those waiting: their replies are abandoned.
    mutating func supersede() -> [AdvertiserAction] {
        work.operation = nil
        work.stage = .idle
        work.steps = []
        work.running = nil
        work.waiting = []
        return channelOpen ? [.abandonCommands] : []
    }
}
