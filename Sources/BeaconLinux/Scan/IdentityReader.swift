import BeaconKit
import CBlueZ
import CLinux
import Glibc

/// Why a device's identity could not be read, in one line.
public enum IdentityReaderFailure: Error, Equatable, Sendable, CustomStringConvertible {
    /// No LE connection within the connect timeout (the device stopped advertising, is out of
    /// range, or the controller never got to connect).
    case connectTimeout(ms: Int64)
    /// Connected, but the ATT exchange did not end in time.
    case exchangeTimeout(ms: Int64)
    /// The connection could not be made (ECONNREFUSED: refused; EHOSTDOWN ...).
    case connect(Errno)
    /// The link went down before the read was done.
    case disconnected(Errno?)
    /// The socket could not be made or used.
    case socket(Errno)
    /// Connected, and the ATT exchange said why not (service missing, an ATT error ...).
    case procedure(IdentityReadFailure)

    public var description: String {
        switch self {
        case .connectTimeout(let ms): "timeout: no connection within \(ms / 1000) s"
        case .exchangeTimeout(let ms): "timeout: connected, but the ATT exchange did not end within \(ms / 1000) s"
        case .connect(let e) where e == Errno(ECONNREFUSED): "refused: the connection was refused (\(e))"
        case .connect(let e): "connection failed: \(e)"
        case .disconnected(let e?): "disconnected before the read was done (\(e))"
        case .disconnected(nil): "disconnected before the read was done"
        case .socket(let e) where e.isPermission: "permission denied: an LE connection needs CAP_NET_RAW and CAP_NET_ADMIN (\(e))"
        case .socket(let e): "L2CAP socket: \(e)"
        case .procedure(let f): "\(f)"
        }
    }
}

/// The iOS library's central over the kernel (SPEC §3): an LE connection made by connecting an
/// L2CAP socket to the ATT fixed channel (CID 4) of the peer, from the scanning adapter's address
/// (the kernel creates the LE link, and drops it once the socket is closed), then the pure
/// `IdentityReadProcedure`, one PDU per read and write, then the socket closed. One read at a time;
/// nothing blocks: the socket is non-blocking and every step is a loop event or timer.
public final class IdentityReader {
    public static let connectTimeoutMs: Int64 = 10_000
    public static let exchangeTimeoutMs: Int64 = 10_000
    static let attCID: UInt16 = 4

    private let loop: EventLoop
    /// The scanning adapter's address (bdaddr_t order: least significant octet first).
    private let adapterAddress: [UInt8]
    private let deadline: LoopTimer
    private var socket: FileDescriptor?
    /// Connected: the ATT exchange under way.
    private var exchanging = false
    private var procedure = IdentityReadProcedure()
    private var done: ((Result<[UInt8], IdentityReaderFailure>) -> Void)?

    public init(loop: EventLoop, adapterAddress: [UInt8]) {
        self.loop = loop
        self.adapterAddress = adapterAddress
        deadline = loop.makeTimer()
    }

    deinit { close() }

    public var isReading: Bool { done != nil }

    /// Connects to `peer` (octets least significant first, as HCI reports them; `random`: a
    /// random address, from the report's address type) and reads the identity. `done` runs once,
    /// on a later loop turn, with the characteristic's value or why not; `cancel` drops it.
    public func read(peer: [UInt8], random: Bool, _ done: @escaping (Result<[UInt8], IdentityReaderFailure>) -> Void) {
        cancel()
        self.done = done
        procedure = IdentityReadProcedure()
        let fd: FileDescriptor
        do throws(Errno) {
            fd = FileDescriptor(try syscall { Glibc.socket(AF_BLUETOOTH, clinux_sock_seqpacket_cloexec_nonblock, BTPROTO_L2CAP) })
            socket = fd
            var local = Self.address(adapterAddress, type: BDADDR_LE_PUBLIC)
            _ = try syscall { withSockaddr(&local) { bind(fd.rawValue, $0, $1) } }
        } catch {
            return loop.post { [weak self] in self?.finish(.failure(.socket(error))) }
        }
        var remote = Self.address(peer, type: random ? BDADDR_LE_RANDOM : BDADDR_LE_PUBLIC)
        let r = withSockaddr(&remote) { connect(fd.rawValue, $0, $1) }
        let e = Errno.current
        if r != 0, e != Errno(EINPROGRESS), e != .wouldBlock {
            return loop.post { [weak self] in self?.finish(.failure(.connect(e))) }
        }
        // A connection made makes the socket writable (an L2CAP socket is neither readable nor
        // writable while it connects); a failure shows as POLLERR/POLLHUP (`lost`). Input while
        // connecting (a peer that speaks first) means connected too.
        loop.watch(fd, lost: { [weak self] _ in self?.connectFailed() }) { [weak self] in self?.connectDone(fd) }
        loop.watchWritable(fd) { [weak self] in self?.connectDone(fd) }
        deadline.schedule(afterMs: Self.connectTimeoutMs) { [weak self] in
            self?.finish(.failure(.connectTimeout(ms: IdentityReader.connectTimeoutMs)))
        }
    }

    /// Drops the read in progress (its `done` is not called) and closes the socket.
    public func cancel() {
        done = nil
        close()
    }

    /// The connecting socket became writable or readable (or failed: SO_ERROR says).
    private func connectDone(_ fd: FileDescriptor) {
        guard socket === fd, !exchanging else { return }
        if pendingError() != nil { return connectFailed() }
        connected(fd)
    }

    private func connectFailed() {
        finish(.failure(.connect(pendingError() ?? Errno(ECONNABORTED))))
    }

    /// Connected: the ATT exchange, one PDU per read, within its own deadline.
    private func connected(_ fd: FileDescriptor) {
        exchanging = true
        loop.unwatch(fd)
        deadline.schedule(afterMs: Self.exchangeTimeoutMs) { [weak self] in
            self?.finish(.failure(.exchangeTimeout(ms: IdentityReader.exchangeTimeoutMs)))
        }
        loop.watch(fd, lost: { [weak self] _ in self?.lost() }) { [weak self] in self?.readPDUs() }
        send([procedure.start()])
    }

    private func readPDUs() {
        var buf = [UInt8](repeating: 0, count: 1024)
        while let fd = socket, done != nil {
            let n: Int?
            do throws(Errno) {
                n = try readUnlessWouldBlock(fd, &buf)
            } catch {
                return finish(.failure(.disconnected(error)))
            }
            guard let n else { return }
            if n == 0 { return lost() }
            let step = procedure.receive(Array(buf[0..<n]))
            send(step.send)
            if let outcome = step.outcome { return finish(outcome.mapError { .procedure($0) }) }
        }
    }

    private func send(_ pdus: [[UInt8]]) {
        for pdu in pdus {
            guard let fd = socket else { return }
            do throws(Errno) {
                _ = try fd.write(pdu)
            } catch {
                return finish(.failure(.disconnected(error)))
            }
        }
    }

    private func lost() { finish(.failure(.disconnected(pendingError()))) }

    /// SO_ERROR: why a socket's connection failed or went down.
    private func pendingError() -> Errno? {
        guard let fd = socket else { return nil }
        var err: Int32 = 0
        var len = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(fd.rawValue, SOL_SOCKET, SO_ERROR, &err, &len) == 0, err != 0 else { return nil }
        return Errno(err)
    }

    private func finish(_ r: Result<[UInt8], IdentityReaderFailure>) {
        guard let d = done else { return }
        done = nil
        close()
        d(r)
    }

    /// Closing the socket ends the link (or the connection attempt) on the kernel's side.
    private func close() {
        exchanging = false
        deadline.cancel()
        if let fd = socket { loop.unwatch(fd); fd.close() }
        socket = nil
    }

    /// An LE address on the ATT channel: `octets` least significant first, as bdaddr_t holds them.
    static func address(_ octets: [UInt8], type: Int32) -> sockaddr_l2 {
        var a = sockaddr_l2()
        a.l2_family = sa_family_t(AF_BLUETOOTH)
        a.l2_cid = attCID.littleEndian
        a.l2_bdaddr_type = UInt8(type)
        let o = octets.count == 6 ? octets : [UInt8](repeating: 0, count: 6)
        a.l2_bdaddr = bdaddr_t(b: (o[0], o[1], o[2], o[3], o[4], o[5]))
        return a
    }
}

private func withSockaddr(_ a: inout sockaddr_l2, _ body: (UnsafePointer<sockaddr>, socklen_t) -> Int32) -> Int32 {
    withUnsafePointer(to: &a) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_l2>.size)) }
    }
}
