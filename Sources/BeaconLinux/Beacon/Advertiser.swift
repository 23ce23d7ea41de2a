import BeaconKit
import Glibc

/// Whoever runs the beacon on an adapter hears its advertiser here.
public protocol AdvertiserEvents: AnyObject {
    /// Each command as written, at once: the policy tells ours from another process's on the monitor.
    func advertiser(_ advertiser: Advertiser, sent opcode: HCIOpcode, _ parameters: [UInt8])
    /// `.broughtUp` and `.releasingCentral` at once (before the commands that follow them); every
    /// other event on a later loop turn than the call that caused it.
    func advertiser(_ advertiser: Advertiser, reported event: AdvertiserEvent)
}

/// The runner of one adapter's `AdvertiserProcedure`: it owns the adapter's `HCICommandChannel`,
/// performs the procedure's actions (commands, HCIDEVUP/HCIDEVDOWN off the loop, the kernel's
/// disconnects, a deadline) and feeds their outcomes back, one at a time. Nothing here waits.
public final class Advertiser: HCICommandChannelDelegate {
    let controller: ControllerAccess
    let loop: EventLoop
    let log: Logger
    public private(set) var procedure: AdvertiserProcedure
    public weak var events: AdvertiserEvents?
    public private(set) var channel: HCICommandChannel?
    /// Why the channel broke, for commands sent after it did.
    private var lost: Errno?
    /// Bumped whenever commands are abandoned: an outcome posted for an older one is dropped.
    private var token = 0
    private let deadline: LoopTimer
    /// The board's uptime and temperature for a TLM frame; nil: none (TLM then says 0 and "not
    /// supported").
    private let board: BoardReader?

    public init(controller: ControllerAccess, loop: EventLoop, log: Logger, board: BoardReader? = nil) {
        self.controller = controller
        self.loop = loop
        self.log = log
        self.board = board
        procedure = AdvertiserProcedure(index: controller.index)
        deadline = loop.makeTimer()
    }

    public var index: UInt16 { controller.index }
    /// True while the adapter is being brought up or down by us: the kernel's up/down events
    /// then are our own doing, not a fault.
    public var isChangingPower: Bool { controller.isChangingPower }
    public var mode: String { procedure.mode }
    public var onAir: OnAirAdvertising { procedure.onAir }
    public var effectiveIntervalMs: UInt16 { procedure.effectiveIntervalMs }
    public var plan: AirPlan? { procedure.plan }
    public var counter: AdvertisingCounter { procedure.counter }
    public var commandTimeoutMs: Int64 {
        get { procedure.commandTimeoutMs }
        set { procedure.commandTimeoutMs = newValue }
    }

    // MARK: operations (outcomes come as events)

    public func arm(_ config: BeaconConfig, scope: ArmScope, generation: Int = 0) {
        let random = controller.advertisingAddress
        readBoard(for: config)
        feed { $0.arm(config, scope: scope, generation: generation, randomAddress: random, now: $1) }
    }
    public func rotate() { readBoard(); feed { $0.rotate(now: $1) } }
    public func refreshPayloads() { readBoard(); feed { $0.refreshPayloads(now: $1) } }
    public func probe() { readBoard(); feed { $0.probe(now: $1) } }

    /// Before an operation that may write a TLM frame: the board read here, handed in (the
    /// procedure reads nothing; the uptime at each later send is this one plus the time since).
    /// At most once per TLM refresh period: rotations and probes come every second or few, and
    /// only the temperature ages.
    private func readBoard(for config: BeaconConfig? = nil) {
        guard let board, procedure.wantsBoardReading(for: config) else { return }
        if let last = procedure.board, loop.now - last.readAtMs < OnAirUpkeep.payloadRefreshMs { return }
        procedure.board = board.read(now: loop.now)
    }
    public func abandon() { feed { $0.abandon(now: $1) } }
    public func close() { feed { $0.close(now: $1) } }
    public func disconnect(handle: UInt16) { feed { p, _ in p.disconnect(handle: handle) } }
    public func takeDown(commandTimeoutMs perCommand: Int64, deadlineMs: Int64, disconnecting links: [UInt16] = []) {
        feed { $0.takeDown(perCommandMs: perCommand, deadlineMs: deadlineMs, disconnecting: links, now: $1) }
    }

    // MARK: performing the procedure's actions

    /// One input to the procedure, then its actions in order.
    private func feed(_ input: (inout AdvertiserProcedure, Int64) -> [AdvertiserAction]) {
        for action in input(&procedure, loop.now) { perform(action) }
    }

    /// An outcome on a later turn, dropped if commands were abandoned since.
    private func later(_ input: @escaping (inout AdvertiserProcedure, Int64) -> [AdvertiserAction]) {
        let t = token
        loop.post { [weak self] in
            guard let self, t == token else { return }
            feed(input)
        }
    }

    private func perform(_ action: AdvertiserAction) {
        switch action {
        case .openChannel:
            openChannel()
        case .closeChannel:
            token += 1
            deadline.cancel()
            channel?.close()
            channel = nil
        case .abandonCommands:
            token += 1
            channel?.abandonAll()
        case .power(let up):
            // One change at a time: a change still running (of an abandoned arm) answers for this one.
            guard !controller.isChangingPower else { return }
            controller.setPower(up: up) { [weak self] e in
                guard let self else { return }
                let random = controller.advertisingAddress
                feed { $0.powered(e, randomAddress: random, now: $1) }
            }
        case .send(let command, let timeoutMs):
            guard let c = channel, !c.isClosed else {
                let e = lost ?? Errno(EBADF)
                return later { $0.replied(.failure(.io(e)), now: $1) }
            }
            c.send(command, timeoutMs: timeoutMs, reply: { [weak self] r in self?.feed { $0.replied(r, now: $1) } })
        case .disconnect(let address, let random):
            do throws(Errno) {
                try controller.disconnect(address: address, random: random)
            } catch {
                log.warning("hci\(index): could not ask the kernel to disconnect \(BluetoothAddress(bytes: address).map { "\($0)" } ?? "a central"): \(error)")
            }
        case .startDeadline(let ms):
            deadline.schedule(afterMs: ms) { [weak self] in self?.feed { $0.deadlinePassed(now: $1) } }
        case .log(let level, let message):
            log.log(level, message)
        case .event(let e):
            switch e {
            case .broughtUp, .releasingCentral: events?.advertiser(self, reported: e)
            default:
                loop.post { [weak self] in
                    guard let self else { return }
                    events?.advertiser(self, reported: e)
                }
            }
        }
    }

    private func openChannel() {
        channel?.close()
        channel = nil
        do throws(Errno) {
            channel = HCICommandChannel(index: index, transport: try controller.openTransport(), loop: loop, delegate: self)
            lost = nil
            later { $0.channelOpened(nil, now: $1) }
        } catch {
            later { $0.channelOpened(error, now: $1) }
        }
    }

    // MARK: the channel

    public func channel(_ channel: HCICommandChannel, sent opcode: HCIOpcode, _ parameters: [UInt8]) {
        events?.advertiser(self, sent: opcode, parameters)
    }

    public func channel(_ channel: HCICommandChannel, received event: HCIEvent) {
        feed { p, _ in p.controllerEvent(event) }
    }

    public func channel(_ channel: HCICommandChannel, lost error: Errno) {
        lost = error
        feed { $0.channelLost(now: $1) }
    }
}
