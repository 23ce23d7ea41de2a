import XCTest
@testable import BeaconKit

/// One connection between the read-identity procedure and an ATT server: each PDU the client
/// sends goes to `server`, each answer (through `tamper`, which may replace it) back to the client.
struct IdentityReadRun {
    var outcome: Result<[UInt8], IdentityReadFailure>?
    /// Every PDU the client sent, in order.
    var sent: [[UInt8]] = []
    var procedure: IdentityReadProcedure

    /// `tamper(i, request, response)`: the response to the client's i-th PDU (from 0).
    init(_ server: inout ATTServer, clientRxMTU: Int = ATTMTU.maximum,
         tamper: (Int, [UInt8], [UInt8]) -> [UInt8] = { _, _, r in r }) {
        procedure = IdentityReadProcedure(clientRxMTU: clientRxMTU)
        var queue = [procedure.start()]
        while !queue.isEmpty, sent.count < 1000 {
            let request = queue.removeFirst()
            sent.append(request)
            guard let response = server.handle(request) else { continue }
            let step = procedure.receive(tamper(sent.count - 1, request, response))
            queue += step.send
            if let o = step.outcome { outcome = o; break }
        }
    }

    var opcodes: [UInt8] { sent.map { $0[0] } }
    var value: String? {
        guard case .success(let v)? = outcome else { return nil }
        return String(decoding: v, as: UTF8.self)
    }
    var failure: IdentityReadFailure? {
        guard case .failure(let f)? = outcome else { return nil }
        return f
    }
}

/// The read-identity procedure against the project's own ATT server (the database the daemon
/// serves), end to end, then against servers that refuse, err, and lie.
final class IdentityReadProcedureTests: XCTestCase {
    func testReadsTheRigIdentityAsTheLibraryDoes() {
        var server = attRigServer()
        var run = IdentityReadRun(&server)
        XCTAssertEqual(run.value, attRigIdentifier)
        XCTAssertEqual(run.sent.map { hexString($0) }, [
            "020502", hexString(attHex("06 0100 ffff 0028" + attServiceHex)), "08070009000328",
            "0a0900",
        ])
        XCTAssertEqual(run.procedure.mtu, 517)
        XCTAssertEqual(run.procedure.service, 7...9)
        XCTAssertEqual(run.procedure.valueHandle, 9)
        XCTAssertTrue(run.procedure.isFinished)
        XCTAssertEqual(run.procedure.receive(attHex("0b 41")), IdentityReadStep(), "nothing after the end")
    }

    /// A 64-character identifier over ATT_MTU 23: Read gives 22 octets, Read Blob 22 more from
    /// offset 22, then the last 20 from 44, which end the value.
    func testLongIdentifierNeedsReadBlobAtMTU23() {
        let id = String(repeating: "0123456789abcdef", count: 4)
        for (serverMTU, clientMTU) in [(23, 517), (517, 23), (23, 23)] {
            var server = attRigServer(identifier: id, serverRxMTU: serverMTU)
            let run = IdentityReadRun(&server, clientRxMTU: clientMTU)
            XCTAssertEqual(run.value, id)
            XCTAssertEqual(run.procedure.mtu, 23)
            XCTAssertEqual(run.sent.suffix(3).map { hexString($0) }, ["0a0900", "0c09001600", "0c09002c00"])
        }
        var big = attRigServer(identifier: id)
        let run = IdentityReadRun(&big)
        XCTAssertEqual(run.value, id)
        XCTAssertEqual(run.opcodes.last, ATTOpcode.readRequest, "one Read at MTU 517")
    }

    /// A value exactly as long as a response holds may go on: a Read Blob finds the end (an
    /// empty part), and a server that says Attribute Not Long or Invalid Offset ends it too.
    func testValueFillingTheMTUExactly() {
        let id22 = String(repeating: "x", count: 22), id44 = String(repeating: "y", count: 44)
        var s22 = attRigServer(identifier: id22, serverRxMTU: 23)
        let r22 = IdentityReadRun(&s22)
        XCTAssertEqual(r22.value, id22)
        XCTAssertEqual(r22.sent.last.map { hexString($0) }, "0c09001600")
        var s44 = attRigServer(identifier: id44, serverRxMTU: 23)
        XCTAssertEqual(IdentityReadRun(&s44).value, id44)
        for code: UInt8 in [0x0b, 0x07] {
            var s = attRigServer(identifier: id22, serverRxMTU: 23)
            let run = IdentityReadRun(&s) { _, req, r in req[0] == ATTOpcode.readBlobRequest ? [0x01, 0x0c, 0x09, 0x00, code] : r }
            XCTAssertEqual(run.value, id22, "error 0x\(hexString([code])) on the blob ends the value")
        }
        // The same errors on the first Read are failures.
        var s = attRigServer()
        let run = IdentityReadRun(&s) { _, req, r in req[0] == ATTOpcode.readRequest ? attHex("01 0a 0900 07") : r }
        XCTAssertEqual(run.failure, .attError(ATTErrorResponse(request: 0x0a, handle: 9, code: 0x07)))
        XCTAssertEqual(run.failure?.description, "ATT error Invalid Offset (0x07) to Read Request, handle 0x0009")
    }

    func testServiceMissing() {
        var b = GATTDatabaseBuilder()
        b.service(GATTType.genericAccess)
        b.characteristic(GATTType.deviceName, properties: GATTProperty.read, value: Array("x".utf8))
        b.service(GATTUUID(0x180a))
        var server = ATTServer(database: b.database)
        let run = IdentityReadRun(&server)
        XCTAssertEqual(run.failure, .serviceMissing)
        XCTAssertEqual(run.failure?.description, "service missing: no primary service 8C422626-0C6E-4B86-8EC7-9147B233D97E")
        XCTAssertEqual(run.opcodes, [0x02, 0x06])
    }

    /// A server without Find By Type Value: Discover All Primary Services, group by group.
    func testFallsBackToReadByGroupType() {
        let noFind: (Int, [UInt8], [UInt8]) -> [UInt8] = { _, req, r in
            req[0] == ATTOpcode.findByTypeValueRequest ? attHex("01 06 0100 06") : r
        }
        var server = attRigServer(serverRxMTU: 23)
        let run = IdentityReadRun(&server, tamper: noFind)
        XCTAssertEqual(run.value, attRigIdentifier)
        XCTAssertEqual(run.opcodes, [0x02, 0x06, 0x10, 0x10, 0x08, 0x0a, 0x0c])
        XCTAssertEqual(hexString(run.sent[3]), "100700ffff0028")
        var b = GATTDatabaseBuilder()
        b.service(GATTType.genericAccess)
        var other = ATTServer(database: b.database)
        XCTAssertEqual(IdentityReadRun(&other, tamper: noFind).failure, .serviceMissing)
        // A group ending at 0xFFFF is the last one.
        var s = attRigServer()
        let last = IdentityReadRun(&s) { i, req, r in
            i == 1 ? attHex("01 06 0100 06") : i == 2 ? attHex("11 06 0100 ffff 0018") : r
        }
        XCTAssertEqual(last.failure, .serviceMissing)
    }

    func testCharacteristicProblems() {
        func run(_ build: (inout GATTDatabaseBuilder) -> Void) -> IdentityReadFailure? {
            var b = GATTDatabaseBuilder()
            b.service(GATTType.genericAccess)
            b.service(GATTDatabase.identityServiceUUID)
            build(&b)
            var server = ATTServer(database: b.database)
            return IdentityReadRun(&server).failure
        }
        XCTAssertEqual(run { _ in }, .characteristicMissing)
        XCTAssertEqual(run { $0.characteristic(GATTType.deviceName, properties: GATTProperty.read, value: [0x41]) },
                       .unexpectedCharacteristic(GATTType.deviceName))
        XCTAssertEqual(run { $0.characteristic(GATTDatabase.identifierCharacteristicUUID, properties: GATTProperty.write, value: [0x41]) },
                       .notReadable(properties: GATTProperty.write))
        XCTAssertEqual(IdentityReadFailure.unexpectedCharacteristic(GATTType.deviceName).description,
                       "unexpected characteristic: the service's first is 2A00, not A05F9DF4-9D54-4600-9224-983B75B9D154")
        XCTAssertEqual(IdentityReadFailure.notReadable(properties: 0x08).description, "characteristic not readable (properties 0x08)")
    }

    func testErrorResponsesAtEachStep() {
        // Exchange MTU refused: ATT_MTU stays 23 and the read goes on.
        var s = attRigServer()
        let refused = IdentityReadRun(&s) { i, _, r in i == 0 ? attHex("01 02 0000 06") : r }
        XCTAssertEqual(refused.value, attRigIdentifier)
        XCTAssertEqual(refused.procedure.mtu, 23)
        // Other errors end the read with the error's name.
        let cases: [(Int, String, String)] = [
            (1, "01 06 0100 05", "ATT error Insufficient Authentication (0x05) to Find By Type Value Request, handle 0x0001"),
            (2, "01 08 0700 0f", "ATT error Insufficient Encryption (0x0f) to Read By Type Request, handle 0x0007"),
            (3, "01 0a 0900 02", "ATT error Read Not Permitted (0x02) to Read Request, handle 0x0009"),
        ]
        for (step, error, reason) in cases {
            var server = attRigServer()
            let run = IdentityReadRun(&server) { i, _, r in i == step ? attHex(error) : r }
            XCTAssertEqual(run.failure?.description, reason)
            XCTAssertEqual(run.sent.count, step + 1, "nothing sent after the error")
        }
    }

    func testMalformedResponses() {
        let cases: [(Int, String, String)] = [
            (0, "03 05", "Exchange MTU Response of 2 octets, not 3"),
            (1, "07 0700 09", "Find By Type Value Response of 4 octets: not 1 + 4n, n >= 1"),
            (1, "07 0900 0700", "Find By Type Value Response with handles 9-7"),
            (1, "0b 41", "Read Response where Find By Type Value Response was due"),
            (2, "09 15 0800 02 0900", "Read By Type Response with Length 21 and 5 octets of entries"),
            (2, "09 00", "Read By Type Response with Length 0 and 0 octets of entries"),
            (2, "09 07 0800 02 0a00 002a", "characteristic at 8 with its value at 10, outside the service's 7-9"),
            (2, "09 07 0800 02 0800 002a", "characteristic at 8 with its value at 8, outside the service's 7-9"),
            (2, "09 08 0800 02 0900 002a 00", "characteristic declaration of 6 octets, not 5 or 19"),
            (3, "01 0a 0900", "Error Response of 4 octets, not 5"),
            (3, "01 08 0100 0a", "an Error Response to Read By Type Request while awaiting the Read Request one"),
            (3, "", "nothing"),
        ]
        for (step, pdu, reason) in cases {
            var server = attRigServer()
            let run = IdentityReadRun(&server) { i, _, r in i == step ? attHex(pdu) : r }
            if pdu.isEmpty {
                XCTAssertNil(run.outcome, "an empty PDU is ignored; the read waits (the caller's timeout ends it)")
                continue
            }
            XCTAssertEqual(run.failure, .malformed(reason), pdu)
            XCTAssertEqual(run.failure?.description, "malformed response: " + reason)
        }
        // A server whose blobs never end: refused past 512 octets.
        var s = attRigServer(serverRxMTU: 23)
        let endless = IdentityReadRun(&s) { _, req, r in
            req[0] == ATTOpcode.readRequest || req[0] == ATTOpcode.readBlobRequest ? [req[0] + 1] + [UInt8](repeating: 0x41, count: 22) : r
        }
        XCTAssertEqual(endless.failure, .malformed("a value longer than 512 octets"))
        XCTAssertEqual(endless.sent.count, 4 + 23)
    }

    /// The server side speaks too: its requests are answered as an empty database would, its
    /// indications confirmed, its notifications and commands ignored; the read goes on.
    func testPeerRequestsIndicationsAndNotifications() {
        var p = IdentityReadProcedure()
        XCTAssertEqual(hexString(p.start()), "020502")
        XCTAssertEqual(p.receive(attHex("02 1700")), IdentityReadStep(send: [attHex("03 0502")]))
        XCTAssertEqual(p.receive(attHex("10 0100 ffff 0028")), IdentityReadStep(send: [attHex("01 10 0100 0a")]))
        XCTAssertEqual(p.receive(attHex("0a 0300")), IdentityReadStep(send: [attHex("01 0a 0300 01")]))
        XCTAssertEqual(p.receive(attHex("12 0300 41")), IdentityReadStep(send: [attHex("01 12 0300 01")]))
        XCTAssertEqual(p.receive(attHex("1d 0300 41")), IdentityReadStep(send: [[0x1e]]))
        XCTAssertEqual(p.receive(attHex("1b 0300 41")), IdentityReadStep())
        XCTAssertEqual(p.receive(attHex("52 0300 41")), IdentityReadStep())
        XCTAssertEqual(p.receive(attHex("1e")), IdentityReadStep())
        XCTAssertEqual(p.receive([]), IdentityReadStep())
        XCTAssertEqual(p.mtu, 23, "our own exchange is still to be answered")
        XCTAssertEqual(p.receive(attHex("03 1700")).send, [attHex("06 0100 ffff 0028" + attServiceHex)])
        XCTAssertEqual(p.mtu, 23)
    }

    /// Responses mutated at random (seeded): the procedure ends or waits, never traps, never
    /// sends a PDU longer than the default ATT_MTU, and never reads more than 512 octets.
    func testMutatedResponses() {
        var rng = ConfigFuzzTests.SeededRandom(state: 21)
        for round in 0..<3000 {
            var server = attRigServer(identifier: round % 2 == 0 ? attRigIdentifier : String(repeating: "z", count: 64),
                                      serverRxMTU: round % 3 == 0 ? 23 : 517)
            let target = Int(rng.next() % 6)
            let run = IdentityReadRun(&server) { i, _, r in
                guard i == target else { return r }
                var m = r
                switch rng.next() % 4 {
                case 0: if !m.isEmpty { m.removeLast(Int(rng.next() % UInt64(m.count))) }
                case 1: m.append(UInt8(truncatingIfNeeded: rng.next()))
                case 2: if !m.isEmpty { m[Int(rng.next() % UInt64(m.count))] = UInt8(truncatingIfNeeded: rng.next()) }
                default: m = (0..<Int(rng.next() % 30)).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
                }
                return m
            }
            XCTAssertLessThan(run.sent.count, 60, "round \(round)")
            for pdu in run.sent { XCTAssertLessThanOrEqual(pdu.count, 23, "round \(round)") }
            if case .success(let v)? = run.outcome { XCTAssertLessThanOrEqual(v.count, 512) }
        }
    }
}
