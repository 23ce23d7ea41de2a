import BeaconKit
import Glibc

/// bluetoothd's side of the GATT identity (SPEC §3): BeaconKit's `BlueZGATTRegistration` on a
/// `DBusConnection` to the system bus. The bus is joined only while an identity is to be served;
/// a bus that is not there (no dbus-daemon: bluetoothd cannot be running either) or that goes away
/// is tried again with back-off, and meanwhile `GATTIdentityService` serves the identity itself.
public final class BlueZGATTApplication: BluetoothdGATT {
    /// Back-off between attempts to reach the bus: from 1 s to a minute.
    static let reconnectMs: ClosedRange<Int64> = 1000...60_000

    private let loop: EventLoop
    private let log: Logger
    private let busPath: String
    private let connection: DBusConnection
    private var model = BlueZGATTRegistration()
    private let retryTimer: LoopTimer
    private let reconnectTimer: LoopTimer
    private var reconnectDelay = BlueZGATTApplication.reconnectMs.lowerBound
    private var wanted = false
    /// The last reason the bus could not be reached, said once until it changes.
    private var lastBusProblem: String?
    /// An oversized message from the bus was logged on this connection.
    private var saidOversized = false

    public weak var delegate: BluetoothdGATTDelegate?
    public var isServing: Bool { model.isServing }

    public init(loop: EventLoop, log: Logger, busPath: String = DBusConnection.systemBusPath()) {
        self.loop = loop
        self.log = log
        self.busPath = busPath
        connection = DBusConnection(loop: loop)
        retryTimer = loop.makeTimer()
        reconnectTimer = loop.makeTimer()
        connection.delegate = self
    }

    public func serve(adapterIndex: UInt16, identity: GATTIdentity) {
        wanted = true
        apply(model.want(index: adapterIndex, identity: identity))
        if connection.state == .closed, !reconnectTimer.isScheduled { connect() }
    }

    public func stop() {
        wanted = false
        apply(model.want(index: 0, identity: nil))
        retryTimer.cancel()
        reconnectTimer.cancel()
        // The unregistration is written already; the bus reads it before it sees us leave.
        connection.close()
        apply(model.disconnected())
    }

    private func connect() {
        guard wanted else { return }
        do throws(Errno) {
            try connection.open(path: busPath)
        } catch {
            busUnreachable("no D-Bus system bus at \(busPath) (\(error))")
        }
    }

    private func busUnreachable(_ reason: String) {
        guard wanted else { return }
        if lastBusProblem != reason {
            lastBusProblem = reason
            log.info("GATT identity: \(reason); bluetoothd cannot serve it, so altbeacond does; trying the bus again with back-off")
        }
        reconnectTimer.schedule(afterMs: reconnectDelay) { [weak self] in self?.connect() }
        reconnectDelay = min(reconnectDelay * 2, Self.reconnectMs.upperBound)
    }

    private func apply(_ outputs: [BlueZGATTRegistration.Output]) {
        for o in outputs {
            switch o {
            case .send(let m): connection.send(m)
            case .serving(let serving): delegate?.bluetoothdGATT(serving: serving)
            case .info(let text): log.info(text)
            case .warning(let text): log.warning(text)
            case .retry(let ms): retryTimer.schedule(afterMs: ms) { [weak self] in
                guard let self else { return }
                apply(model.retry())
            }
            }
        }
    }
}

extension BlueZGATTApplication: DBusConnectionDelegate {
    public func dbusConnection(wantsBodyOf header: DBusMessage) -> Bool { model.wantsBody(header) }

    public func dbusConnection(_ event: DBusConnectionEvent) {
        switch event {
        case .opened:
            lastBusProblem = nil
            saidOversized = false
            reconnectDelay = Self.reconnectMs.lowerBound
            log.debug("GATT identity: on the D-Bus system bus (\(busPath))")
            apply(model.connected())
        case .received(let m):
            apply(model.receive(m))
        case .droppedOversized(let n):
            // Said once a connection: whoever sends them may send many.
            guard !saidOversized else { return }
            saidOversized = true
            log.warning("GATT identity: dropped a \(n)-byte message from the D-Bus system bus unread (over \(DBusMessage.maximumLength); a local program sent it); staying connected")
        case .closed(let reason):
            apply(model.disconnected())
            busUnreachable(reason)
        }
    }
}
