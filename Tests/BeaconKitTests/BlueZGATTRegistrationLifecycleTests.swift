import XCTest
@testable import BeaconKit

/// Registration with bluetoothd, its refusals, and bluetoothd coming and going.
extension BlueZGATTRegistrationTests {
    // MARK: registration

    func testGetManagedObjectsAnsweredBeforeRegistrationReturns() {
        let getNameOwner = connect()
        let register = sends(receive(reply(to: getNameOwner, from: Self.dbus, [.string(Self.bluetoothd)]))).first
        assertRegister(register, index: 0)
        let get = call(Self.root, Self.objectManager, "GetManagedObjects")
        let out = receive(get)
        XCTAssertEqual(out.count, 1)
        let answer = sends(out).first
        XCTAssertEqual(answer, DBusMessage(kind: .methodReturn, serial: answer?.serial ?? 0, replySerial: get.serial,
                                           destination: Self.bluetoothd, body: [bluezExpectedObjects]))
        XCTAssertEqual(answer?.signature, "a{oa{sa{sv}}}")
        XCTAssertEqual(BlueZGATTRegistration.rootPath, Self.root)
        XCTAssertEqual(BlueZGATTRegistration.servicePath, Self.service)
        XCTAssertEqual(BlueZGATTRegistration.characteristicPath, Self.characteristic)
    }

    func testRegisterReturnReportsServingOnce() {
        let register = serve()
        XCTAssertTrue(reg.isServing)
        XCTAssertEqual(receive(reply(to: register)), [])
        XCTAssertEqual(checked(reg.want(index: 0, identity: identity)), [])
        XCTAssertEqual(checked(reg.retry()), [])
        XCTAssertTrue(reg.isServing)
    }

    func testRefusalWarnsOnceAndRetries() {
        var register = sends(receive(reply(to: connect(), from: Self.dbus, [.string(Self.bluetoothd)]))).first
        var out = receive(error(to: register!, "org.bluez.Error.Failed", "Failed to register application"))
        XCTAssertEqual(sends(out), [])
        XCTAssertEqual(logs(out).count, 1)
        XCTAssertTrue(logs(out).first?.hasPrefix("warning: ") == true)
        XCTAssertTrue(logs(out).first?.contains("hci0") == true)
        XCTAssertTrue(logs(out).first?.contains("org.bluez.Error.Failed") == true)
        XCTAssertEqual(out.last, .retry(afterMs: 5000))
        XCTAssertFalse(out.contains(.serving(true)))
        XCTAssertFalse(reg.isServing)
        // The retry registers again; the same refusal is not logged again.
        out = checked(reg.retry())
        XCTAssertEqual(out.count, 1)
        assertRegister(sends(out).first, index: 0)
        XCTAssertNotEqual(sends(out).first?.serial, register?.serial)
        register = sends(out).first
        XCTAssertEqual(receive(error(to: register!, "org.bluez.Error.Failed", "Failed to register application")), [.retry(afterMs: 5000)])
        // A different refusal is.
        register = sends(checked(reg.retry())).first
        out = receive(error(to: register!, "org.bluez.Error.NotSupported"))
        XCTAssertEqual(logs(out).count, 1)
        XCTAssertEqual(out.last, .retry(afterMs: 5000))
        register = sends(checked(reg.retry())).first
        assertRegister(register, index: 0)
        XCTAssertEqual(receive(reply(to: register!)), [.serving(true)])
        XCTAssertEqual(checked(reg.retry()), [], "a late retry once registered")
    }

    func testAnAdapterNotYetExportedIsAWaitNotARefusal() {
        // bluetoothd joins the bus before it exports /org/bluez/hci0: the bus answers UnknownObject.
        let register = sends(receive(reply(to: connect(), from: Self.dbus, [.string(Self.bluetoothd)]))).first
        let out = receive(error(to: register!, "org.freedesktop.DBus.Error.UnknownObject", "Method \"RegisterApplication\" doesn't exist"))
        XCTAssertEqual(logs(out).count, 1)
        XCTAssertTrue(logs(out).first?.hasPrefix("info: ") == true, "\(logs(out))")
        XCTAssertEqual(out.last, .retry(afterMs: 5000))
        XCTAssertFalse(reg.isServing)
        // The adapter appears: registered at once, without waiting for the retry.
        let again = sends(receive(interfacesAdded("/org/bluez/hci0", ["org.bluez.Adapter1", "org.bluez.GattManager1"]))).first
        assertRegister(again, index: 0)
        XCTAssertEqual(receive(reply(to: again!)), [.serving(true)])
    }

    func testAlreadyExistsIsRegistered() {
        let register = sends(receive(reply(to: connect(), from: Self.dbus, [.string(Self.bluetoothd)]))).first
        XCTAssertEqual(receive(error(to: register!, "org.bluez.Error.AlreadyExists", "Already Exists")), [.serving(true)])
        XCTAssertTrue(reg.isServing)
    }

    // MARK: bluetoothd coming and going

    func testBluetoothdLeavesAndComesBack() {
        let old = serve()
        var out = receive(nameOwnerChanged(Self.bluetoothd, ""))
        XCTAssertEqual(sends(out), [])
        XCTAssertEqual(out.last, .serving(false))
        XCTAssertEqual(logs(out).count, 1)
        XCTAssertTrue(logs(out).first?.hasPrefix("info: ") == true)
        XCTAssertNil(reg.bluetoothdOwner)
        XCTAssertFalse(reg.isServing)
        XCTAssertEqual(sends(receive(call(Self.root, Self.objectManager, "GetManagedObjects"))).first?.errorName,
                       "org.freedesktop.DBus.Error.AccessDenied")
        XCTAssertEqual(checked(reg.retry()), [])
        // A new bluetoothd: registered again with it, answered only to it.
        out = receive(nameOwnerChanged("", ":1.7"))
        XCTAssertEqual(out.count, 2)
        let register = sends(out).first
        assertRegister(register, index: 0)
        XCTAssertEqual(receive(reply(to: old)), [], "the old bluetoothd's answer")
        XCTAssertEqual(sends(receive(call(Self.root, Self.objectManager, "GetManagedObjects", from: ":1.7"))).first?.body,
                       [bluezExpectedObjects])
        XCTAssertEqual(sends(receive(call(Self.root, Self.objectManager, "GetManagedObjects"))).first?.errorName,
                       "org.freedesktop.DBus.Error.AccessDenied")
        XCTAssertEqual(receive(reply(to: register!, from: ":1.7")), [.serving(true)])
        // Replaced at once by another: not serving until registered with that one.
        out = receive(nameOwnerChanged(":1.7", ":1.9"))
        XCTAssertEqual(out.count, 3)
        XCTAssertEqual(out.dropFirst().first, .serving(false))
        assertRegister(sends(out).first, index: 0)
        XCTAssertEqual(reg.bluetoothdOwner, ":1.9")
    }

    /// The bus delivers a signal addressed to us from any client whatever our match rules say
    /// (system.conf allows every signal), and only the bus itself can own NameOwnerChanged.
    /// Without checking that the sender is org.freedesktop.DBus, any local client could end the
    /// registration (or make another name "bluetoothd").
    func testNameOwnerChangedFromAnotherClientIgnored() {
        serve()
        XCTAssertEqual(receive(nameOwnerChanged(Self.bluetoothd, "", from: ":1.66", to: Self.us)), [])
        XCTAssertTrue(reg.isServing)
        XCTAssertEqual(reg.bluetoothdOwner, Self.bluetoothd)
        XCTAssertEqual(receive(nameOwnerChanged(Self.bluetoothd, ":1.66", from: ":1.66", to: Self.us)), [])
        XCTAssertEqual(reg.bluetoothdOwner, Self.bluetoothd)
    }
}
