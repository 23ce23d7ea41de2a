import BeaconKit
import CBlueZ
import CLinux
import Glibc

/// Kernel device events (HCI_EV_STACK_INTERNAL / EVT_SI_DEVICE), delivered to raw HCI sockets
/// bound to no device.
public enum HCIDeviceEventKind: UInt16, Sendable {
    case registered = 1, unregistered = 2, up = 3, down = 4
}

/// Opens an AF_BLUETOOTH/BTPROTO_HCI socket bound to `device` (HCI_DEV_NONE for none) on `channel`.
func openHCISocket(device: UInt16, channel: UInt16) throws(Errno) -> FileDescriptor {
    let fd = FileDescriptor(try syscall { socket(AF_BLUETOOTH, clinux_sock_raw_cloexec_nonblock, BTPROTO_HCI) })
    var addr = sockaddr_hci()
    addr.hci_family = sa_family_t(AF_BLUETOOTH)
    addr.hci_dev = device
    addr.hci_channel = channel
    _ = try syscall {
        withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd.rawValue, $0, socklen_t(MemoryLayout<sockaddr_hci>.size)) }
        }
    }
    return fd
}

/// Lets only event packets with the given event codes through a raw HCI socket.
func setEventFilter(_ fd: FileDescriptor, events: [UInt8]) throws(Errno) {
    var f = hci_filter()
    f.type_mask = 1 << UInt32(HCI_EVENT_PKT)
    for e in events {
        // The kernel's filter has 64 event bits: it tests (event & 63), so the stack-internal
        // event 0xfd is bit 61.
        let bit = Int(e & 63)
        withUnsafeMutablePointer(to: &f.event_mask) {
            $0.withMemoryRebound(to: UInt32.self, capacity: 2) { $0[bit >> 5] |= 1 << UInt32(bit & 31) }
        }
    }
    _ = try syscall { setsockopt(fd.rawValue, SOL_HCI, HCI_FILTER, &f, socklen_t(MemoryLayout<hci_filter>.size)) }
}

/// The control socket in use: replaced when it breaks (Descriptors.swift), read by whatever needs
/// it at the moment it does (the controllers' ioctls).
public final class CurrentControlSocket {
    public var socket: HCIControlSocket
    public init(_ socket: HCIControlSocket) { self.socket = socket }
}

/// The adapter-independent control socket: device ioctls (up, info) and the kernel's device
/// events (registered, unregistered, up, down) for every controller.
public final class HCIControlSocket {
    public let fd: FileDescriptor

    public init() throws(Errno) {
        fd = try openHCISocket(device: UInt16(HCI_DEV_NONE), channel: UInt16(HCI_CHANNEL_RAW))
        try setEventFilter(fd, events: [HCIEvent.stackInternal])
    }

    /// HCIDEVUP. Already up is success. Also cancels the kernel's auto-power-off of a fresh controller.
    public func bringUp(index: UInt16) throws(Errno) {
        do {
            _ = try syscall { cbluez_ioctl_int(fd.rawValue, cbluez_HCIDEVUP, Int32(index)) }
        } catch let e where e == .alreadyInProgress {
            return
        }
    }

    /// The controller's flags; nil when there is no such controller.
    public func deviceFlags(index: UInt16) throws(Errno) -> UInt32? {
        do {
            return try deviceInfo(controlFD: fd.rawValue, index: index).flags
        } catch let e where e == .noDevice {
            return nil
        }
    }

    /// The controller's address (on-air byte order).
    public func deviceAddress(index: UInt16) throws(Errno) -> [UInt8] {
        try deviceInfo(controlFD: fd.rawValue, index: index).address
    }

    /// Drains pending device events. Would-block ends the read; another error means the socket
    /// broke (thrown).
    public func readDeviceEvents() throws(Errno) -> [(HCIDeviceEventKind, UInt16)] {
        var out: [(HCIDeviceEventKind, UInt16)] = []
        var buf = [UInt8](repeating: 0, count: 260)
        while let n = try readUnlessWouldBlock(fd, &buf), n > 0 {
            if case .success(.deviceEvent(let kind, let index)) = HCIEvent.decode(buf[0..<n]),
               let k = HCIDeviceEventKind(rawValue: kind) {
                out.append((k, index))
            }
        }
        return out
    }
}

/// A raw HCI socket bound to one controller (non-blocking; `HCISocketTransport` reads it on the loop).
public final class HCIDeviceSocket {
    /// Command Complete, Command Status, Hardware Error: what a command channel needs.
    public static let commandEvents: [UInt8] = [0x0e, 0x0f, 0x10]
    public let index: UInt16
    public let fd: FileDescriptor

    /// `events`: the event codes let through; a scanner adds LE Meta (0x3e) for advertising reports.
    /// `withoutReports`: of LE Meta only the connection completes (the advertiser's links), not the
    /// advertising reports another program's scan of this adapter brings.
    public init(index: UInt16, events: [UInt8] = commandEvents, withoutReports: Bool = false) throws(Errno) {
        self.index = index
        fd = try openHCISocket(device: index, channel: UInt16(HCI_CHANNEL_RAW))
        try setEventFilter(fd, events: events)
        if withoutReports { _ = try syscall { cbluez_raw_le_connections_only(fd.rawValue) } }
    }

    public func close() { fd.close() }
}

/// The kernel's HCI monitor channel: every command and event of every controller, whoever sent it.
public final class HCIMonitorSocket {
    public let fd: FileDescriptor
    public init() throws(Errno) {
        fd = try openHCISocket(device: UInt16(HCI_DEV_NONE), channel: UInt16(HCI_CHANNEL_MONITOR))
    }

    /// From now on, only commands sent to controller `index` reach this socket (a kernel-side BPF
    /// filter; the monitor otherwise carries every packet of every controller).
    public func watchCommands(index: UInt16) throws(Errno) {
        _ = try syscall { cbluez_monitor_filter_commands(fd.rawValue, index) }
        _ = try readPackets()   // drop what queued before the filter
    }

    /// Drains pending packets.
    public func readPackets() throws(Errno) -> [MonitorPacket] {
        var out: [MonitorPacket] = []
        var buf = [UInt8](repeating: 0, count: 1100)
        while let n = try readUnlessWouldBlock(fd, &buf), n > 0 {
            if case .success(let p) = MonitorPacket.decode(buf[0..<n]) { out.append(p) }
        }
        return out
    }
}

/// One read: nil when it would block (nothing more now), the count otherwise; real errors throw.
func readUnlessWouldBlock(_ fd: FileDescriptor, _ buf: inout [UInt8]) throws(Errno) -> Int? {
    do {
        return try fd.read(into: &buf)
    } catch let e where e == .wouldBlock {
        return nil
    }
}

/// The management interface's Disconnect (MGMT_OP_DISCONNECT, 0x0014) for an LE address on
/// controller `index`: written and left; the kernel ends the link the way it ends its own, and
/// Disconnection Complete reaches the advertiser's socket as for any other disconnection.
func managementDisconnect(index: UInt16, address: [UInt8], random: Bool) throws(Errno) {
    guard let peer = BluetoothAddress(bytes: address) else { throw Errno(EINVAL) }
    let fd = try openHCISocket(device: UInt16(HCI_DEV_NONE), channel: UInt16(HCI_CHANNEL_CONTROL))
    defer { fd.close() }
    _ = try fd.write(ManagementCommand.disconnect(index: index, address: peer, random: random).bytes)
}

/// HCIGETDEVINFO on a control socket `fd` (the daemon's may be replaced, hence the raw number):
/// the kernel's record of controller `index`, flags and address.
func deviceInfo(controlFD fd: Int32, index: UInt16) throws(Errno) -> hci_dev_info {
    var info = hci_dev_info()
    info.dev_id = index
    _ = try syscall { cbluez_ioctl_ptr(fd, cbluez_HCIGETDEVINFO, &info) }
    return info
}

extension hci_dev_info {
    /// On-air byte order.
    var address: [UInt8] { withUnsafeBytes(of: bdaddr) { Array($0) } }
}
