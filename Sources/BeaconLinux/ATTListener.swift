import BeaconKit
import CBlueZ
import CLinux
import Glibc

/// The GATT identity's own ATT server, for when bluetoothd is not running (SPEC §3): an LE L2CAP
/// socket listening on the ATT fixed channel (CID 4); each central the kernel hands us gets a
/// pure `ATTServer` over the identity's database, fed one PDU per read. Nothing here blocks: the
/// listening and the connected sockets are non-blocking and watched by the one event loop.
public final class ATTListener {
    /// More than the one central the policy lets connect: a link the kernel still holds while the
    /// next central arrives must not be refused. Each is cut at 30 s by the policy anyway.
    public static let maximumCentrals = 4
    static let attCID: UInt16 = 4

    private let loop: EventLoop
    private let log: Logger
    private var listener: FileDescriptor?
    private var centrals: [Int32: (fd: FileDescriptor, server: ATTServer, peer: [UInt8])] = [:]
    private var database: GATTDatabase

    public init(loop: EventLoop, log: Logger, identity: GATTIdentity) {
        self.loop = loop
        self.log = log
        database = GATTDatabase(name: identity.nameValue, identifier: identity.identifierValue)
    }

    public var isListening: Bool { listener != nil }
    public var connectedCentrals: Int { centrals.count }

    /// New values for centrals that connect from now on (a read in progress keeps its own).
    public func update(identity: GATTIdentity) {
        database = GATTDatabase(name: identity.nameValue, identifier: identity.identifierValue)
    }

    /// Listens on every adapter's LE ATT channel (BDADDR_ANY: an adapter move needs no new
    /// socket; an adapter with bluetoothd's own listener bound to its address goes to bluetoothd).
    public func start() throws(Errno) {
        guard listener == nil else { return }
        let fd = FileDescriptor(try syscall { socket(AF_BLUETOOTH, clinux_sock_seqpacket_cloexec_nonblock, BTPROTO_L2CAP) })
        do throws(Errno) {
            var addr = sockaddr_l2()
            addr.l2_family = sa_family_t(AF_BLUETOOTH)
            addr.l2_cid = Self.attCID.littleEndian
            addr.l2_bdaddr_type = UInt8(BDADDR_LE_PUBLIC)
            _ = try syscall {
                withUnsafePointer(to: &addr) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd.rawValue, $0, socklen_t(MemoryLayout<sockaddr_l2>.size)) }
                }
            }
            _ = try syscall { listen(fd.rawValue, 4) }
        } catch {
            fd.close()
            throw error
        }
        listener = fd
        loop.watch(fd, lost: { [weak self] e in self?.listenerLost(e) }) { [weak self] in self?.acceptAll() }
    }

    public func stop() {
        for c in centrals.values { loop.unwatch(c.fd); c.fd.close() }
        centrals = [:]
        if let fd = listener { loop.unwatch(fd); fd.close() }
        listener = nil
    }

    private func listenerLost(_ e: Errno) {
        log.warning("GATT identity: the ATT listening socket failed (\(e)); listening again")
        stop()
        try? start()
    }

    private func acceptAll() {
        guard let l = listener else { return }
        while true {
            let raw: Int32
            do throws(Errno) {
                raw = try syscall { clinux_accept_nonblock(l.rawValue) }
            } catch {
                if error != .wouldBlock { log.warning("GATT identity: accept: \(error)") }
                return
            }
            let fd = FileDescriptor(raw)
            guard centrals.count < Self.maximumCentrals else {
                log.warning("GATT identity: \(Self.maximumCentrals) centrals already connected; refusing another")
                fd.close()
                continue
            }
            let server = ATTServer(database: database, serverRxMTU: min(ATTMTU.maximum, receiveMTU(fd)))
            centrals[raw] = (fd, server, peerAddress(fd))
            log.debug("GATT identity: a central opened the ATT channel")
            loop.watch(fd, lost: { [weak self] _ in self?.drop(raw) }) { [weak self] in self?.readRequests(raw) }
        }
    }

    /// The central's address, on-air byte order (empty if the kernel does not say).
    private func peerAddress(_ fd: FileDescriptor) -> [UInt8] {
        var addr = sockaddr_l2()
        var len = socklen_t(MemoryLayout<sockaddr_l2>.size)
        let r = withUnsafeMutablePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getpeername(fd.rawValue, $0, &len) }
        }
        guard r == 0 else { return [] }
        return withUnsafeBytes(of: addr.l2_bdaddr) { Array($0) }
    }

    /// Closes the ATT channel of the central at `address` before its link is cut: a socket
    /// released after the kernel tore the link down hits a BUG in Linux 6.1's hci_chan_del
    /// (list corruption, the releasing process killed; measured in the testbed).
    public func close(peer address: [UInt8]) {
        for (raw, c) in centrals where c.peer == address { drop(raw) }
    }

    /// The most the kernel takes in one ATT PDU on this channel (its imtu); 23 when unknown.
    private func receiveMTU(_ fd: FileDescriptor) -> Int {
        var opts = l2cap_options()
        var len = socklen_t(MemoryLayout<l2cap_options>.size)
        guard getsockopt(fd.rawValue, SOL_L2CAP, L2CAP_OPTIONS, &opts, &len) == 0, opts.imtu >= 23 else { return ATTMTU.leDefault }
        return Int(opts.imtu)
    }

    private func readRequests(_ raw: Int32) {
        guard let c = centrals[raw] else { return }
        var buf = [UInt8](repeating: 0, count: 1024)
        var server = c.server
        defer { if centrals[raw] != nil { centrals[raw]?.server = server } }
        while true {
            let n: Int?
            do throws(Errno) {
                n = try readUnlessWouldBlock(c.fd, &buf)
            } catch {
                return drop(raw)
            }
            guard let n else { return }
            if n == 0 { return drop(raw) }
            guard let reply = server.handle(Array(buf[0..<n])) else { continue }
            do throws(Errno) {
                _ = try c.fd.write(reply)
            } catch {
                return drop(raw)
            }
        }
    }

    private func drop(_ raw: Int32) {
        guard let c = centrals.removeValue(forKey: raw) else { return }
        loop.unwatch(c.fd)
        c.fd.close()
        log.debug("GATT identity: a central closed the ATT channel")
    }
}
