import XCTest
@testable import BeaconKit

/// The advertiser's procedure against the controller model alone: each command answered at once,
/// as the Core spec (`AdvertisingState.refusal`) and the test's own refusals say; no loop, no time.
struct AdvertiserBench {
    var p: AdvertiserProcedure = {
        var p = AdvertiserProcedure(index: 0)
        p.board = BoardReading(uptimeDeciseconds: 10, temperature: nil, readAtMs: 0)
        return p
    }()
    /// What the controller has.
    var controller = AdvertisingState()
    /// Bluetooth 5 (LE extended advertising, `sets` sets) or 4.x.
    var extended: Bool
    var sets: UInt8 = 4
    /// The address repair's static random address, given at each arm and bring-up.
    var randomAddress: BluetoothAddress?
    /// A test's refusals, asked before the spec's (nil: none).
    var refuse: (HCIOpcode, [UInt8]) -> HCIStatus? = { _, _ in nil }
    /// Commands left unanswered from this one on (the hang); the procedure waits for them.
    var silent = false
    var sent: [(op: HCIOpcode, params: [UInt8])] = []
    var events: [AdvertiserEvent] = []
    var logs: [String] = []
    var powerCalls: [Bool] = []

    init(extended: Bool, sets: UInt8 = 4) {
        self.extended = extended
        self.sets = sets
    }

    var ops: [HCIOpcode] { sent.map(\.op) }
    func count(_ op: HCIOpcode) -> Int { ops.filter { $0 == op }.count }
    func logged(_ needle: String) -> Int { logs.filter { $0.contains(needle) }.count }

    mutating func arm(_ config: BeaconConfig, scope: ArmScope = .full, generation: Int = 1) -> Result<AirSummary, ArmFailure>? {
        let before = events.count
        run(p.arm(config, scope: scope, generation: generation, randomAddress: randomAddress, now: 0))
        for e in events[before...] { if case .armed(generation, let r) = e { return r } }
        return nil
    }

    /// Performs `actions` the way the runner does, answering each at once, until nothing is left.
    mutating func run(_ actions: [AdvertiserAction]) {
        var queue = actions
        while !queue.isEmpty {
            switch queue.removeFirst() {
            case .openChannel: queue += p.channelOpened(nil, now: 0)
            case .power(let up):
                powerCalls.append(up)
                controller.forget()
                queue += p.powered(nil, randomAddress: randomAddress, now: 0)
            case .send(let command, _):
                let op = type(of: command).opcode, params = command.parameters
                sent.append((op, params))
                if !silent { queue += p.replied(decodedReply(of: command, answer(op, params)), now: 0) }
            case .event(let e): events.append(e)
            case .log(_, let m): logs.append(m)
            case .closeChannel, .abandonCommands, .disconnect, .startDeadline: break
            }
        }
    }

    mutating func answer(_ op: HCIOpcode, _ params: [UInt8]) -> Result<[UInt8], HCICommandFailure> {
        switch op {
        case .readLocalVersion:
            let v: UInt8 = extended ? 0x09 : 0x06
            return .success([0, v, 0x00, 0x01, v, 0x0f, 0x00, 0x34, 0x12])
        case .leReadLocalFeatures:
            return .success([0, 0x01, extended ? 0x10 : 0, 0, 0, 0, 0, 0, 0])
        case .leReadNumberOfSupportedAdvertisingSets:
            return extended ? .success([0, sets]) : .failure(.status(op, .unknownCommand))
        default:
            break
        }
        if !extended && op.ocf >= 0x35 && op.ocf <= 0x3d { return .failure(.status(op, .unknownCommand)) }
        if let st = refuse(op, params) ?? controller.refusal(op, params, supportedSets: Int(sets)) {
            return .failure(.status(op, st))
        }
        controller.apply(op, params)
        return .success([0])
    }
}

/// Configs for the bench.
enum BenchConfigs {
    static let beacon = """
        [beacon]
        uuid = "2f234454-cf6d-4a0f-adf2-f4911ba9ffa6"
        major = 1
        minor = 2
        """

    static func make(_ extra: String = "") -> BeaconConfig {
        guard case .success(let c) = ConfigFile.parse(Array((beacon + "\n" + extra).utf8), path: "t.toml") else {
            fatalError("test config refused")
        }
        return c
    }

    /// AltBeacon, iBeacon and Eddystone-UID.
    static let three = make("""
        [ibeacon]
        [eddystone]
        namespace = "00112233445566778899"
        instance = "aabbccddeeff"
        """)

    static func payloads(_ c: BeaconConfig) -> [[UInt8]] { c.airFrames().map { $0.frame.advertisingData(.zero) } }
}
