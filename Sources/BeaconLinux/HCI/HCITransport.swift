import BeaconKit
import CBlueZ
import Glibc

/// Where one controller's HCI commands go and its events come from: the kernel's raw HCI socket
/// (`HCISocketTransport`), or a scripted controller in the unit tests. Everything that talks to a
/// controller, the beacon and `scan` alike, goes through an `HCICommandChannel` over one of these.
public protocol HCITransport: AnyObject {
    /// Writes one command packet (H4 type byte first).
    func write(_ packet: [UInt8]) throws(Errno)
    /// From now on: `onPacket` with each event packet read (on the loop, never inside `write`),
    /// and `onLost` once when the transport broke (the controller went away under it).
    func start(onPacket: @escaping (ArraySlice<UInt8>) -> Void, onLost: @escaping (Errno) -> Void)
    func close()
}

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
}

extension ControllerAccess {
    public var advertisingAddress: BluetoothAddress? { nil }
    public func disconnect(address: [UInt8], random: Bool) throws(Errno) { try managementDisconnect(index: index, address: address, random: random) }
}

/// The kernel's raw HCI socket bound to one controller, read when the loop says it is readable.
public final class HCISocketTransport: HCITransport {
    public let socket: HCIDeviceSocket
    private let loop: EventLoop
    /// See `EventLoop.watch(_:coalesceMs:lost:_:)`.
    private let coalesceMs: Int64

    public init(index: UInt16, loop: EventLoop, events: [UInt8] = HCIDeviceSocket.commandEvents, coalesceMs: Int64 = 0) throws(Errno) {
        socket = try HCIDeviceSocket(index: index, events: events)
        self.loop = loop
        self.coalesceMs = coalesceMs
    }

    public func write(_ packet: [UInt8]) throws(Errno) { _ = try socket.fd.write(packet) }

    public func start(onPacket: @escaping (ArraySlice<UInt8>) -> Void, onLost: @escaping (Errno) -> Void) {
        // Weak: a packet handler may end the session that owns this transport.
        loop.watch(socket.fd, coalesceMs: coalesceMs, lost: onLost) { [weak self] in
            guard let self else { return }
            var buf = [UInt8](repeating: 0, count: 300)
            while socket.fd.isOpen {
                let n: Int?
                do throws(Errno) {
                    n = try readUnlessWouldBlock(socket.fd, &buf)
                } catch {
                    return onLost(error)
                }
                guard let n else { return }
                if n == 0 { return onLost(.brokenPipe) }
                onPacket(buf[0..<n])
            }
        }
    }

    public func close() {
        loop.unwatch(socket.fd)
        socket.close()
    }
}

/// A controller reached through the kernel: HCI sockets, and HCIDEVUP/HCIDEVDOWN on the control
/// socket (whose descriptor may be replaced when it breaks, hence the closure).
public final class KernelController: ControllerAccess {
    public let index: UInt16
    let loop: EventLoop
    let controlFD: () -> Int32
    private let blocking: BlockingCall
    /// Gives the adapter the board's address when it comes up without a usable one (nil: never).
    public var addressRepair: AddressRepair?
    /// While a bring-up with its address repair runs (its steps must not be interleaved with
    /// another HCIDEVUP/HCIDEVDOWN).
    var repairing = false

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
        try HCISocketTransport(index: index, loop: loop, events: Self.advertiserEvents)
    }

    public func setPower(up: Bool, _ done: @escaping (Errno?) -> Void) {
        guard !isChangingPower else { return loop.post { done(.callInProgress) } }
        if let addressRepair, up { return bringUp(repairing: addressRepair, done) }
        power(up: up, done)
    }

    func power(up: Bool, _ done: @escaping (Errno?) -> Void) {
        let fd = controlFD(), i = Int32(index)
        let request = up ? cbluez_HCIDEVUP : cbluez_HCIDEVDOWN
        blocking.start({ cbluez_ioctl_int(fd, request, i) }, completion: done)
    }

    public var isChangingPower: Bool { blocking.isRunning || repairing }

    public var advertisingAddress: BluetoothAddress? { addressRepair?.staticRandomAddress(index: index) }
}
