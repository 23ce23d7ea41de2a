import XCTest
@testable import BeaconKit

/// bluetoothd's calls to the application, adapters coming and going, the wanted identity changing.
extension BlueZGATTRegistrationTests {
    func readValue(_ options: [(String, DBusValue)]?, from sender: String = bluetoothd, flags: UInt8 = 0) -> DBusMessage {
        call(Self.characteristic, Self.gattCharacteristic, "ReadValue", options.map { [.properties($0)] } ?? [], from: sender, flags: flags)
    }

    /// The one answer to `m`: its body (a return) or its error name.
    func answer(_ m: DBusMessage, file: StaticString = #filePath, line: UInt = #line) -> (body: [DBusValue]?, error: String?) {
        let out = receive(m, file: file, line: line)
        XCTAssertEqual(out.count, 1, file: file, line: line)
        guard let r = sends(out).first else { return (nil, nil) }
        XCTAssertEqual(r.replySerial, m.serial, file: file, line: line)
        XCTAssertEqual(r.destination, m.sender, file: file, line: line)
        XCTAssertFalse(r.expectsReply, file: file, line: line)
        if r.kind == .error {
            XCTAssertEqual(r.signature, "s", file: file, line: line)
            return (nil, r.errorName)
        }
        XCTAssertEqual(r.kind, .methodReturn, file: file, line: line)
        return (r.body, nil)
    }

    // MARK: ReadValue

    func testReadValue() {
        serve()
        let id = Array(attRigIdentifier.utf8)
        let device: (String, DBusValue) = ("device", .objectPath("/org/bluez/hci0/dev_00_11_22_33_44_55"))
        XCTAssertEqual(answer(readValue([])).body, [.bytes(id)])
        XCTAssertEqual(answer(readValue(nil)).body, [.bytes(id)])
        XCTAssertEqual(answer(readValue([device, ("mtu", .uint16(517)), ("link", .string("LE"))])).body, [.bytes(id)])
        XCTAssertEqual(answer(readValue([device, ("offset", .uint16(5)), ("mtu", .uint16(23))])).body, [.bytes(Array(id[5...]))])
        XCTAssertEqual(answer(readValue([("offset", .uint16(0))])).body, [.bytes(id)])
        XCTAssertEqual(answer(readValue([("offset", .uint16(UInt16(id.count)))])).body, [.bytes([])])
        let r = sends(receive(readValue([]))).first
        XCTAssertEqual(r?.signature, "ay")
        XCTAssertEqual(r?.sender, nil)
    }

    func testReadValueOffsetPastTheEnd() {
        serve()
        let count = attRigIdentifier.utf8.count
        XCTAssertEqual(answer(readValue([("offset", .uint16(UInt16(count + 1)))])).error, "org.bluez.Error.InvalidOffset")
        XCTAssertEqual(answer(readValue([("offset", .uint16(.max))])).error, "org.bluez.Error.InvalidOffset")
        XCTAssertEqual(answer(readValue([("offset", .int16(-1))])).error, "org.bluez.Error.InvalidOffset")
    }

    func testChangedIdentifierServedWithoutRegisteringAgain() {
        serve()
        XCTAssertEqual(checked(reg.want(index: 0, identity: GATTIdentity(identifier: "room-42"))), [])
        XCTAssertEqual(answer(readValue([])).body, [.bytes(Array("room-42".utf8))])
        XCTAssertEqual(answer(readValue([("offset", .uint16(5))])).body, [.bytes(Array("42".utf8))])
        XCTAssertTrue(reg.isServing)
    }

    // MARK: other calls

    func testCallsFromAnotherClientDenied() {
        serve()
        let denied = "org.freedesktop.DBus.Error.AccessDenied"
        XCTAssertEqual(answer(call(Self.root, Self.objectManager, "GetManagedObjects", from: ":1.66")).error, denied)
        XCTAssertEqual(answer(readValue([], from: ":1.66")).error, denied)
        XCTAssertEqual(answer(call(Self.root, "org.freedesktop.DBus.Introspectable", "Introspect", from: ":1.66")).error, denied)
    }

    func testOtherMethods() {
        serve()
        let unknown = "org.freedesktop.DBus.Error.UnknownMethod"
        XCTAssertEqual(answer(call(Self.root, "org.freedesktop.DBus.Introspectable", "Introspect")).error, unknown)
        XCTAssertEqual(answer(call(Self.service, Self.objectManager, "GetManagedObjects")).error, unknown)
        XCTAssertEqual(answer(call(Self.service, Self.gattCharacteristic, "ReadValue", [.properties([])])).error, unknown)
        XCTAssertEqual(answer(call(Self.characteristic, Self.gattCharacteristic, "StartNotify")).error, unknown)
        XCTAssertEqual(answer(call(Self.characteristic, Self.gattCharacteristic, "WriteValue", [.bytes([1]), .properties([])])).error,
                       "org.bluez.Error.NotPermitted")
        let properties = "org.freedesktop.DBus.Properties"
        XCTAssertEqual(answer(call(Self.service, properties, "GetAll", [.string("org.bluez.GattService1")])).body, [
            .properties([("UUID", .string("8c422626-0c6e-4b86-8ec7-9147b233d97e")), ("Primary", .boolean(true))]),
        ])
        XCTAssertEqual(answer(call(Self.characteristic, properties, "Get", [.string(Self.gattCharacteristic), .string("Flags")])).body,
                       [.variant(.strings(["read"]))])
        XCTAssertEqual(answer(call(Self.characteristic, properties, "Get", [.string(Self.gattCharacteristic), .string("Value")])).error,
                       "org.freedesktop.DBus.Error.InvalidArgs")
        XCTAssertEqual(answer(call(Self.root, properties, "GetAll", [.string("org.bluez.GattService1")])).error,
                       "org.freedesktop.DBus.Error.InvalidArgs")
        XCTAssertEqual(answer(call("/", "org.freedesktop.DBus.Peer", "Ping")).body, [])
    }

    func testNoReplyExpectedGetsNoReply() {
        serve()
        let noReply = DBusMessage.noReplyExpected
        XCTAssertEqual(receive(readValue([], flags: noReply)), [])
        XCTAssertEqual(receive(readValue([("offset", .uint16(999))], flags: noReply)), [])
        XCTAssertEqual(receive(call(Self.root, Self.objectManager, "GetManagedObjects", flags: noReply)), [])
        XCTAssertEqual(receive(call(Self.root, "org.freedesktop.DBus.Introspectable", "Introspect", flags: noReply)), [])
        XCTAssertEqual(receive(readValue([], from: ":1.66", flags: noReply)), [])
    }

    // MARK: adapters

    func testAdapterRemovedAndAddedAgain() {
        serve()
        let gatt = "org.bluez.GattManager1"
        XCTAssertEqual(receive(interfacesRemoved("/org/bluez/hci1", [gatt])), [])
        XCTAssertEqual(receive(interfacesRemoved("/org/bluez/hci0", ["org.bluez.Media1"])), [])
        XCTAssertEqual(receive(interfacesRemoved("/org/bluez/hci0", [gatt], from: ":1.66")), [])
        XCTAssertTrue(reg.isServing)
        var out = receive(interfacesRemoved("/org/bluez/hci0", ["org.freedesktop.DBus.Properties", "org.bluez.Adapter1", gatt,
                                                                  "org.bluez.LEAdvertisingManager1"]))
        XCTAssertEqual(sends(out), [])
        XCTAssertEqual(logs(out).count, 1)
        XCTAssertTrue(logs(out).first?.hasPrefix("info: ") == true)
        XCTAssertEqual(out.last, .serving(false))
        XCTAssertFalse(reg.isServing)
        XCTAssertEqual(receive(interfacesAdded("/org/bluez/hci0", ["org.bluez.Adapter1"])), [])
        XCTAssertEqual(receive(interfacesAdded("/org/bluez/hci1", ["org.bluez.Adapter1", gatt])), [])
        XCTAssertEqual(receive(interfacesAdded("/org/bluez/hci0", ["org.bluez.Adapter1", gatt], from: ":1.66")), [])
        out = receive(interfacesAdded("/org/bluez/hci0", ["org.bluez.Adapter1", gatt]))
        XCTAssertEqual(out.count, 1)
        let register = sends(out).first
        assertRegister(register, index: 0)
        XCTAssertEqual(receive(interfacesAdded("/org/bluez/hci0", [gatt])), [], "already registering")
        XCTAssertEqual(receive(reply(to: register!)), [.serving(true)])
    }

    func testAdapterRemovedWhileRegistering() {
        let register = sends(receive(reply(to: connect(), from: Self.dbus, [.string(Self.bluetoothd)]))).first
        let out = receive(interfacesRemoved("/org/bluez/hci0", ["org.bluez.GattManager1"]))
        XCTAssertEqual(logs(out).count, 1)
        XCTAssertEqual(out.count, 1)
        XCTAssertEqual(receive(error(to: register!, "org.bluez.Error.Failed", "adapter gone")), [], "superseded: no retry")
        assertRegister(sends(receive(interfacesAdded("/org/bluez/hci0", ["org.bluez.GattManager1"]))).first, index: 0)
    }

    func testMovedToAnotherAdapter() {
        serve()
        let out = checked(reg.want(index: 1, identity: identity))
        XCTAssertEqual(out.count, 3)
        XCTAssertEqual(sends(out).count, 2)
        assertUnregister(sends(out).first, index: 0)
        XCTAssertEqual(out.dropFirst().first, .serving(false))
        let register = sends(out).last
        assertRegister(register, index: 1)
        XCTAssertEqual(receive(reply(to: sends(out)[0])), [], "UnregisterApplication's return")
        XCTAssertEqual(sends(receive(call(Self.root, Self.objectManager, "GetManagedObjects"))).first?.body, [bluezExpectedObjects])
        XCTAssertEqual(receive(interfacesRemoved("/org/bluez/hci0", ["org.bluez.GattManager1"])), [])
        XCTAssertEqual(receive(reply(to: register!)), [.serving(true)])
        XCTAssertEqual(receive(interfacesRemoved("/org/bluez/hci1", ["org.bluez.GattManager1"])).last, .serving(false))
    }

    func testIdentityNoLongerWanted() {
        serve()
        let out = checked(reg.want(index: 0, identity: nil))
        XCTAssertEqual(out.count, 2)
        assertUnregister(sends(out).first, index: 0)
        XCTAssertEqual(out.last, .serving(false))
        XCTAssertEqual(receive(reply(to: sends(out)[0])), [])
        XCTAssertEqual(answer(call(Self.root, Self.objectManager, "GetManagedObjects")).error, "org.freedesktop.DBus.Error.AccessDenied")
        XCTAssertEqual(checked(reg.retry()), [])
        XCTAssertEqual(checked(reg.want(index: 0, identity: nil)), [], "nothing left to unregister")
        XCTAssertEqual(logs(receive(nameOwnerChanged(Self.bluetoothd, ""))).count, 1)
        XCTAssertEqual(receive(nameOwnerChanged("", ":1.7")), [], "nothing to register with the new one")
        assertRegister(sends(checked(reg.want(index: 0, identity: identity))).first, index: 0)
    }

    // MARK: the connection

    func testDisconnectedAndConnectedAgain() {
        let register = serve()
        XCTAssertEqual(checked(reg.disconnected()), [.serving(false)])
        XCTAssertFalse(reg.isServing)
        XCTAssertNil(reg.bluetoothdOwner)
        XCTAssertEqual(checked(reg.disconnected()), [])
        XCTAssertEqual(receive(reply(to: register)), [], "an answer from the old connection")
        XCTAssertEqual(checked(reg.retry()), [])
        let getNameOwner = connect()
        XCTAssertGreaterThan(getNameOwner.serial, register.serial)
        let again = sends(receive(reply(to: getNameOwner, from: Self.dbus, [.string(":1.8")]))).first
        assertRegister(again, index: 0)
        XCTAssertEqual(receive(reply(to: again!, from: ":1.8")), [.serving(true)])
    }
}
