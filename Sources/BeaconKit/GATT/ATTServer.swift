// The ATT server of one connection, as pure code (Core Vol 3 Part F; modelled on BlueZ's
// src/shared/gatt-server.c and att.c): a PDU in, the response PDU out. A table of request
// handlers, each with the lengths its PDU may have, checked before it runs; every failure is the
// Error Response the spec names. Nothing here writes: no PDU changes the database.

/// What a request handler answers: a response PDU, or an Error Response's code and handle.
enum ATTReply: Equatable, Sendable {
    case pdu([UInt8])
    case error(ATTErrorCode, handle: UInt16)
}

/// The lengths a request PDU may have, opcode included (Part F 3.4).
enum ATTLength: Sendable {
    case exactly(Int)
    /// With a 16-bit or a 128-bit UUID.
    case either(Int, Int)
    case atLeast(Int)
    /// The opcode and a Set Of Handles: at least two handles, whole handles only.
    case handles

    func accepts(_ n: Int) -> Bool {
        switch self {
        case .exactly(let a): return n == a
        case .either(let a, let b): return n == a || n == b
        case .atLeast(let a): return n >= a
        case .handles: return n >= 5 && n % 2 == 1
        }
    }
}

struct ATTRequestHandler: Sendable {
    let lengths: ATTLength
    let run: @Sendable (inout ATTServer, ArraySlice<UInt8>) -> ATTReply
}

/// One ATT bearer's server: the database and the ATT_MTU negotiated on this connection. Make one
/// per connection (the MTU starts at 23 on each).
///
/// Size (about 260 lines over 3 files): the twelve requests of Part F 3.4, one handler each, in one
/// table with the lengths their PDUs may have; split, that table and the ATT_MTU every reply is cut
/// to would be read across types.
public struct ATTServer: Sendable {
    public let database: GATTDatabase
    /// What this server offers in an Exchange MTU Response (its receive MTU).
    public let serverRxMTU: Int
    /// The ATT_MTU in force: 23 until an Exchange MTU, then min(client, server), at least 23.
    /// Every response is at most this long.
    public private(set) var mtu: Int = ATTMTU.leDefault
    /// Whether a client has exchanged MTUs on this connection (Part F 3.4.2.1: once per
    /// connection; a repeated request is answered the same and changes nothing).
    public private(set) var mtuExchanged = false

    /// `serverRxMTU` is clamped to 23...517.
    public init(database: GATTDatabase, serverRxMTU: Int = ATTMTU.maximum) {
        self.database = database
        self.serverRxMTU = max(ATTMTU.leDefault, min(serverRxMTU, ATTMTU.maximum))
    }

    /// The response to one PDU from the client, or nil where the spec has none: a command (the
    /// Command Flag set: Write Command, Signed Write Command, any unknown one; Part F 3.3 says
    /// ignore it), a notification, an indication, a confirmation or a response (this side is no
    /// client, so none is expected; the bearer may choose to drop the link), and an empty PDU.
    /// An unknown request gets Request Not Supported; a request of the wrong length Invalid PDU.
    public mutating func handle(_ pdu: [UInt8]) -> [UInt8]? {
        guard let opcode = pdu.first else { return nil }
        if opcode & ATTOpcode.commandFlag != 0 || ATTOpcode.neverAnswered.contains(opcode) { return nil }
        guard let handler = ATTServer.handlers[opcode] else {
            return ATTServer.errorResponse(opcode, 0, .requestNotSupported)
        }
        guard handler.lengths.accepts(pdu.count) else {
            return ATTServer.errorResponse(opcode, 0, .invalidPDU)
        }
        switch handler.run(&self, pdu[...]) {
        case .pdu(let response): return response
        case .error(let code, let handle): return ATTServer.errorResponse(opcode, handle, code)
        }
    }

    /// ATT_ERROR_RSP (Part F 3.4.1.1): opcode, the request's opcode, the handle in error, the code.
    public static func errorResponse(_ request: UInt8, _ handle: UInt16, _ code: ATTErrorCode) -> [UInt8] {
        var pdu: [UInt8] = [ATTOpcode.errorResponse, request]
        pdu.appendATTLE16(handle)
        pdu.append(code.rawValue)
        return pdu
    }

    /// The requests served, by opcode, with the lengths each PDU may have.
    static let handlers: [UInt8: ATTRequestHandler] = [
        ATTOpcode.exchangeMTURequest: ATTRequestHandler(lengths: .exactly(3)) { s, p in s.exchangeMTU(p) },
        ATTOpcode.findInformationRequest: ATTRequestHandler(lengths: .exactly(5)) { s, p in s.findInformation(p) },
        ATTOpcode.findByTypeValueRequest: ATTRequestHandler(lengths: .atLeast(7)) { s, p in s.findByTypeValue(p) },
        ATTOpcode.readByTypeRequest: ATTRequestHandler(lengths: .either(7, 21)) { s, p in s.readByType(p) },
        ATTOpcode.readRequest: ATTRequestHandler(lengths: .exactly(3)) { s, p in s.read(p) },
        ATTOpcode.readBlobRequest: ATTRequestHandler(lengths: .exactly(5)) { s, p in s.readBlob(p) },
        ATTOpcode.readMultipleRequest: ATTRequestHandler(lengths: .handles) { s, p in s.readMultiple(p) },
        ATTOpcode.readByGroupTypeRequest: ATTRequestHandler(lengths: .either(7, 21)) { s, p in s.readByGroupType(p) },
        ATTOpcode.writeRequest: ATTRequestHandler(lengths: .atLeast(3)) { s, p in s.refuseWrite(p) },
        ATTOpcode.prepareWriteRequest: ATTRequestHandler(lengths: .atLeast(5)) { s, p in s.refuseWrite(p) },
        ATTOpcode.executeWriteRequest: ATTRequestHandler(lengths: .exactly(2)) { s, p in s.executeWrite(p) },
        ATTOpcode.readMultipleVariableRequest: ATTRequestHandler(lengths: .handles) { s, p in s.readMultipleVariable(p) },
    ]

    // MARK: MTU and writes

    /// ATT_EXCHANGE_MTU_REQ: Client Rx MTU (2). Answers with the server's Rx MTU; the ATT_MTU
    /// becomes the smaller of the two, or stays 23 if either is below it (Part F 3.4.2.2).
    mutating func exchangeMTU(_ p: ArraySlice<UInt8>) -> ATTReply {
        let client = Int(p.attLE16(at: 1))
        if !mtuExchanged {
            mtu = max(ATTMTU.leDefault, min(client, serverRxMTU))
            mtuExchanged = true
        }
        var pdu: [UInt8] = [ATTOpcode.exchangeMTUResponse]
        pdu.appendATTLE16(UInt16(serverRxMTU))
        return .pdu(pdu)
    }

    /// ATT_WRITE_REQ (handle, value) and ATT_PREPARE_WRITE_REQ (handle, offset, part): no handle
    /// is writable, so Invalid Handle for one that does not exist, else Write Not Permitted.
    func refuseWrite(_ p: ArraySlice<UInt8>) -> ATTReply {
        let handle = p.attLE16(at: 1)
        guard database.attribute(handle) != nil else { return .error(.invalidHandle, handle: handle) }
        return .error(.writeNotPermitted, handle: handle)
    }

    /// ATT_EXECUTE_WRITE_REQ: Flags (1). The prepare queue is always empty (no Prepare Write is
    /// ever accepted), so cancelling or writing it does nothing; other flag values are reserved.
    func executeWrite(_ p: ArraySlice<UInt8>) -> ATTReply {
        let flags = p[p.startIndex + 1]
        guard flags <= 0x01 else { return .error(.invalidPDU, handle: 0) }
        return .pdu([ATTOpcode.executeWriteResponse])
    }

    /// Starting and Ending Handle at octets 1-4: Invalid Handle (in error: the starting handle)
    /// when the start is 0x0000 or after the end (Part F 3.4.3.1 and the other ranged requests).
    static func handleRange(_ p: ArraySlice<UInt8>) -> (start: UInt16, end: UInt16, error: ATTReply?) {
        let start = p.attLE16(at: 1)
        let end = p.attLE16(at: 3)
        let bad = start == 0 || start > end
        return (start, end, bad ? .error(.invalidHandle, handle: start) : nil)
    }
}
