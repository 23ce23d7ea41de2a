/// The GATT identity registered with bluetoothd over D-Bus (BlueZ doc/gatt-api.txt), as a pure
/// state machine: bus events in, messages to send and what changed out. The connection, its
/// socket and its timers are BeaconLinux's (BlueZGATTApplication).
///
/// The exchange: Hello; a match for org.bluez's owner changing and for its adapters coming and
/// going; GetNameOwner(org.bluez). When bluetoothd is there and the identity wanted,
/// GattManager1.RegisterApplication(our root, {}) on /org/bluez/hciN; bluetoothd then calls our
/// ObjectManager.GetManagedObjects (one service, one read-only characteristic) before it answers,
/// and later GattCharacteristic1.ReadValue for each central's read. bluetoothd leaving the bus,
/// or the adapter leaving bluetoothd, ends the registration; it is made again when they are back.
///
/// Size (about 340 lines, 8 fields): one D-Bus conversation with bluetoothd, both ways on one
/// serial counter: our calls, its signals, its calls on our objects (answered only to its name);
/// split, both halves would share the owner, the identity wanted and the serials.
public struct BlueZGATTRegistration: Sendable {
    public static let bluez = "org.bluez"
    public static let rootPath = "/org/altbeacond/identity"
    public static let servicePath = rootPath + "/service0"
    public static let characteristicPath = servicePath + "/char0"
    static let busName = "org.freedesktop.DBus"
    static let objectManager = "org.freedesktop.DBus.ObjectManager"
    static let properties = "org.freedesktop.DBus.Properties"
    static let gattManager = "org.bluez.GattManager1"
    static let serviceInterface = "org.bluez.GattService1"
    static let characteristicInterface = "org.bluez.GattCharacteristic1"
    /// Wait before asking again after bluetoothd refused (say, the adapter is not registered with
    /// it yet): long enough not to flood its log, short next to a beacon's months on a wall.
    public static let retryMs: Int64 = 5000

    public enum Output: Equatable, Sendable {
        case send(DBusMessage)
        /// bluetoothd serves the identity now (true) or no longer (false); only on a change.
        case serving(Bool)
        case info(String)
        case warning(String)
        /// Call `retry()` after this long.
        case retry(afterMs: Int64)
    }

    private enum Pending: Equatable, Sendable {
        case hello, addMatch, nameOwner, register(UInt16), unregister
    }

    private enum Registration: Equatable, Sendable {
        case none, registering(UInt16), registered(UInt16)
        var index: UInt16? {
            switch self {
            case .none: nil
            case .registering(let i), .registered(let i): i
            }
        }
    }

    private var nextSerial: UInt32 = 1
    private var pending: [UInt32: Pending] = [:]
    private var busOpen = false
    private var bluezOwner: String?
    private var wanted: (index: UInt16, identity: GATTIdentity)?
    private var registration = Registration.none
    private var servingReported = false
    /// Said once per cause, not at every retry.
    private var lastRefusal: String?

    public init() {}

    public var isServing: Bool { servingReported }
    /// bluetoothd's unique name on the bus while it is there.
    public var bluetoothdOwner: String? { bluezOwner }

    static func adapterPath(_ index: UInt16) -> String { "/org/bluez/hci\(index)" }
    static var serviceUUID: String { formatUUID(GATTIdentity.serviceUUID.reversed()) }
    static var characteristicUUID: String { formatUUID(GATTIdentity.characteristicUUID.reversed()) }

    // MARK: events

    /// The connection is authenticated: introduce ourselves and ask where bluetoothd is.
    public mutating func connected() -> [Output] {
        busOpen = true
        var out = [call(.hello, path: "/org/freedesktop/DBus", interface: Self.busName, member: "Hello")]
        out.append(call(.addMatch, path: "/org/freedesktop/DBus", interface: Self.busName, member: "AddMatch", body: [
            .string("type='signal',sender='\(Self.busName)',interface='\(Self.busName)',member='NameOwnerChanged',arg0='\(Self.bluez)'"),
        ]))
        out.append(call(.addMatch, path: "/org/freedesktop/DBus", interface: Self.busName, member: "AddMatch", body: [
            .string("type='signal',sender='\(Self.bluez)',interface='\(Self.objectManager)'"),
        ]))
        out.append(call(.nameOwner, path: "/org/freedesktop/DBus", interface: Self.busName, member: "GetNameOwner",
                        body: [.string(Self.bluez)]))
        return out
    }

    /// The connection is gone (the bus stopped, or it broke): bluetoothd forgets our
    /// application with it.
    public mutating func disconnected() -> [Output] {
        busOpen = false
        pending = [:]
        bluezOwner = nil
        registration = .none
        return report(serving: false)
    }

    /// Serve `identity` on adapter `index` (nil: serve nothing, unregister).
    public mutating func want(index: UInt16, identity: GATTIdentity?) -> [Output] {
        guard let identity else {
            wanted = nil
            return unregister() + report(serving: false)
        }
        let moved = wanted.map { $0.index != index } ?? false
        wanted = (index, identity)
        // A new identifier needs no new registration: ReadValue answers from `wanted`.
        if moved, registration != .none { return unregister() + report(serving: false) + reconcile() }
        return reconcile()
    }

    /// The retry time after a refusal has passed.
    public mutating func retry() -> [Output] { reconcile() }

    /// Whether `header` (a message decoded without its body) is one whose body this application
    /// reads: replies to our calls, bluetoothd's and the bus's signals we match, and bluetoothd's
    /// calls on our objects. Any other message (a local user's unicast signal, a call from anyone
    /// else) is handled from its header alone, its body never decoded.
    public func wantsBody(_ header: DBusMessage) -> Bool {
        switch header.kind {
        case .methodReturn, .error:
            return header.replySerial.map { pending[$0] != nil } ?? false
        case .signal:
            if header.sender == Self.busName { return header.interface == Self.busName && header.member == "NameOwnerChanged" }
            return bluezOwner != nil && header.sender == bluezOwner && header.interface == Self.objectManager
        case .methodCall:
            return wanted != nil && bluezOwner != nil && header.sender == bluezOwner
        }
    }

    public mutating func receive(_ m: DBusMessage) -> [Output] {
        switch m.kind {
        case .methodReturn, .error:
            guard let serial = m.replySerial, let what = pending.removeValue(forKey: serial) else { return [] }
            return answered(what, m)
        case .signal:
            return signal(m)
        case .methodCall:
            return methodCalled(m)
        }
    }

    // MARK: replies to our calls

    private mutating func answered(_ what: Pending, _ m: DBusMessage) -> [Output] {
        let failed = m.kind == .error
        let why = "\(m.errorName ?? "error"): \(m.firstString ?? "")"
        switch what {
        case .hello, .unregister:
            return []
        case .addMatch:
            return failed ? [.warning("GATT identity: the bus refused a signal match (\(why)); bluetoothd restarts may go unnoticed")] : []
        case .nameOwner:
            // NameHasNoOwner: bluetoothd is not running.
            return ownerChanged(to: failed ? nil : m.firstString)
        case .register(let index):
            guard registration == .registering(index) else { return [] }   // superseded
            if failed, m.errorName != "org.bluez.Error.AlreadyExists" {
                registration = .none
                var out: [Output] = []
                if lastRefusal != why {
                    lastRefusal = why
                    // A bluetoothd that has just joined the bus exports its adapters a moment
                    // later: a wait, not a refusal. InterfacesAdded registers it then; the retry
                    // covers a missed signal.
                    out.append(Self.adapterNotYetExported(m.errorName)
                        ? .info("GATT identity: hci\(index) is not yet an adapter of bluetoothd; registering when it is")
                        : .warning("GATT identity: bluetoothd refused to register it on hci\(index) (\(why)); asking again every \(Self.retryMs / 1000) s"))
                }
                return out + report(serving: false) + [.retry(afterMs: Self.retryMs)]
            }
            lastRefusal = nil
            registration = .registered(index)
            return report(serving: true)
        }
    }

    // MARK: signals

    private mutating func signal(_ m: DBusMessage) -> [Output] {
        // Only the bus itself sends as org.freedesktop.DBus: any other client may send us a
        // NameOwnerChanged too, and must not make us think bluetoothd left (or that it is them).
        if m.sender == Self.busName, m.interface == Self.busName, m.member == "NameOwnerChanged", m.body.count == 3,
           m.body[0].stringValue == Self.bluez {
            let owner = m.body[2].stringValue ?? ""
            return ownerChanged(to: owner.isEmpty ? nil : owner)
        }
        guard m.interface == Self.objectManager, let owner = bluezOwner, m.sender == owner,
              let path = m.body.first?.stringValue, m.body.count == 2 else { return [] }
        switch m.member {
        case "InterfacesAdded":
            guard let wanted, path == Self.adapterPath(wanted.index),
                  m.body[1].dictionary?.contains(where: { $0.key == Self.gattManager }) == true else { return [] }
            return reconcile()
        case "InterfacesRemoved":
            guard let index = registration.index, path == Self.adapterPath(index),
                  case .array(_, let names) = m.body[1], names.contains(.string(Self.gattManager)) else { return [] }
            // The adapter left bluetoothd (removed, or its controller gone): so did our
            // application. It is registered again when the adapter is back (InterfacesAdded).
            registration = .none
            return [.info("GATT identity: hci\(index) left bluetoothd; registering again when it is back")] + report(serving: false)
        default:
            return []
        }
    }

    private mutating func ownerChanged(to owner: String?) -> [Output] {
        guard owner != bluezOwner else { return [] }
        let before = bluezOwner
        bluezOwner = owner
        // A new bluetoothd knows nothing of the old one's applications.
        registration = .none
        pending = pending.filter { $0.value != .unregister && !isRegister($0.value) }
        lastRefusal = nil
        var out: [Output] = []
        if owner == nil, before != nil { out.append(.info("GATT identity: bluetoothd left the bus")) }
        if owner != nil, wanted != nil { out.append(.info("GATT identity: bluetoothd is on the bus (\(owner!)); registering the service with it")) }
        return out + report(serving: false) + reconcile()
    }

    /// What the bus answers for a call on an object path nobody exports (yet).
    static func adapterNotYetExported(_ error: String?) -> Bool {
        error == "org.freedesktop.DBus.Error.UnknownObject" || error == "org.freedesktop.DBus.Error.UnknownMethod"
    }

    private func isRegister(_ p: Pending) -> Bool {
        if case .register = p { return true }
        return false
    }

    // MARK: calls from bluetoothd

    private mutating func methodCalled(_ m: DBusMessage) -> [Output] {
        // Only bluetoothd reads the identity through us; a central reads it through bluetoothd.
        guard let wanted, let owner = bluezOwner, m.sender == owner else {
            return reply(error: "org.freedesktop.DBus.Error.AccessDenied", "only bluetoothd (org.bluez) calls this application", to: m)
        }
        switch (m.path ?? "", m.interface ?? "", m.member ?? "") {
        case (Self.rootPath, Self.objectManager, "GetManagedObjects"):
            return reply(to: m, [managedObjects()])
        case (Self.characteristicPath, Self.characteristicInterface, "ReadValue"):
            let value = wanted.identity.identifierValue
            let options = m.body.first?.dictionary ?? []
            let offset = options.first { $0.key == "offset" }?.value.integerValue ?? 0
            guard offset >= 0, offset <= value.count else {
                return reply(error: "org.bluez.Error.InvalidOffset", "offset \(offset) past the identifier's \(value.count) bytes", to: m)
            }
            return reply(to: m, [.bytes(Array(value[offset...]))])
        case (Self.characteristicPath, Self.characteristicInterface, "WriteValue"):
            return reply(error: "org.bluez.Error.NotPermitted", "the identifier is read-only", to: m)
        case (let path, Self.properties, "GetAll"):
            guard let props = properties(of: path), m.body.first?.stringValue == props.interface else {
                return reply(error: "org.freedesktop.DBus.Error.InvalidArgs", "no such interface", to: m)
            }
            return reply(to: m, [.properties(props.values)])
        case (let path, Self.properties, "Get"):
            guard let props = properties(of: path), m.body.count == 2, m.body[0].stringValue == props.interface,
                  let v = props.values.first(where: { $0.0 == m.body[1].stringValue }) else {
                return reply(error: "org.freedesktop.DBus.Error.InvalidArgs", "no such property", to: m)
            }
            return reply(to: m, [.variant(v.1)])
        case (_, "org.freedesktop.DBus.Peer", "Ping"):
            return reply(to: m, [])
        default:
            return reply(error: "org.freedesktop.DBus.Error.UnknownMethod", "no method \(m.interface ?? "").\(m.member ?? "") at \(m.path ?? "")", to: m)
        }
    }

    /// `a{oa{sa{sv}}}`: the service and its one characteristic.
    private func managedObjects() -> DBusValue {
        let objects = [Self.servicePath, Self.characteristicPath].compactMap { path -> DBusValue? in
            guard let p = properties(of: path) else { return nil }
            let interfaces = DBusValue.array(.dictEntry(.string, .array(.dictEntry(.string, .variant))),
                                             [.dictEntry(.string(p.interface), .properties(p.values))])
            return .dictEntry(.objectPath(path), interfaces)
        }
        return .array(.dictEntry(.objectPath, .array(.dictEntry(.string, .array(.dictEntry(.string, .variant))))), objects)
    }

    private func properties(of path: String) -> (interface: String, values: [(String, DBusValue)])? {
        switch path {
        case Self.servicePath:
            (Self.serviceInterface, [("UUID", .string(Self.serviceUUID)), ("Primary", .boolean(true))])
        case Self.characteristicPath:
            (Self.characteristicInterface, [("UUID", .string(Self.characteristicUUID)),
                                            ("Service", .objectPath(Self.servicePath)),
                                            ("Flags", .strings(["read"]))])
        default: nil
        }
    }

    // MARK: what to send

    /// Registers when bluetoothd is there, the identity wanted and not registered yet.
    private mutating func reconcile() -> [Output] {
        guard busOpen, bluezOwner != nil, let wanted, registration == .none else { return [] }
        registration = .registering(wanted.index)
        return [call(.register(wanted.index), destination: Self.bluez, path: Self.adapterPath(wanted.index),
                     interface: Self.gattManager, member: "RegisterApplication",
                     body: [.objectPath(Self.rootPath), .properties([])])]
    }

    private mutating func unregister() -> [Output] {
        guard let index = registration.index else { return [] }
        registration = .none
        guard busOpen, bluezOwner != nil else { return [] }
        return [call(.unregister, destination: Self.bluez, path: Self.adapterPath(index), interface: Self.gattManager,
                     member: "UnregisterApplication", body: [.objectPath(Self.rootPath)])]
    }

    private mutating func report(serving: Bool) -> [Output] {
        guard serving != servingReported else { return [] }
        servingReported = serving
        return [.serving(serving)]
    }

    private mutating func takeSerial() -> UInt32 {
        defer { nextSerial = nextSerial == UInt32.max ? 1 : nextSerial + 1 }
        return nextSerial
    }

    private mutating func call(_ what: Pending, destination: String = busName, path: String, interface: String,
                               member: String, body: [DBusValue] = []) -> Output {
        let serial = takeSerial()
        pending[serial] = what
        return .send(.methodCall(serial: serial, destination: destination, path: path, interface: interface,
                                 member: member, body: body))
    }

    private mutating func reply(to call: DBusMessage, _ body: [DBusValue]) -> [Output] {
        guard call.expectsReply else { return [] }
        return [.send(.methodReturn(serial: takeSerial(), to: call, body: body))]
    }

    private mutating func reply(error name: String, _ text: String, to call: DBusMessage) -> [Output] {
        guard call.expectsReply else { return [] }
        return [.send(.error(serial: takeSerial(), to: call, name: name, text: text))]
    }
}
