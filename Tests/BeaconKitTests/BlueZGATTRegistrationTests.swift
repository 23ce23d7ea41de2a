import XCTest
@testable import BeaconKit

typealias BlueZOutput = BlueZGATTRegistration.Output

/// The `a{oa{sa{sv}}}` bluetoothd gets from GetManagedObjects, written out in full.
let bluezExpectedObjects: DBusValue = {
    let props = DBusType.array(.dictEntry(.string, .variant))
    func object(_ path: String, _ interface: String, _ values: [(String, DBusValue)]) -> DBusValue {
        .dictEntry(.objectPath(path), .array(.dictEntry(.string, props), [
            .dictEntry(.string(interface), .array(.dictEntry(.string, .variant), values.map { .dictEntry(.string($0.0), .variant($0.1)) })),
        ]))
    }
    return .array(.dictEntry(.objectPath, .array(.dictEntry(.string, props))), [
        object("/org/altbeacond/identity/service0", "org.bluez.GattService1", [
            ("UUID", .string("8c422626-0c6e-4b86-8ec7-9147b233d97e")), ("Primary", .boolean(true)),
        ]),
        object("/org/altbeacond/identity/service0/char0", "org.bluez.GattCharacteristic1", [
            ("UUID", .string("a05f9df4-9d54-4600-9224-983b75b9d154")),
            ("Service", .objectPath("/org/altbeacond/identity/service0")),
            ("Flags", .array(.string, [.string("read")])),
        ]),
    ])
}()

/// BlueZGATTRegistration driven as the bus and bluetoothd (":1.5") would drive it; every message
/// it sends, and every one it is given, goes through the wire format first.
final class BlueZGATTRegistrationTests: XCTestCase {
    static let us = ":1.42"
    static let bluetoothd = ":1.5"
    static let dbus = "org.freedesktop.DBus"
    static let root = "/org/altbeacond/identity"
    static let service = "/org/altbeacond/identity/service0"
    static let characteristic = "/org/altbeacond/identity/service0/char0"
    static let objectManager = "org.freedesktop.DBus.ObjectManager"
    static let gattCharacteristic = "org.bluez.GattCharacteristic1"

    var reg = BlueZGATTRegistration()
    var peerSerial: UInt32 = 100
    let identity = GATTIdentity(identifier: attRigIdentifier)

    // MARK: the bus and bluetoothd

    /// `out`, each message in it encoded and decoded back unchanged.
    func checked(_ out: [BlueZOutput], file: StaticString = #filePath, line: UInt = #line) -> [BlueZOutput] {
        for case .send(let m) in out {
            let bytes = m.encoded()
            XCTAssertEqual(try DBusMessage.frameLength(bytes[...]), bytes.count, file: file, line: line)
            XCTAssertEqual(try DBusMessage.decode(bytes), m, file: file, line: line)
            XCTAssertNotEqual(m.serial, 0, file: file, line: line)
        }
        return out
    }

    func sends(_ out: [BlueZOutput]) -> [DBusMessage] {
        out.compactMap { if case .send(let m) = $0 { m } else { nil } }
    }

    /// The log lines in `out`, "info: …" or "warning: …".
    func logs(_ out: [BlueZOutput]) -> [String] {
        out.compactMap {
            switch $0 {
            case .info(let s): "info: " + s
            case .warning(let s): "warning: " + s
            default: nil
            }
        }
    }

    func receive(_ m: DBusMessage, file: StaticString = #filePath, line: UInt = #line) -> [BlueZOutput] {
        guard let arrived = try? DBusMessage.decode(m.encoded()) else {
            XCTFail("not a valid message: \(m)", file: file, line: line)
            return []
        }
        return checked(reg.receive(arrived), file: file, line: line)
    }

    func nextSerial() -> UInt32 {
        peerSerial += 1
        return peerSerial
    }

    func reply(to call: DBusMessage, from sender: String = bluetoothd, _ body: [DBusValue] = []) -> DBusMessage {
        DBusMessage(kind: .methodReturn, serial: nextSerial(), replySerial: call.serial, destination: Self.us, sender: sender, body: body)
    }

    func error(to call: DBusMessage, from sender: String = bluetoothd, _ name: String, _ text: String = "") -> DBusMessage {
        DBusMessage(kind: .error, serial: nextSerial(), errorName: name, replySerial: call.serial, destination: Self.us,
                    sender: sender, body: [.string(text)])
    }

    func call(_ path: String, _ interface: String, _ member: String, _ body: [DBusValue] = [],
              from sender: String = bluetoothd, flags: UInt8 = 0) -> DBusMessage {
        DBusMessage(kind: .methodCall, flags: flags, serial: nextSerial(), path: path, interface: interface, member: member,
                    destination: Self.us, sender: sender, body: body)
    }

    func nameOwnerChanged(_ old: String, _ new: String, from sender: String = dbus, to destination: String? = nil) -> DBusMessage {
        DBusMessage(kind: .signal, serial: nextSerial(), path: "/org/freedesktop/DBus", interface: Self.dbus, member: "NameOwnerChanged",
                    destination: destination, sender: sender, body: [.string("org.bluez"), .string(old), .string(new)])
    }

    func interfacesAdded(_ path: String, _ interfaces: [String], from sender: String = bluetoothd) -> DBusMessage {
        let props = DBusType.array(.dictEntry(.string, .variant))
        return DBusMessage(kind: .signal, serial: nextSerial(), path: "/", interface: Self.objectManager, member: "InterfacesAdded",
                           sender: sender, body: [.objectPath(path), .array(.dictEntry(.string, props), interfaces.map {
                               .dictEntry(.string($0), .properties($0 == "org.bluez.Adapter1" ? [("Powered", .boolean(true))] : []))
                           })])
    }

    func interfacesRemoved(_ path: String, _ interfaces: [String], from sender: String = bluetoothd) -> DBusMessage {
        DBusMessage(kind: .signal, serial: nextSerial(), path: "/", interface: Self.objectManager, member: "InterfacesRemoved",
                    sender: sender, body: [.objectPath(path), .strings(interfaces)])
    }

    func assertRegister(_ m: DBusMessage?, index: Int, file: StaticString = #filePath, line: UInt = #line) {
        guard let m else { return XCTFail("no RegisterApplication", file: file, line: line) }
        XCTAssertEqual(m, .methodCall(serial: m.serial, destination: "org.bluez", path: "/org/bluez/hci\(index)",
                                      interface: "org.bluez.GattManager1", member: "RegisterApplication",
                                      body: [.objectPath(Self.root), .array(.dictEntry(.string, .variant), [])]), file: file, line: line)
        XCTAssertEqual(m.signature, "oa{sv}", file: file, line: line)
        XCTAssertTrue(m.expectsReply, file: file, line: line)
    }

    func assertUnregister(_ m: DBusMessage?, index: Int, file: StaticString = #filePath, line: UInt = #line) {
        guard let m else { return XCTFail("no UnregisterApplication", file: file, line: line) }
        XCTAssertEqual(m, .methodCall(serial: m.serial, destination: "org.bluez", path: "/org/bluez/hci\(index)",
                                      interface: "org.bluez.GattManager1", member: "UnregisterApplication",
                                      body: [.objectPath(Self.root)]), file: file, line: line)
    }

    /// Connected with the bus's calls answered (the identity wanted on hci0 first unless not
    /// `wanting`); returns the GetNameOwner call, still unanswered.
    func connect(wanting: Bool = true, file: StaticString = #filePath, line: UInt = #line) -> DBusMessage {
        if wanting { XCTAssertEqual(reg.want(index: 0, identity: identity), [], file: file, line: line) }
        let out = checked(reg.connected(), file: file, line: line)
        let calls = sends(out)
        XCTAssertEqual(out.count, 4, file: file, line: line)
        guard calls.count == 4 else { return DBusMessage(kind: .methodCall) }
        XCTAssertEqual(receive(reply(to: calls[0], from: Self.dbus, [.string(Self.us)])), [], file: file, line: line)
        XCTAssertEqual(receive(reply(to: calls[1], from: Self.dbus)), [], file: file, line: line)
        XCTAssertEqual(receive(reply(to: calls[2], from: Self.dbus)), [], file: file, line: line)
        return calls[3]
    }

    /// Registered on hci0 with bluetoothd, which read our objects first: serving. Returns the
    /// RegisterApplication call.
    @discardableResult
    func serve(file: StaticString = #filePath, line: UInt = #line) -> DBusMessage {
        let out = receive(reply(to: connect(file: file, line: line), from: Self.dbus, [.string(Self.bluetoothd)]), file: file, line: line)
        guard let register = sends(out).first else {
            XCTFail("nothing registered", file: file, line: line)
            return DBusMessage(kind: .methodCall)
        }
        assertRegister(register, index: 0, file: file, line: line)
        let objects = sends(receive(call(Self.root, Self.objectManager, "GetManagedObjects"), file: file, line: line))
        XCTAssertEqual(objects.first?.body, [bluezExpectedObjects], file: file, line: line)
        XCTAssertEqual(receive(reply(to: register), file: file, line: line), [.serving(true)], file: file, line: line)
        return register
    }

    // MARK: the bus

    func testConnectedSendsHelloMatchesAndGetNameOwner() throws {
        let out = checked(reg.connected())
        let m = sends(out)
        XCTAssertEqual(out.count, 4)
        guard m.count == 4 else { return }
        let dbus = Self.dbus, path = "/org/freedesktop/DBus"
        XCTAssertEqual(m[0], .methodCall(serial: 1, destination: dbus, path: path, interface: dbus, member: "Hello"))
        XCTAssertEqual(m[0].encoded(), attHex(dbusHelloHex))
        XCTAssertEqual(m[1], .methodCall(serial: 2, destination: dbus, path: path, interface: dbus, member: "AddMatch", body: [
            .string("type='signal',sender='org.freedesktop.DBus',interface='org.freedesktop.DBus',member='NameOwnerChanged',arg0='org.bluez'"),
        ]))
        XCTAssertEqual(m[2], .methodCall(serial: 3, destination: dbus, path: path, interface: dbus, member: "AddMatch", body: [
            .string("type='signal',sender='org.bluez',interface='org.freedesktop.DBus.ObjectManager'"),
        ]))
        XCTAssertEqual(m[3], .methodCall(serial: 4, destination: dbus, path: path, interface: dbus, member: "GetNameOwner",
                                         body: [.string("org.bluez")]))
        XCTAssertTrue(m.allSatisfy(\.expectsReply))
        XCTAssertEqual(receive(reply(to: m[0], from: dbus, [.string(Self.us)])), [])
        XCTAssertEqual(receive(reply(to: m[1], from: dbus)), [])
        XCTAssertEqual(receive(reply(to: m[1], from: dbus)), [], "a second answer to the same call")
        let refused = logs(receive(error(to: m[2], from: dbus, "org.freedesktop.DBus.Error.MatchRuleInvalid", "bad")))
        XCTAssertEqual(refused.count, 1)
        XCTAssertTrue(refused.first?.hasPrefix("warning: ") == true)
        XCTAssertTrue(refused.first?.contains("org.freedesktop.DBus.Error.MatchRuleInvalid") == true)
    }

    func testNoBluetoothdNothingRegistered() {
        let getNameOwner = connect()
        XCTAssertEqual(receive(error(to: getNameOwner, from: Self.dbus, "org.freedesktop.DBus.Error.NameHasNoOwner",
                                     "Could not get owner of name 'org.bluez': no such name")), [])
        XCTAssertNil(reg.bluetoothdOwner)
        XCTAssertFalse(reg.isServing)
        XCTAssertEqual(checked(reg.retry()), [])
        XCTAssertEqual(checked(reg.want(index: 0, identity: identity)), [])
    }

    func testBluetoothdAppearsAndRegisters() {
        let getNameOwner = connect()
        XCTAssertEqual(receive(error(to: getNameOwner, from: Self.dbus, "org.freedesktop.DBus.Error.NameHasNoOwner")), [])
        let out = receive(nameOwnerChanged("", Self.bluetoothd))
        XCTAssertEqual(out.count, 2)
        XCTAssertEqual(logs(out).count, 1)
        XCTAssertTrue(logs(out).first?.hasPrefix("info: ") == true)
        XCTAssertTrue(logs(out).first?.contains(Self.bluetoothd) == true)
        XCTAssertEqual(sends(out).count, 1)
        assertRegister(sends(out).first, index: 0)
        XCTAssertEqual(reg.bluetoothdOwner, Self.bluetoothd)
        XCTAssertFalse(reg.isServing)
        // The same owner again (say, GetNameOwner's answer after the signal): nothing new.
        XCTAssertEqual(receive(nameOwnerChanged("", Self.bluetoothd)), [])
        XCTAssertEqual(checked(reg.want(index: 0, identity: identity)), [])
    }

    /// What is not for us is handled from its header: a local user's unicast signal, a call from
    /// anyone but bluetoothd, a reply to nothing we asked (issue 30).
    func testOnlyMessagesForUsHaveTheirBodyDecoded() {
        let getNameOwner = connect()
        XCTAssertTrue(reg.wantsBody(reply(to: getNameOwner, from: Self.dbus)), "a reply we wait for")
        XCTAssertEqual(receive(reply(to: getNameOwner, from: Self.dbus, [.string(Self.bluetoothd)])).count, 2)
        XCTAssertTrue(reg.wantsBody(nameOwnerChanged("", Self.bluetoothd)))
        XCTAssertTrue(reg.wantsBody(interfacesAdded("/org/bluez/hci0", ["org.bluez.GattManager1"])))
        XCTAssertTrue(reg.wantsBody(call(Self.root, Self.objectManager, "GetManagedObjects")))
        var stranger = DBusMessage(kind: .signal, serial: 7, path: "/x", interface: "a.b", member: "Flood", destination: Self.us, sender: ":1.99")
        XCTAssertFalse(reg.wantsBody(stranger))
        stranger.interface = Self.objectManager
        XCTAssertFalse(reg.wantsBody(stranger), "ObjectManager signals only from bluetoothd")
        XCTAssertFalse(reg.wantsBody(call(Self.characteristic, Self.gattCharacteristic, "ReadValue", from: ":1.99")))
        XCTAssertFalse(reg.wantsBody(DBusMessage(kind: .methodReturn, serial: 8, replySerial: 4242, destination: Self.us, sender: ":1.99")))
        // A call from anyone else is refused from its header alone.
        var header = call(Self.characteristic, Self.gattCharacteristic, "ReadValue", from: ":1.99")
        header.bodySkipped = true
        header.body = []
        let out = receive(header)
        XCTAssertEqual(sends(out).first?.errorName, "org.freedesktop.DBus.Error.AccessDenied")
    }

    func testIdentityWantedAfterBluetoothdFound() {
        let getNameOwner = connect(wanting: false)
        XCTAssertEqual(receive(reply(to: getNameOwner, from: Self.dbus, [.string(Self.bluetoothd)])), [])
        XCTAssertEqual(reg.bluetoothdOwner, Self.bluetoothd)
        let out = checked(reg.want(index: 0, identity: identity))
        XCTAssertEqual(out.count, 1)
        assertRegister(sends(out).first, index: 0)
    }
}
