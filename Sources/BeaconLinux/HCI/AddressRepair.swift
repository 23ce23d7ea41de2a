import BeaconKit
import Glibc

/// Gives a controller without a usable address the board's own (SPEC §11): a Pi's on-board
/// controller comes from the kernel's UART driver with no hciuart service to set one, so it is
/// either left unconfigured (btbcm marks a chip default address invalid, and HCIDEVUP fails with
/// EOPNOTSUPP until a public address is set through mgmt) or comes up with a default several
/// boards share. The address is Raspberry Pi OS's for the same board (`BoardAddress`), set with
/// mgmt's Set Public Address; the kernel then runs the controller's setup with it. A controller
/// that is up with a chip default and whose driver cannot change it (Set Public Address refused,
/// or taken and not used) advertises from a static random address of the board instead
/// (`BoardAddress.staticRandom`): the advertiser asks `staticRandomAddress(index:)` at each arm.
/// One per daemon: what it logged is remembered per adapter, so a retry every few seconds does not
/// repeat a line.
public final class AddressRepair {
    private let loop: EventLoop
    private let log: Logger
    private let mgmt: ManagementSocket
    private let serialPath: String
    /// The address given to each adapter (its notice is logged once).
    private var given: [UInt16: BluetoothAddress] = [:]
    /// Adapters left with a chip default address: nothing better could be given (warned once).
    private var leftAlone: Set<UInt16> = []
    /// Adapters that keep a chip default public address and advertise from this static random one.
    private var staticRandom: [UInt16: BluetoothAddress] = [:]
    /// The last problem logged per adapter.
    private var reported: [UInt16: String] = [:]

    /// `serialPath`: the board's serial; ALTBEACOND_BOARD_SERIAL names another file (tests, or a
    /// board whose serial lives elsewhere).
    public init(loop: EventLoop, log: Logger,
                serialPath: String = environment("ALTBEACOND_BOARD_SERIAL") ?? "/proc/device-tree/serial-number") {
        self.loop = loop
        self.log = log
        self.serialPath = serialPath
        mgmt = ManagementSocket(loop: loop)
    }

    /// HCIDEVUP failed with EOPNOTSUPP: the kernel holds adapter `index` unconfigured. `done(true)`
    /// once it is configured (bring it up again); `done(false)` when it cannot be, the reason
    /// logged (once while it stays the same). Like every `done` here, on a later loop turn: each
    /// answer comes from a management command (`ManagementSocket` posts them) or is posted.
    public func configure(index: UInt16, _ done: @escaping (Bool) -> Void) {
        let name = "hci\(index)"
        mgmt.send(.readConfigurationInfo(index: index)) { [weak self] r in
            guard let self else { return }
            let info: (manufacturer: UInt16, supported: ManagementOptions, missing: ManagementOptions)
            switch r {
            case .failure(let f):
                report(index, "\(name) is unconfigured (HCIDEVUP: not supported) and its configuration could not be read: \(f)")
                return done(false)
            case .success(let p):
                guard let i = ManagementReply.configurationInfo(p) else {
                    report(index, "\(name) is unconfigured and its configuration reply was malformed")
                    return done(false)
                }
                info = i
            }
            guard info.missing.contains(.publicAddress) else {
                report(index, "\(name) is unconfigured (missing: \(info.missing)); altbeacond can only give it an address")
                return done(false)
            }
            guard let address = boardAddress(index, why: "\(name) has no usable Bluetooth address (the kernel left it unconfigured)") else {
                return done(false)
            }
            setPublicAddress(index, address, refused: { [weak self] f in
                self?.report(index, "\(name) has no usable address and refused \(address) (Set Public Address: \(f))")
            }) { ok in done(ok) }
        }
    }

    /// After a successful bring-up: true when `address` is a chip default shared by many boards
    /// and the board has its own to give (the caller takes the adapter down and calls `replace`).
    /// An adapter that reports an address of its own (another controller became hciN, or someone
    /// gave it one with btmgmt) is forgotten: it advertises from that address again.
    public func wantsToReplace(index: UInt16, _ address: BluetoothAddress) -> Bool {
        guard BoardAddress.isChipDefault(address) else {
            leftAlone.remove(index)
            if staticRandom.removeValue(forKey: index) != nil {
                log.notice("hci\(index) now reports \(address), an address of its own: advertising from it")
            }
            return false
        }
        guard !leftAlone.contains(index) else { return false }
        guard boardAddress(index, why: "hci\(index) reports \(address), a chip default address shared by many boards,") != nil else {
            leftAlone.insert(index)
            return false
        }
        return true
    }

    /// After `replace` and a bring-up the adapter still reports a chip default: its driver took
    /// the address without using it. Asking again would only cycle the adapter.
    public func didNotTake(index: UInt16, _ address: BluetoothAddress) {
        leftAlone.insert(index)
        advertiseFromStaticRandom(index, "hci\(index) still reports \(address), a chip default address shared by many boards, after being given \(given[index].map { "\($0)" } ?? "the board's")")
    }

    /// The static random address adapter `index` advertises from (nil: its public address).
    public func staticRandomAddress(index: UInt16) -> BluetoothAddress? { staticRandom[index] }

    /// Adapter `index`, taken down, gets the board's address; `done(true)` when the kernel took
    /// it, `done(false)` when not (logged once; the adapter keeps its default).
    public func replace(index: UInt16, default address: BluetoothAddress, _ done: @escaping (Bool) -> Void) {
        guard let mine = boardAddress(index, why: "hci\(index) reports \(address),") else { return loop.post { done(false) } }
        setPublicAddress(index, mine, refused: { [weak self] f in
            self?.advertiseFromStaticRandom(index, "hci\(index) reports \(address), a chip default address shared by many boards, and refused \(mine) (Set Public Address: \(f))")
        }) { [weak self] ok in
            if !ok { self?.leftAlone.insert(index) }
            done(ok)
        }
    }

    /// The public address stays a chip default (`why`): frames go out from the board's static
    /// random address, which is as stable and as much the board's own (a scanner sees it as
    /// random, which no beacon receiver minds: they match on the payload). Logged once.
    private func advertiseFromStaticRandom(_ index: UInt16, _ why: String) {
        guard staticRandom[index] == nil else { return }
        guard let serial = boardSerial(index, why: why) else { return }
        let address = BoardAddress.staticRandom(serial: serial)
        staticRandom[index] = address
        reported[index] = nil
        log.warning("\(why); advertising from the static random address \(address) (from the board serial)")
    }

    /// The board's address from its serial; nil (the reason logged once) when there is none.
    private func boardAddress(_ index: UInt16, why: String) -> BluetoothAddress? {
        boardSerial(index, why: why).map(BoardAddress.raspberryPi(serial:))
    }

    /// The board's serial; nil (the reason logged once) when there is none.
    private func boardSerial(_ index: UInt16, why: String) -> UInt64? {
        let bytes: [UInt8]
        do throws(Errno) {
            bytes = try readFile(serialPath, limit: 64)
        } catch {
            report(index, "\(why) and there is no board serial to derive one from (\(serialPath): \(error)); give it one, e.g. btmgmt --index \(index) public-addr <address>")
            return nil
        }
        guard let serial = BoardAddress.serial(fromDeviceTree: bytes) else {
            report(index, "\(why) and the board serial in \(serialPath) is not a serial number; give it an address, e.g. btmgmt --index \(index) public-addr <address>")
            return nil
        }
        return serial
    }

    /// `refused` with the kernel's answer when it refuses the address, then `done(false)`.
    private func setPublicAddress(_ index: UInt16, _ address: BluetoothAddress, refused: @escaping (String) -> Void,
                                  _ done: @escaping (Bool) -> Void) {
        mgmt.send(.setPublicAddress(index: index, address: address)) { [weak self] r in
            guard let self else { return }
            switch r {
            case .success(let p):
                if given[index] != address {
                    given[index] = address
                    reported[index] = nil
                    log.notice("hci\(index) had no usable address; gave it \(address) (from the board serial)")
                }
                if let missing = ManagementReply.missingOptions(p), !missing.isEmpty {
                    report(index, "hci\(index) took address \(address) but is still unconfigured (missing: \(missing))")
                    return done(false)
                }
                done(true)
            case .failure(let f):
                // Not Supported: the driver cannot change its address (no set_bdaddr).
                refused("\(f)")
                done(false)
            }
        }
    }

    /// Logs `message` as an error unless it is what was last logged for this adapter.
    private func report(_ index: UInt16, _ message: String) {
        guard reported[index] != message else { return }
        reported[index] = message
        log.error(message)
    }
}
