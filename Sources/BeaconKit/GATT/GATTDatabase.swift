// The GATT database altbeacond serves for the iOS "AltBeacon" library (CharruaLab, formerly
// Vicinity; SPEC §3): the GAP service, the GATT service, and the identity service with its one
// read-only characteristic. Handles, types and permissions never change; nothing is writable.

/// One attribute (Core Vol 3 Part F 3.2): handle, type, value, whether a client may read it.
public struct GATTAttribute: Equatable, Sendable {
    public let handle: UInt16
    public let type: GATTUUID
    public let value: [UInt8]
    public let readable: Bool
    /// For a grouping declaration («Primary Service», «Secondary Service», «Characteristic»;
    /// Part G 2.5.3) the last handle of its group; for any other attribute its own handle.
    public let groupEnd: UInt16
}

/// Attributes in handle order, from handle 0x0001 with no gaps.
public struct GATTDatabase: Equatable, Sendable {
    public let attributes: [GATTAttribute]

    /// The identity service the library scans for and discovers by UUID.
    public static let identityServiceUUID = GATTUUID("8C422626-0C6E-4B86-8EC7-9147B233D97E")!
    /// Its one characteristic: Read, the identifier as UTF-8.
    public static let identifierCharacteristicUUID = GATTUUID("A05F9DF4-9D54-4600-9224-983B75B9D154")!

    /// GAP's Device Name is at most 248 octets (Core Vol 3 Part C 12.1).
    public static let maximumNameLength = 248
    /// An attribute value is at most 512 octets (Part F 3.2.9).
    public static let maximumValueLength = 512

    /// The layout (Part G 3: a service declaration, then for each characteristic its declaration
    /// and its value):
    /// ```
    /// 0x0001 «Primary Service» 1800            0x0006 «Primary Service» 1801
    /// 0x0002 «Characteristic» 02 0300 002A     0x0007 «Primary Service» 8C422626-…-9147B233D97E
    /// 0x0003 Device Name: `name`               0x0008 «Characteristic» 02 0900 A05F9DF4-…-983B75B9D154
    /// 0x0004 «Characteristic» 02 0500 012A     0x0009 the identifier: `identifier`
    /// 0x0005 Appearance: 00 00 (unknown)
    /// ```
    /// The GATT service is empty: Service Changed (0x2A05) is for a server whose services can
    /// change while a client may have cached them (Part G 7.1). Here handles and types are fixed
    /// (only the values follow the config), no client bonds with the beacon, and the
    /// characteristic would need a Client Characteristic Configuration descriptor that clients
    /// write, while nothing on this server is writable. A `name` longer than 248 octets or an
    /// `identifier` longer than 512 is cut there (the config allows 29 and 64).
    public init(name: [UInt8], identifier: [UInt8]) {
        var b = GATTDatabaseBuilder()
        b.service(GATTType.genericAccess)
        b.characteristic(GATTType.deviceName, properties: GATTProperty.read,
                         value: Array(name.prefix(GATTDatabase.maximumNameLength)))
        b.characteristic(GATTType.appearance, properties: GATTProperty.read, value: [0x00, 0x00])
        b.service(GATTType.genericAttribute)
        b.service(GATTDatabase.identityServiceUUID)
        b.characteristic(GATTDatabase.identifierCharacteristicUUID, properties: GATTProperty.read,
                         value: Array(identifier.prefix(GATTDatabase.maximumValueLength)))
        self = b.database
    }

    init(attributes: [GATTAttribute]) { self.attributes = attributes }

    /// The last handle in use (0 for an empty database).
    public var lastHandle: UInt16 { attributes.last?.handle ?? 0 }

    /// The handle of the identifier's value (where the library reads).
    public var identifierValueHandle: UInt16? {
        attributes.first { $0.type == GATTDatabase.identifierCharacteristicUUID }?.handle
    }

    /// The attribute at `handle`, or nil (0x0000 is never a handle; Part F 3.2.2).
    public func attribute(_ handle: UInt16) -> GATTAttribute? {
        guard handle >= 1, Int(handle) <= attributes.count else { return nil }
        return attributes[Int(handle) - 1]
    }

    /// The attributes with handles in `start...end` (the caller has checked 1 <= start <= end).
    public func attributes(from start: UInt16, through end: UInt16) -> ArraySlice<GATTAttribute> {
        let lo = Int(start) - 1
        let hi = min(Int(end), attributes.count)
        guard lo >= 0, lo < hi else { return [] }
        return attributes[lo..<hi]
    }
}

/// Builds a database service by service (handles assigned in order, groups closed at the end).
/// Internal: the daemon has one layout; tests build others (an unreadable value, a secondary
/// service, mixed value lengths).
struct GATTDatabaseBuilder {
    private var entries: [(type: GATTUUID, value: [UInt8], readable: Bool)] = []

    private var nextHandle: UInt16 { UInt16(entries.count + 1) }

    mutating func service(_ uuid: GATTUUID, primary: Bool = true) {
        let type = primary ? GATTType.primaryService : GATTType.secondaryService
        entries.append((type, uuid.wire, true))
    }

    /// A characteristic declaration and its value; readable when `properties` has Read.
    mutating func characteristic(_ uuid: GATTUUID, properties: UInt8, value: [UInt8]) {
        var declaration: [UInt8] = [properties]
        declaration.appendATTLE16(nextHandle + 1)
        declaration.append(contentsOf: uuid.wire)
        entries.append((GATTType.characteristic, declaration, true))
        entries.append((uuid, value, properties & GATTProperty.read != 0))
    }

    /// A descriptor or any other attribute after the last one.
    mutating func attribute(_ type: GATTUUID, value: [UInt8], readable: Bool = true) {
        entries.append((type, value, readable))
    }

    var database: GATTDatabase {
        let services: Set<GATTUUID> = [GATTType.primaryService, GATTType.secondaryService]
        var attributes: [GATTAttribute] = []
        for (i, e) in entries.enumerated() {
            var end = i
            if services.contains(e.type) {
                while end + 1 < entries.count, !services.contains(entries[end + 1].type) { end += 1 }
            } else if e.type == GATTType.characteristic {
                while end + 1 < entries.count, !services.contains(entries[end + 1].type),
                      entries[end + 1].type != GATTType.characteristic { end += 1 }
            }
            attributes.append(GATTAttribute(handle: UInt16(i + 1), type: e.type, value: e.value,
                                            readable: e.readable, groupEnd: UInt16(end + 1)))
        }
        return GATTDatabase(attributes: attributes)
    }
}
