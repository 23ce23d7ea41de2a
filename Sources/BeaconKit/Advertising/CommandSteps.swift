/// An operation's commands as a list of steps with one command in flight: what each step sends,
/// how a refusal of it counts (done, asked again, skipped, or the end of the list), and the
/// bookkeeping due when it is done. It neither builds the commands (`AdvertisedFrames` does, when
/// the step runs) nor decides what follows the list (the advertiser's stage does).
struct CommandSteps {
    /// Just longer than the kernel's own HCI command timeout (2 s, SPEC §5): a command the kernel
    /// is still waiting for is not yet lost, and one it gave up on is retried at once.
    var commandTimeoutMs: Int64 = 2100
    var list: [Step] = []
    var running: Running?

    enum Step {
        case send(Command, Handling)
        /// Bookkeeping at this point of the list.
        case mark(Mark)
    }

    /// What a step sends, built when it runs: it may depend on what earlier steps learnt (the
    /// own address, the interval taken) and on the time (telemetry).
    enum Command {
        case fixed(any HCICommand)
        /// Parameters for set `handle` (legacy: nil) carrying `frame`; `configured`: at the
        /// config's interval, falling back to 100 ms where refused, else at the interval in use.
        case parameters(handle: UInt8?, frame: Int, configured: Bool)
        /// LE Set Random Address for legacy advertising (refused: send from the public address).
        case legacyRandomAddress(BluetoothAddress)
        case data(handle: UInt8?, frame: Int)
        case scanResponse(handle: UInt8?, frame: Int)
        /// The probe: whatever the slot carries when the step runs (a frame switch queued before wins).
        case slotData(handle: UInt8?)
        /// The probe: the scan response the slot answers with (the beacon's name, the GATT identity's).
        case slotScanResponse(handle: UInt8?)
        case enable(handle: UInt8?)
        case disable(handle: UInt8?)
    }

    struct Handling {
        /// Statuses that count as done (e.g. Command Disallowed to a disable when already disabled).
        var tolerating: [HCIStatus] = []
        /// An arm's enable: Command Disallowed is "already enabled", except beside a central's link.
        var linkAware = false
        /// Asked again once when refused (a transient Controller Busy must not leave a frame on air).
        var twice = false
        /// Any failure counts as done (the list goes on).
        var bestEffort = false
        /// The bookkeeping once the controller said done.
        var then: Mark?
    }

    enum Mark: Equatable {
        /// The rotation starts at this frame of the rotating slot.
        case firstTurn(Int)
        case legacyArmed, legacyDisarmed
        case armedHandle(UInt8), removedHandle(UInt8)
    }

    struct Running {
        var command: Command
        var handling: Handling
        var retried = false
        var intervalMs: UInt16
        /// The command as built when it was (last) sent.
        var sent: (any HCICommand)? = nil
    }

    /// A new list, nothing in flight.
    mutating func replace(with steps: [Step]) {
        list = steps
        running = nil
    }

    /// Takes the steps up to the next command: the marks passed on the way (in order) and the
    /// command to send, nil when the list ended.
    mutating func advance() -> (marks: [Mark], next: (Command, Handling)?) {
        var marks: [Mark] = []
        while !list.isEmpty {
            switch list.removeFirst() {
            case .mark(let m): marks.append(m)
            case .send(let c, let h): return (marks, (c, h))
            }
        }
        return (marks, nil)
    }

    /// The command in flight's outcome, taken off it: a refusal with a status its handling
    /// tolerates is done (said in `tolerated`); `linkOpen`: a central is connected to us.
    mutating func settle(_ result: Result<any HCIReply, HCICommandFailure>, linkOpen: Bool)
        -> (running: Running, result: Result<(any HCIReply)?, HCICommandFailure>, tolerated: String?)? {
        guard let r = running else { return nil }
        running = nil
        switch result {
        case .success(let reply):
            return (r, .success(reply), nil)
        case .failure(let f):
            let tolerating = r.handling.linkAware ? (linkOpen ? [] : [.commandDisallowed]) : r.handling.tolerating
            if case .status(let op, let st) = f, tolerating.contains(st) { return (r, .success(nil), "\(op): \(st), not a failure here") }
            return (r, .failure(f), nil)
        }
    }

    /// A refused command asked again once when its handling says so (nil: not again).
    static func again(_ r: Running) -> Running? {
        guard r.handling.twice && !r.retried else { return nil }
        var r = r
        r.retried = true
        return r
    }
}
