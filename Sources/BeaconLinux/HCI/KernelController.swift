import BeaconKit
import CBlueZ
import Glibc

/// One adapter as the daemon reaches it: a transport to open, and its power switched off the loop.
public protocol ControllerAccess: AnyObject {
    var index: UInt16 { get }
    /// A new transport to the adapter (a raw HCI socket bound to it).
    func openTransport() throws(Errno) -> HCITransport
    /// HCIDEVUP (`up`) or HCIDEVDOWN, which can block in the kernel for seconds: run off the loop,
    /// `done` on a later turn with nil or the errno (EALREADY: already up). One change at a time:
    /// while one runs (`isChangingPower`), another is refused with `Errno.callInProgress`.
    func setPower(up: Bool, _ done: @escaping (Errno?) -> Void)
    /// True while a power change of ours runs: the kernel's up/down events are then our own doing.
    var isChangingPower: Bool { get }
    /// Asks the kernel to end the LE link to `address` (on-air byte order; `random`: its address
    /// type). Through the kernel, not a raw HCI Disconnect: the kernel holds the link's L2CAP
    /// channels, and a link cut behind its back corrupts its connection list (6.1: a BUG in
    /// hci_chan_del when the sockets are closed afterwards, measured in the testbed).
    func disconnect(address: [UInt8], random: Bool) throws(Errno)
    /// The static random address to advertise from: the adapter's public address is a chip
    /// default shared by many boards and could not be replaced (nil: advertise from the public one).
    var advertisingAddress: BluetoothAddress? { get }
    /// The address the beacon is heard from (the static random one, else the controller's), for
    /// the status file (issue 48: the local beacon's device in Home Assistant); nil when unknown.
    var address: BluetoothAddress? { get }
}

extension ControllerAccess {
    public var advertisingAddress: BluetoothAddress? { nil }
    public var address: BluetoothAddress? { advertisingAddress }
    public func disconnect(address: [UInt8], random: Bool) throws(Errno) { try managementDisconnect(index: index, address: address, random: random) }
}

/// A controller reached through the kernel: HCI sockets, and HCIDEVUP/HCIDEVDOWN on the control
/// socket (whose descriptor may be replaced when it breaks, hence the closure).
public final class KernelController: ControllerAccess {
    public let index: UInt16
    private let loop: EventLoop
    private let controlFD: () -> Int32
    private let blocking: BlockingCall
    /// Gives the adapter the board's address when it comes up without a usable one (nil: never).
    public var addressRepair: AddressRepair?
    /// While a bring-up with its address repair runs (its steps must not be interleaved with
    /// another HCIDEVUP/HCIDEVDOWN).
    private var repairing = false

    public init(index: UInt16, loop: EventLoop, controlFD: @escaping () -> Int32) {
        self.index = index
        self.loop = loop
        self.controlFD = controlFD
        blocking = BlockingCall(loop: loop)
    }

    /// The advertiser's events: command outcomes, hardware errors, and the GATT identity's links
    /// (LE Meta: LE Connection Complete; Disconnection Complete).
    public static let advertiserEvents: [UInt8] = HCIDeviceSocket.commandEvents + [0x05, 0x3e]

    public func openTransport() throws(Errno) -> HCITransport {
        try HCISocketTransport(index: index, loop: loop, events: Self.advertiserEvents, withoutReports: true)
    }

    public func setPower(up: Bool, _ done: @escaping (Errno?) -> Void) {
        guard !isChangingPower else { return loop.post { done(.callInProgress) } }
        if let addressRepair, up { return bringUp(repairing: addressRepair, done) }
        power(up: up, done)
    }

    private func power(up: Bool, _ done: @escaping (Errno?) -> Void) {
        let fd = controlFD(), i = Int32(index)
        let request = up ? cbluez_HCIDEVUP : cbluez_HCIDEVDOWN
        blocking.start({ cbluez_ioctl_int(fd, request, i) }, completion: done)
    }

    public var isChangingPower: Bool { blocking.isRunning || repairing }

    /// The address the controller reports; nil when it reports none.
    private func controllerAddress() -> BluetoothAddress? {
        (try? deviceInfo(controlFD: controlFD(), index: index)).flatMap { BluetoothAddress(bytes: $0.address) }
    }

    public var advertisingAddress: BluetoothAddress? { addressRepair?.staticRandomAddress(index: index) }

    public var address: BluetoothAddress? { advertisingAddress ?? controllerAddress() }
}

extension KernelController {
    /// HCIDEVUP with the address repair around it (`AddressRepair`): an adapter that stays
    /// unconfigured reports ENODEV, so the policy waits for it as for a missing adapter. Its steps
    /// are one power change to anyone else (`isChangingPower`).
    private func bringUp(repairing repair: AddressRepair, _ done: @escaping (Errno?) -> Void) {
        repairing = true
        repair.bringUp(index: index, power: { [weak self] up, next in
            guard let self else { return }
            power(up: up, next)
        }, address: { [weak self] in self?.controllerAddress() }) { [weak self] e in
            // No guard (docs/architecture.md, Capturing self): `done` is the caller's, told even
            // when this controller is gone.
            self?.repairing = false
            done(e)
        }
    }
}
