import BeaconKit

/// Who hears bluetoothd's side: `GATTIdentityService`, which switches servers.
public protocol BluetoothdGATTDelegate: AnyObject {
    /// On the loop, whenever bluetoothd starts or stops serving the identity.
    func bluetoothdGATT(serving: Bool)
}

/// bluetoothd's side of the GATT identity: registering the service over D-Bus
/// (`BlueZGATTApplication`), or a fake in unit tests.
public protocol BluetoothdGATT: AnyObject {
    /// Held weak: the delegate owns this side.
    var delegate: BluetoothdGATTDelegate? { get set }
    var isServing: Bool { get }
    func serve(adapterIndex: UInt16, identity: GATTIdentity)
    func stop()
}

/// Who hears which server serves the identity: `AdapterSessions`, for the status.
public protocol GATTIdentityServiceDelegate: AnyObject {
    /// At once, whenever `server` changed (the status shows it).
    func gattIdentityServerChanged(_ service: GATTIdentityService)
}

/// Who serves the GATT identity's service (SPEC §3): bluetoothd over D-Bus when it runs (it owns
/// the adapter's ATT channel then), else our own ATT server. It switches when bluetoothd starts or
/// stops, says so in the log, and the status names the path. Until bluetoothd confirms, our own
/// server listens, so a central is never left without the service.
public final class GATTIdentityService {
    public enum Server: String, Sendable {
        case bluetoothd = "bluetoothd (D-Bus)"
        case own = "altbeacond (own ATT server)"
    }

    private let log: Logger
    private let bluetoothd: BluetoothdGATT?
    private let own: ATTListener
    private let adapterAddress: (UInt16) -> [UInt8]?
    private var identity: GATTIdentity?
    private var adapterIndex: UInt16 = 0
    public private(set) var server: Server?
    /// Told when `server` changes; weak, as the delegate owns the service.
    public weak var delegate: GATTIdentityServiceDelegate?

    /// `adapterAddress`: a controller's address by index (HCIGETDEVINFO), for our ATT server to
    /// keep only the links of the beacon's adapter.
    public init(loop: EventLoop, log: Logger, bluetoothd: BluetoothdGATT?, adapterAddress: @escaping (UInt16) -> [UInt8]?) {
        self.log = log
        self.bluetoothd = bluetoothd
        own = ATTListener(loop: loop, log: log, identity: GATTIdentity(identifier: "-"))
        self.adapterAddress = adapterAddress
        bluetoothd?.delegate = self
    }

    /// Serves `identity` on adapter `index`; nil stops serving.
    public func serve(adapterIndex index: UInt16, identity new: GATTIdentity?) {
        guard let new else { return stop() }
        guard new != identity || index != adapterIndex else { return }
        identity = new
        adapterIndex = index
        own.update(identity: new)
        bluetoothd?.serve(adapterIndex: index, identity: new)
        switchServer(bluetoothdServes: bluetoothd?.isServing ?? false)
    }

    /// The beacon is on air on the adapter: its address is known now (it may have been missing
    /// at start, or another adapter's), so our ATT server listens there.
    public func adapterReady() {
        guard identity != nil, server == .own else { return }
        listenOwn()
    }

    /// Our ATT server on the adapter's address; false when it cannot listen (logged).
    @discardableResult
    private func listenOwn() -> Bool {
        guard let address = adapterAddress(adapterIndex) else { return true }   // not there yet: adapterReady
        do throws(Errno) {
            try own.start(address: address)
            return true
        } catch {
            log.error("GATT identity: cannot listen on the LE ATT channel (\(error)); the identity cannot be read")
            return false
        }
    }

    /// A central's link is about to be cut: our ATT channel with it goes first.
    public func releaseCentral(_ address: [UInt8]) { own.close(peer: address) }

    public func stop() {
        identity = nil
        bluetoothd?.stop()
        own.stop()
        if server != nil { server = nil; delegate?.gattIdentityServerChanged(self) }
    }

    private func switchServer(bluetoothdServes: Bool) {
        guard identity != nil else { return }
        let next: Server = bluetoothdServes ? .bluetoothd : .own
        if next == .own {
            guard listenOwn() else {
                if server != nil { server = nil; delegate?.gattIdentityServerChanged(self) }
                return
            }
        } else {
            own.stop()
        }
        guard next != server else { return }
        server = next
        switch next {
        case .bluetoothd: log.info("GATT identity served by bluetoothd over D-Bus (hci\(adapterIndex))")
        case .own: log.info("GATT identity served by altbeacond's own ATT server (bluetoothd is not serving it)")
        }
        delegate?.gattIdentityServerChanged(self)
    }
}

extension GATTIdentityService: BluetoothdGATTDelegate {
    public func bluetoothdGATT(serving: Bool) { switchServer(bluetoothdServes: serving) }
}
