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

    /// HCIGETDEVINFO: nil when there is no such controller.
    public func deviceFlags(index: UInt16) throws(Errno) -> UInt32? {
        var info = hci_dev_info()
        info.dev_id = index
        do {
            _ = try syscall { cbluez_ioctl_ptr(fd.rawValue, cbluez_HCIGETDEVINFO, &info) }
        } catch let e where e == .noDevice {
            return nil
        }
        return info.flags
    }

    public func isUp(index: UInt16) throws(Errno) -> Bool? {
        guard let flags = try deviceFlags(index: index) else { return nil }
        return flags & (1 << UInt32(HCI_UP)) != 0
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

/// Why a command did not complete.
public enum HCICommandFailure: Error, Equatable, Sendable, CustomStringConvertible {
    case io(Errno)
    case timeout(HCIOpcode)
    case status(HCIOpcode, HCIStatus)

    public var description: String {
        switch self {
        case .io(let e): "\(e)"
        case .timeout(let op): "\(op) timed out"
        case .status(let op, let st): "\(op) failed: \(st)"
        }
    }
}

/// A raw HCI socket bound to one controller: sends commands and waits for their completion.
public final class HCIDeviceSocket {
    public let index: UInt16
    public let fd: FileDescriptor
    /// Called with each command as written, so the monitor can tell ours from others'.
    public var onSend: ((HCIOpcode, [UInt8]) -> Void)?
    /// Events read while waiting that were not the awaited completion (hardware errors, ...).
    public private(set) var strayEvents: [HCIEvent] = []

    /// `events`: the event codes let through; a scanner adds LE Meta (0x3e) for advertising reports.
    public init(index: UInt16, events: [UInt8] = [0x0e, 0x0f, 0x10]) throws(Errno) {
        self.index = index
        fd = try openHCISocket(device: index, channel: UInt16(HCI_CHANNEL_RAW))
        try setEventFilter(fd, events: events)
    }

    public func close() { fd.close() }

    public func takeStrayEvents() -> [HCIEvent] {
        defer { strayEvents.removeAll() }
        return strayEvents
    }

    /// Sends `command` and waits up to `timeoutMs` for its Command Complete (or a failing
    /// Command Status). Returns the return parameters after a success status.
    public func execute<C: HCICommand>(_ command: C, timeoutMs: Int) -> Result<[UInt8], HCICommandFailure> {
        let op = C.opcode
        // Drop stale completions (e.g. of a command that timed out earlier).
        drain()
        do {
            _ = try fd.write(command.packet)
        } catch {
            return .failure(.io(error))
        }
        onSend?(op, command.parameters)
        let deadline = monotonicMilliseconds() + Int64(timeoutMs)
        var buf = [UInt8](repeating: 0, count: 300)
        while true {
            let left = deadline - monotonicMilliseconds()
            if left <= 0 { return .failure(.timeout(op)) }
            var p = pollfd(fd: fd.rawValue, events: Int16(POLLIN), revents: 0)
            let r = poll(&p, 1, Int32(left))
            if r < 0 { if errno == EINTR { continue }; return .failure(.io(.current)) }
            if r == 0 { return .failure(.timeout(op)) }
            if p.revents & Int16(POLLERR | POLLHUP) != 0 && p.revents & Int16(POLLIN) == 0 {
                return .failure(.io(.brokenPipe))
            }
            let n: Int
            do { n = try fd.read(into: &buf) } catch let e where e == .wouldBlock { continue } catch { return .failure(.io(error)) }
            guard case .success(let event) = HCIEvent.decode(buf[0..<n]) else { continue }
            switch event {
            case .commandComplete(let o, let rp) where o == op:
                let st = HCIStatus(rawValue: rp.first ?? 0xff)
                return st == .success ? .success(rp) : .failure(.status(op, st))
            case .commandStatus(let o, let st) where o == op:
                if st != .success { return .failure(.status(op, st)) }
            default:
                // Bounded: a chatty controller must not grow memory while nobody takes them.
                if strayEvents.count < 16 { strayEvents.append(event) }
            }
        }
    }

    private func drain() {
        var buf = [UInt8](repeating: 0, count: 300)
        while let n = try? fd.read(into: &buf), n > 0 {
            if case .success(let e) = HCIEvent.decode(buf[0..<n]), case .hardwareError = e, strayEvents.count < 16 { strayEvents.append(e) }
        }
    }
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

extension HCIDeviceSocket {
    /// Runs `command`; a status in `tolerating` counts as success here (logged at debug level:
    /// e.g. Command Disallowed to "disable" when already disabled).
    public func run(_ command: any HCICommand, timeoutMs: Int, tolerating: [HCIStatus] = [], log: Logger) -> HCICommandFailure? {
        switch execute(command, timeoutMs: timeoutMs) {
        case .success: return nil
        case .failure(.status(let op, let st)) where tolerating.contains(st):
            log.debug("\(op): \(st), not a failure here")
            return nil
        case .failure(let f):
            log.debug("\(f)")
            return f
        }
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
