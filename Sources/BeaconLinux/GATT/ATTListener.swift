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
    /// The adapter address the listener is bound to (on-air order).
    public private(set) var boundAddress: [UInt8]?

    public init(loop: EventLoop, log: Logger, identity: GATTIdentity) {
        self.loop = loop
        self.log = log
        database = GATTDatabase(name: identity.nameValue, identifier: identity.identifierValue)
    }

    /// New values for centrals that connect from now on (a read in progress keeps its own).
    public func update(identity: GATTIdentity) {
        database = GATTDatabase(name: identity.nameValue, identifier: identity.identifierValue)
    }

    /// Listens on the LE ATT channel of the adapter with `address` (on-air order): only its links.
    /// Not BDADDR_ANY: that would also take the ATT channel of every other adapter's links (a
    /// link the host made as a central), and such a socket, released after its link is gone,
    /// hits Linux 6.1's hci_chan_del BUG (see close(peer:)).
    public func start(address: [UInt8]) throws(Errno) {
        if listener != nil, boundAddress == address { return }
        stop()
        let fd = FileDescriptor(try syscall { socket(AF_BLUETOOTH, clinux_sock_seqpacket_cloexec_nonblock, BTPROTO_L2CAP) })
        do throws(Errno) {
            var addr = sockaddr_l2()
            addr.l2_family = sa_family_t(AF_BLUETOOTH)
            addr.l2_cid = Self.attCID.littleEndian
            withUnsafeMutableBytes(of: &addr.l2_bdaddr) { $0.copyBytes(from: address.prefix(6)) }
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
        boundAddress = address
        loop.watch(fd, lost: { [weak self] e in self?.listenerLost(e) }) { [weak self] in self?.acceptAll() }
    }

    public func stop() {
        for c in centrals.values { loop.unwatch(c.fd); c.fd.close() }
        centrals = [:]
        if let fd = listener { loop.unwatch(fd); fd.close() }
        listener = nil
        boundAddress = nil
    }

    private func listenerLost(_ e: Errno) {
        log.warning("GATT identity: the ATT listening socket failed (\(e)); listening again")
        let address = boundAddress
        stop()
        if let address { try? start(address: address) }
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
            let peer = address(fd, peer: true) ?? []
            centrals[raw] = (fd, server, peer)
            log.debug("GATT identity: central \(bluetoothAddressText(peer)) opened the ATT channel (MTU up to \(server.serverRxMTU))")
            loop.watch(fd, lost: { [weak self] _ in self?.drop(raw) }) { [weak self] in self?.readRequests(raw) }
        }
    }

    /// The socket's peer's (or its own) address, on-air byte order; nil if the kernel does not say.
    private func address(_ fd: FileDescriptor, peer: Bool) -> [UInt8]? {
        var addr = sockaddr_l2()
        var len = socklen_t(MemoryLayout<sockaddr_l2>.size)
        let r = withUnsafeMutablePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                peer ? getpeername(fd.rawValue, $0, &len) : getsockname(fd.rawValue, $0, &len)
            }
        }
        guard r == 0 else { return nil }
        return withUnsafeBytes(of: addr.l2_bdaddr) { Array($0) }
    }

    /// Closes the ATT channel of the central at `address` before its link is cut: a socket
    /// released after the kernel tore the link down hits a BUG in Linux 6.1's hci_chan_del
    /// (list corruption, the releasing process killed; measured in the testbed).
    public func close(peer address: [UInt8]) {
        let matching = centrals.filter { $0.value.peer == address }.keys
        log.debug("GATT identity: closing the ATT channel of \(bluetoothAddressText(address)) (\(matching.count) of \(centrals.count) open)")
        for raw in matching { drop(raw) }
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
