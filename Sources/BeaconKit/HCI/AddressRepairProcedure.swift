import Glibc

/// What the address repair remembers across bring-ups, per adapter (one per daemon): so that a
/// retry every few seconds neither repeats a line nor asks the kernel again for what it refused.
public struct AddressRepairMemory: Sendable {
    /// The address given to each adapter (its notice is logged once).
    var given: [UInt16: BluetoothAddress] = [:]
    /// Adapters left with a chip default address: nothing better could be given (warned once).
    var leftAlone: Set<UInt16> = []
    /// Adapters that keep a chip default public address and advertise from this static random one.
    public internal(set) var staticRandom: [UInt16: BluetoothAddress] = [:]
    /// The last problem logged per adapter.
    var reported: [UInt16: String] = [:]

    public init() {}
}

/// The board's serial as read for one bring-up (`BoardAddress.serial(fromDeviceTree:)`).
public enum BoardSerialReading: Sendable, Equatable {
    case serial(UInt64)
    /// The file could not be read (why, e.g. an errno's text).
    case unreadable(String)
    /// The file holds no serial number.
    case notASerial
}

/// One bring-up of an adapter with the address repair around it (SPEC §11), pure: the outcomes
/// of HCIDEVUP/HCIDEVDOWN (with the address the adapter then reports) and of mgmt commands in,
/// the next step out. An unconfigured adapter (HCIDEVUP: EOPNOTSUPP) is given the board's public
/// address and brought up again; one that came up with a chip default is taken down, given the
/// board's address and brought up again; one whose driver refuses it, or takes it without using
/// it, advertises from the board's static random address. The texts are the log's.
public struct AddressRepairProcedure: Sendable {
    public enum Step: Equatable, Sendable {
        case power(up: Bool)
        case send(ManagementCommand)
        case error(String), warning(String), notice(String)
        /// The bring-up's outcome: nil (up), or the errno to report (ENODEV for an adapter that
        /// stays unconfigured: the policy waits for it as for a missing adapter).
        case finished(Errno?)
    }
    private enum State: Sendable {
        case bringingUp
        case readingConfiguration
        case giving(BluetoothAddress, replacing: BluetoothAddress?)
        case takingDown(firstOutcome: Errno?, default: BluetoothAddress)
        case bringingUpAgain(checkTaken: Bool)
        case done
    }

    public let index: UInt16
    private let serial: BoardSerialReading
    private let serialPath: String
    private var state = State.bringingUp

    public init(index: UInt16, serial: BoardSerialReading, serialPath: String) {
        self.index = index
        self.serial = serial
        self.serialPath = serialPath
    }

    private var name: String { "hci\(index)" }

    public func start() -> [Step] { [.power(up: true)] }

    /// HCIDEVUP or HCIDEVDOWN returned `outcome` (an errno, nil for success); `address`: what the adapter reports now.
    public mutating func powered(_ outcome: Errno?, address: BluetoothAddress?, _ m: inout AddressRepairMemory) -> [Step] {
        switch state {
        case .bringingUp:
            if outcome == Errno(EOPNOTSUPP) {
                state = .readingConfiguration
                return [.send(.readConfigurationInfo(index: index))]
            }
            guard outcome == nil || outcome == .alreadyInProgress, let address else { return finish(outcome) }
            var steps: [Step] = []
            guard wantsToReplace(address, &m, &steps) else { return steps + finish(outcome) }
            state = .takingDown(firstOutcome: outcome, default: address)
            return steps + [.power(up: false)]
        case .takingDown(let first, let address):
            // Could not take it down: it stays up, with the default address.
            guard outcome == nil else { return finish(first) }
            var steps: [Step] = []
            guard let mine = boardAddress(why: "\(name) reports \(address),", &m, &steps) else {
                state = .bringingUpAgain(checkTaken: false)
                return steps + [.power(up: true)]
            }
            state = .giving(mine, replacing: address)
            return steps + [.send(.setPublicAddress(index: index, address: mine))]
        case .bringingUpAgain(let checkTaken):
            var steps: [Step] = []
            if checkTaken, outcome == nil || outcome == .alreadyInProgress, let now = address, BoardAddress.isChipDefault(now) {
                // Its driver took the address without using it: asking again would only cycle it.
                m.leftAlone.insert(index)
                steps += advertiseFromStaticRandom("\(name) still reports \(now), a chip default address shared by many boards, after being given \(m.given[index].map { "\($0)" } ?? "the board's")", &m)
            }
            return steps + finish(outcome)
        case .readingConfiguration, .giving, .done:
            return []
        }
    }

    /// A management command's answer: its return parameters, or why it failed.
    public mutating func answered(_ answer: Result<[UInt8], ManagementRefusal>, _ m: inout AddressRepairMemory) -> [Step] {
        switch state {
        case .readingConfiguration:
            let info: (manufacturer: UInt16, supported: ManagementOptions, missing: ManagementOptions)
            switch answer {
            case .failure(let f):
                return report("\(name) is unconfigured (HCIDEVUP: not supported) and its configuration could not be read: \(f)", &m) + finish(.noDevice)
            case .success(let p):
                guard let i = ManagementReply.configurationInfo(p) else {
                    return report("\(name) is unconfigured and its configuration reply was malformed", &m) + finish(.noDevice)
                }
                info = i
            }
            guard info.missing.contains(.publicAddress) else {
                return report("\(name) is unconfigured (missing: \(info.missing)); altbeacond can only give it an address", &m) + finish(.noDevice)
            }
            var steps: [Step] = []
            guard let address = boardAddress(why: "\(name) has no usable Bluetooth address (the kernel left it unconfigured)", &m, &steps) else {
                return steps + finish(.noDevice)
            }
            state = .giving(address, replacing: nil)
            return steps + [.send(.setPublicAddress(index: index, address: address))]
        case .giving(let address, let replacing):
            var steps: [Step] = []
            var taken = false
            switch answer {
            case .success(let p):
                if m.given[index] != address {
                    m.given[index] = address
                    m.reported[index] = nil
                    steps.append(.notice("\(name) had no usable address; gave it \(address) (from the board serial)"))
                }
                if let missing = ManagementReply.missingOptions(p), !missing.isEmpty {
                    steps += report("\(name) took address \(address) but is still unconfigured (missing: \(missing))", &m)
                } else {
                    taken = true
                }
            case .failure(let f):
                // Not Supported: the driver cannot change its address (no set_bdaddr).
                if let replacing {
                    steps += advertiseFromStaticRandom("\(name) reports \(replacing), a chip default address shared by many boards, and refused \(address) (Set Public Address: \(f))", &m)
                } else {
                    steps += report("\(name) has no usable address and refused \(address) (Set Public Address: \(f))", &m)
                }
            }
            guard replacing != nil else {
                guard taken else { return steps + finish(.noDevice) }
                state = .bringingUpAgain(checkTaken: false)
                return steps + [.power(up: true)]
            }
            if !taken { m.leftAlone.insert(index) }
            state = .bringingUpAgain(checkTaken: taken)
            return steps + [.power(up: true)]
        case .bringingUp, .takingDown, .bringingUpAgain, .done:
            return []
        }
    }

    private mutating func finish(_ outcome: Errno?) -> [Step] {
        state = .done
        return [.finished(outcome)]
    }

    /// True when `address` is a chip default shared by many boards and the board has its own to
    /// give. An adapter that reports an address of its own (another controller became hciN, or
    /// someone gave it one with btmgmt) is forgotten: it advertises from that address again.
    private func wantsToReplace(_ address: BluetoothAddress, _ m: inout AddressRepairMemory, _ steps: inout [Step]) -> Bool {
        guard BoardAddress.isChipDefault(address) else {
            m.leftAlone.remove(index)
            if m.staticRandom.removeValue(forKey: index) != nil {
                steps.append(.notice("\(name) now reports \(address), an address of its own: advertising from it"))
            }
            return false
        }
        guard !m.leftAlone.contains(index) else { return false }
        guard boardAddress(why: "\(name) reports \(address), a chip default address shared by many boards,", &m, &steps) != nil else {
            m.leftAlone.insert(index)
            return false
        }
        return true
    }

    /// The public address stays a chip default (`why`): frames go out from the board's static
    /// random address, as stable and as much the board's own (receivers match on the payload).
    private func advertiseFromStaticRandom(_ why: String, _ m: inout AddressRepairMemory) -> [Step] {
        guard m.staticRandom[index] == nil else { return [] }
        var steps: [Step] = []
        guard let serial = boardSerial(why: why, &m, &steps) else { return steps }
        let address = BoardAddress.staticRandom(serial: serial)
        m.staticRandom[index] = address
        m.reported[index] = nil
        return [.warning("\(why); advertising from the static random address \(address) (from the board serial)")]
    }

    private func boardAddress(why: String, _ m: inout AddressRepairMemory, _ steps: inout [Step]) -> BluetoothAddress? {
        boardSerial(why: why, &m, &steps).map(BoardAddress.raspberryPi(serial:))
    }

    /// The board's serial; nil, the reason reported, when there is none.
    private func boardSerial(why: String, _ m: inout AddressRepairMemory, _ steps: inout [Step]) -> UInt64? {
        switch serial {
        case .serial(let s):
            return s
        case .unreadable(let error):
            steps += report("\(why) and there is no board serial to derive one from (\(serialPath): \(error)); give it one, e.g. btmgmt --index \(index) public-addr <address>", &m)
        case .notASerial:
            steps += report("\(why) and the board serial in \(serialPath) is not a serial number; give it an address, e.g. btmgmt --index \(index) public-addr <address>", &m)
        }
        return nil
    }

    /// An error, unless it is what was last reported for this adapter.
    private func report(_ message: String, _ m: inout AddressRepairMemory) -> [Step] {
        guard m.reported[index] != message else { return [] }
        m.reported[index] = message
        return [.error(message)]
    }
}

/// Why a management command failed, as its text (`ManagementFailure` in BeaconLinux).
public struct ManagementRefusal: Error, Equatable, Sendable, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
