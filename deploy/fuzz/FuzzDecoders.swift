// libFuzzer harness for everything that reads bytes off the air or the kernel (SPEC §3: any
// nearby device can send them): H4 event packets (LE Advertising Reports, legacy and extended),
// HCI monitor packets, and the beacon frame decoders over the AD payload; then what scan prints
// of each frame found; the ATT server of the GATT identity (any central may connect), given
// the bytes as one PDU and as a connection's PDUs one after the other; and the ATT client of
// `scan --read-identity` (any device advertising the service answers it): its response decoders,
// and its read procedure given the bytes as the answer at each step; and the D-Bus client's
// decoders and state machine (FuzzDBus.swift). Built by deploy/fuzz/run
// together with Sources/BeaconKit/**/*.swift into one module, so internal helpers are visible.

// Called by FuzzMain.swift when ALTBEACOND_FUZZ=decoders.
public func fuzzDecoders(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []

    // An H4 event packet, as an HCI socket delivers it.
    if case .success(let event) = HCIEvent.decode(bytes[...]) { checkEvent(event) }
    // The same bytes as a monitor-channel packet (header, then a command or an event).
    if case .success(let m) = MonitorPacket.decode(bytes[...]) {
        if m.payload.count != bytes.count - MonitorPacket.headerLength { trap("monitor payload length") }
        _ = m.kind
        if let c = m.command, c.parameters.count > m.payload.count { trap("monitor command parameters") }
        if let e = m.event { checkEvent(e) }
    }
    // The bytes as an advertising payload, at index 0 and inside a larger buffer (a slice whose
    // indices do not start at 0: decoders must use startIndex).
    checkPayload(bytes[...])
    if !bytes.isEmpty { checkPayload(bytes[1...]) }
    // The bytes as ATT PDUs from a central.
    checkATT(bytes)
    // The bytes as ATT PDUs from a peripheral, to scan --read-identity's client.
    checkATTClient(bytes)
    // The bytes as what the system bus sends (deploy/fuzz/FuzzDBus.swift).
    checkDBus(bytes)
    // The bytes as what an MQTT broker sends the monitor (deploy/fuzz/FuzzMQTT.swift).
    checkMQTT(bytes)
    return 0
}

/// The GATT identity's databases: the rig's 36-octet identifier, and a 64-octet one (long reads).
private let attDatabases = [
    GATTDatabase(name: Array("AltBeacon".utf8), identifier: Array("2F234454-CF6D-4A0F-ADF2-F4911BA9FFA6".utf8)),
    GATTDatabase(name: Array("a name of twenty-nine octets.".utf8), identifier: [UInt8](repeating: 0x7A, count: 64)),
]

/// The bytes as one PDU to a new connection's server (ATT_MTU 23), then as a connection's PDUs
/// one after the other (each a length octet and that many octets; an Exchange MTU among them
/// changes the ATT_MTU the later ones are answered with), on each database.
private func checkATT(_ bytes: [UInt8]) {
    for db in attDatabases {
        var fresh = ATTServer(database: db)
        checkATTPDU(&fresh, bytes)
        var server = ATTServer(database: db, serverRxMTU: 23 + Int(bytes.first ?? 0) * 2)
        var i = 1
        while i < bytes.count {
            let n = Int(bytes[i])
            let pdu = Array(bytes[(i + 1)..<min(i + 1 + n, bytes.count)])
            checkATTPDU(&server, pdu)
            i += 1 + n
        }
        if server.database != db { trap("the ATT server changed its database") }
    }
}

/// One PDU: no answer exactly for an empty PDU, a command, a response, notification, indication
/// or confirmation; else the request's response or an Error Response about it, at most ATT_MTU
/// octets; the ATT_MTU stays within 23 and the server's Rx MTU.
private func checkATTPDU(_ server: inout ATTServer, _ pdu: [UInt8]) {
    let mtu = server.mtu
    let response = server.handle(pdu)
    let silent = pdu.isEmpty || pdu[0] & ATTOpcode.commandFlag != 0 || ATTOpcode.neverAnswered.contains(pdu[0])
    if silent != (response == nil) { trap("ATT \(hexString(pdu)): answered \(response.map { hexString($0) } ?? "nothing")") }
    if let r = response {
        if r.count > mtu { trap("ATT \(hexString(pdu)): a \(r.count)-octet response with ATT_MTU \(mtu)") }
        let isError = r.count == 5 && r[0] == ATTOpcode.errorResponse && r[1] == pdu[0]
        if !isError && r[0] != pdu[0] &+ 1 { trap("ATT \(hexString(pdu)): answered \(hexString(r))") }
    }
    if server.mtu < ATTMTU.leDefault || server.mtu > server.serverRxMTU { trap("ATT_MTU \(server.mtu)") }
}

/// The client's decoders on the bytes; then the read procedure against the rig's server with the
/// bytes as the server's answer at step k (k = 0: the MTU exchange ... 4: a Read Blob), and as a
/// whole connection's PDUs (length-prefixed, as in `checkATT`).
private func checkATTClient(_ bytes: [UInt8]) {
    for p in [bytes[...], bytes.dropFirst()] {
        _ = ATTResponse.error(p)
        _ = ATTResponse.exchangeMTU(p)
        if case .success(let ranges) = ATTResponse.findByTypeValue(p), ranges.isEmpty || ranges.contains(where: { $0.lowerBound == 0 }) {
            trap("Find By Type Value Response decoded to \(ranges)")
        }
        if case .success(let groups) = ATTResponse.readByGroupType(p), groups.isEmpty || groups.contains(where: { $0.range.lowerBound == 0 }) {
            trap("Read By Group Type Response decoded to \(groups.map(\.range))")
        }
        if case .success(let entries) = ATTResponse.readByType(p) {
            if entries.isEmpty { trap("Read By Type Response with no entry") }
            for e in entries { _ = ATTResponse.characteristic(handle: e.handle, e.value) }
        }
        _ = ATTResponse.value(p, opcode: ATTOpcode.readResponse)
    }
    for k in 0..<5 {
        var server = attDatabases[k % 2 == 0 ? 0 : 1].server(mtu: k < 3 ? 517 : 23)
        runIdentityRead(&server) { i, r in i == k ? bytes : r }
    }
    var pdus: [[UInt8]] = []
    var i = 1
    while i < bytes.count {
        let n = Int(bytes[i])
        pdus.append(Array(bytes[(i + 1)..<min(i + 1 + n, bytes.count)]))
        i += 1 + n
    }
    var p = IdentityReadProcedure(clientRxMTU: 23 + Int(bytes.first ?? 0) * 2)
    for pdu in pdus {
        let step = p.receive(pdu)
        checkClientStep(step)
        if step.outcome != nil { break }
    }
    // What --read-identity prints of the bytes as an identifier and a name.
    let report = IdentityReadReport(address: "11:22:33:44:55:66", name: bytes, outcome: .identifier(bytes))
    if !isFlatJSONObject(Array(report.jsonLine.utf8)) { trap("not JSON: \(report.jsonLine)") }
    if report.line.unicodeScalars.contains(where: { $0.value < 0x20 || ($0.value >= 0x7f && $0.value < 0xa0) }) {
        trap("raw control character in \(report.line)")
    }
}

extension GATTDatabase {
    func server(mtu: Int) -> ATTServer { ATTServer(database: self, serverRxMTU: mtu) }
}

/// One connection: the client's PDUs to `server`, its answers through `answer(i, response)`;
/// at most 1100 exchanges (a 512-octet value at MTU 23 takes 24 reads, whatever lies it is told).
private func runIdentityRead(_ server: inout ATTServer, _ answer: (Int, [UInt8]) -> [UInt8]) {
    var p = IdentityReadProcedure()
    var queue = [p.start()]
    var i = 0
    while !queue.isEmpty {
        if i > 1100 { trap("the read procedure did not end") }
        let request = queue.removeFirst()
        guard let response = server.handle(request) else { continue }
        let step = p.receive(answer(i, response))
        i += 1
        checkClientStep(step)
        if step.outcome != nil { return }
        queue += step.send
    }
}

/// What the client sends fits the default ATT_MTU; a value read is at most 512 octets.
private func checkClientStep(_ step: IdentityReadStep) {
    for pdu in step.send where pdu.isEmpty || pdu.count > ATTMTU.leDefault { trap("the client sends \(hexString(pdu))") }
    if case .success(let v)? = step.outcome, v.count > IdentityReadProcedure.maximumValueLength { trap("a \(v.count)-octet value") }
}

private func checkEvent(_ event: HCIEvent) {
    _ = event.status
    guard case .advertisingReports(let reports) = event else { return }
    for r in reports {
        if r.address.count != 6 || r.data.count > 255 { trap("report with a \(r.address.count)-byte address, \(r.data.count) data bytes") }
        if r.addressString.utf8.count != 17 { trap("address string \(r.addressString)") }
        checkPayload(r.data[...])
        for s in Sighting.all(in: r, atMs: 0) { checkSighting(s) }
    }
}

/// Every frame found: at most 31 bytes when sent again, and what it sends decodes to itself.
private func checkPayload(_ payload: ArraySlice<UInt8>) {
    _ = adStructures(payload)
    _ = GATTIdentity.isAdvertised(in: payload)
    for f in BeaconFrames.decode(payload) {
        let fields = f.fields
        let telemetry = (f as? EddystoneTLMFrame)?.received ?? .zero
        let air = f.advertisingData(telemetry)
        if air.count > 31 { trap("\(f.name) sends \(air.count) bytes") }
        let again = BeaconFrames.decode(air[...]).filter { $0.name == f.name }
        if again.count != 1 || again[0].fields != fields { trap("\(f.name) does not decode to itself: \(hexString(air))") }
        for field in fields where field.key.isEmpty { trap("\(f.name) has a field without a name") }
        checkSighting(Sighting(frame: f, rssi: -59, address: "11:22:33:44:55:66", atMs: 0))
    }
    // scan's gatt-identity row, named from the payload (or the bytes as a scan response's name).
    if let h = HeardGATTIdentity.decode(payload) {
        checkSighting(Sighting(frame: h, rssi: -59, address: "11:22:33:44:55:66", atMs: 0))
        checkSighting(Sighting(frame: HeardGATTIdentity(localName: Array(payload)), rssi: 127, address: "11:22:33:44:55:66", atMs: 0))
    }
}

/// What scan prints: JSON that parses, plain lines of `key=value` words, no raw control character.
private func checkSighting(_ s: Sighting) {
    let json = s.jsonLine
    if !isFlatJSONObject(Array(json.utf8)) { trap("not JSON: \(json)") }
    let line = BeaconTable.line("new", s)
    let words = line.split(separator: " ", omittingEmptySubsequences: false)
    if words.count < 3 || words.dropFirst(2).contains(where: { !$0.contains("=") }) { trap("plain line: \(line)") }
    var table = BeaconTable()
    _ = table.record(s)
    let text = table.render(now: 1000, title: "t") + line
    if text.unicodeScalars.contains(where: { ($0.value < 0x20 && $0 != "\n") || ($0.value >= 0x7f && $0.value < 0xa0) }) {
        trap("raw control character in scan output")
    }
}

/// `{"key":value,...}` with string, number or null values, as RFC 8259 says.
private func isFlatJSONObject(_ b: [UInt8]) -> Bool {
    var i = 0
    func peek() -> UInt8? { i < b.count ? b[i] : nil }
    func string() -> Bool {
        guard peek() == UInt8(ascii: "\"") else { return false }
        i += 1
        while let c = peek() {
            i += 1
            switch c {
            case UInt8(ascii: "\""): return true
            case UInt8(ascii: "\\"):
                guard let e = peek() else { return false }
                i += 1
                if e == UInt8(ascii: "u") {
                    for _ in 0..<4 {
                        guard let h = peek(), (h >= 0x30 && h <= 0x39) || (h >= 0x61 && h <= 0x66) || (h >= 0x41 && h <= 0x46) else { return false }
                        i += 1
                    }
                } else if !"\"\\/bfnrt".utf8.contains(e) {
                    return false
                }
            case 0..<0x20: return false
            default: break
            }
        }
        return false
    }
    func number() -> Bool {
        if peek() == UInt8(ascii: "-") { i += 1 }
        func digits() -> Bool {
            let start = i
            while let c = peek(), c >= 0x30, c <= 0x39 { i += 1 }
            return i > start
        }
        guard digits() else { return false }
        if peek() == UInt8(ascii: ".") { i += 1; return digits() }
        return true
    }
    func value() -> Bool {
        switch peek() {
        case UInt8(ascii: "\""): return string()
        case UInt8(ascii: "n"):
            guard b.count >= i + 4, b[i..<(i + 4)].elementsEqual("null".utf8) else { return false }
            i += 4
            return true
        default: return number()
        }
    }
    guard peek() == UInt8(ascii: "{") else { return false }
    i += 1
    while true {
        guard string(), peek() == UInt8(ascii: ":") else { return false }
        i += 1
        guard value() else { return false }
        if peek() == UInt8(ascii: ",") { i += 1; continue }
        guard peek() == UInt8(ascii: "}") else { return false }
        return i + 1 == b.count
    }
}

private func trap(_ message: String) -> Never {
    print("fuzz invariant broken: \(message)")
    fatalError(message)
}
