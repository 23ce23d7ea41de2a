// The D-Bus half of the decoders harness (deploy/fuzz/FuzzDecoders.swift calls it): whatever
// arrives on the system bus connection while the GATT identity is registered with bluetoothd.
// Any local process may send to our unique name, so these bytes are untrusted too: the message
// framing and decoder, EXTERNAL authentication's line reader, signature parsing, and the BlueZ
// registration state machine fed every message decoded. Invariants: a decoded message encodes
// and decodes back to itself; every message the state machine sends is valid on the wire.

func checkDBus(_ bytes: [UInt8]) {
    _ = try? DBusType.parse(signature: String(decoding: bytes.prefix(300), as: UTF8.self))
    var auth = DBusAuthClient()
    _ = auth.feed(bytes)
    // As a stream from the bus: whole, and in two pieces.
    var reader = DBusMessageReader()
    let messages = (try? reader.feed(bytes)) ?? []
    if bytes.count > 1 {
        var split = DBusMessageReader()
        let half = bytes.count / 2
        let a = (try? split.feed(Array(bytes[..<half]))) ?? []
        let b = (try? split.feed(Array(bytes[half...]))) ?? []
        if !messages.isEmpty, a + b != messages { trapDBus("split stream decoded differently") }
    }
    var model = BlueZGATTRegistration()
    var sent: [DBusMessage] = []
    func take(_ outputs: [BlueZGATTRegistration.Output]) {
        for case .send(let m) in outputs { sent.append(m) }
    }
    take(model.connected())
    take(model.want(index: 0, identity: GATTIdentity(identifier: "2F234454-CF6D-4A0F-ADF2-F4911BA9FFA6")))
    for m in messages {
        let again = try? DBusMessage.decode(m.encoded())
        if again != m { trapDBus("a decoded message does not survive encoding: \(m)") }
        take(model.receive(m))
        // The same message as if from bluetoothd: the calls it may make reach the handlers.
        var fromBluez = m
        fromBluez.sender = model.bluetoothdOwner ?? ":1.1"
        if model.bluetoothdOwner == nil {
            take(model.receive(DBusMessage(kind: .signal, serial: 9, path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                                           member: "NameOwnerChanged", sender: "org.freedesktop.DBus",
                                           body: [.string("org.bluez"), .string(""), .string(":1.1")])))
        }
        take(model.receive(fromBluez))
    }
    for m in sent {
        guard let back = try? DBusMessage.decode(m.encoded()), back == m else { trapDBus("the state machine sent an invalid message: \(m)") }
    }
}

private func trapDBus(_ message: String) -> Never {
    print("fuzz invariant broken: \(message)")
    fatalError(message)
}
