// What the iOS "AltBeacon" library's central does once connected (SPEC §3), as a pure state
// machine: exchange MTUs, discover the identity service by its UUID, discover its
// characteristics, read the first one's value (with Read Blob while a response fills the MTU).
// PDUs in, PDUs out: the socket, the timeouts and the disconnection are the caller's.

/// Why the identity could not be read, in one line.
public enum IdentityReadFailure: Error, Equatable, Sendable, CustomStringConvertible {
    /// Discovery found no primary service with the identity's UUID.
    case serviceMissing
    /// The service has no characteristic.
    case characteristicMissing
    /// The service's first characteristic is another one (the library would read it all the same).
    case unexpectedCharacteristic(GATTUUID)
    /// The characteristic's properties lack Read.
    case notReadable(properties: UInt8)
    /// The server answered a request with an Error Response.
    case attError(ATTErrorResponse)
    /// A PDU broke the protocol (wrong length, handles out of order, an unasked-for response).
    case malformed(String)

    public var description: String {
        switch self {
        case .serviceMissing: "service missing: no primary service \(GATTDatabase.identityServiceUUID)"
        case .characteristicMissing: "characteristic missing: the identity service has no characteristic"
        case .unexpectedCharacteristic(let u):
            "unexpected characteristic: the service's first is \(u), not \(GATTDatabase.identifierCharacteristicUUID)"
        case .notReadable(let p): "characteristic not readable (properties 0x\(hexString(CollectionOfOne(p))))"
        case .attError(let e): "ATT error \(e)"
        case .malformed(let s): "malformed response: \(s)"
        }
    }
}

/// What to do after one PDU from the server: send these PDUs (in order), and, once the procedure
/// is over, its outcome (the characteristic's value, or why not).
public struct IdentityReadStep: Equatable, Sendable {
    public var send: [[UInt8]]
    public var outcome: Result<[UInt8], IdentityReadFailure>?
    public init(send: [[UInt8]] = [], outcome: Result<[UInt8], IdentityReadFailure>? = nil) {
        self.send = send; self.outcome = outcome
    }
}

/// The read-identity procedure of one connection.
public struct IdentityReadProcedure: Sendable {
    enum Phase: Equatable, Sendable {
        case exchangingMTU
        /// Find By Type Value for the service UUID.
        case findingService
        /// Read By Group Type from this handle on (when Find By Type Value is not supported).
        case listingServices(from: UInt16)
        case discoveringCharacteristics(ClosedRange<UInt16>)
        case reading(handle: UInt16)
        case finished
    }

    /// An attribute value is at most 512 octets (Part F 3.2.9): a longer one is refused.
    public static let maximumValueLength = 512

    /// The Client Rx MTU offered in the Exchange MTU Request.
    public let clientRxMTU: Int
    /// The ATT_MTU in force: 23 until the exchange, then min(client, server), at least 23.
    public private(set) var mtu = ATTMTU.leDefault
    /// The identity service's handles, once found.
    public private(set) var service: ClosedRange<UInt16>?
    /// The characteristic value's handle, once discovered.
    public private(set) var valueHandle: UInt16?
    private(set) var phase = Phase.exchangingMTU
    private var value: [UInt8] = []
    /// The server's own requests (a peer may discover our database too) get what an empty
    /// database answers: Attribute Not Found, Invalid Handle, an MTU response.
    private var peerRequests: ATTServer

    public init(clientRxMTU: Int = ATTMTU.maximum) {
        self.clientRxMTU = max(ATTMTU.leDefault, min(clientRxMTU, ATTMTU.maximum))
        peerRequests = ATTServer(database: GATTDatabase(attributes: []), serverRxMTU: self.clientRxMTU)
    }

    public var isFinished: Bool { phase == .finished }

    /// The first PDU: the Exchange MTU Request.
    public func start() -> [UInt8] { ATTRequest.exchangeMTU(clientRxMTU: clientRxMTU) }

    /// One PDU from the server.
    public mutating func receive(_ pdu: [UInt8]) -> IdentityReadStep {
        guard phase != .finished, let opcode = pdu.first else { return IdentityReadStep() }
        // What is not a response to us: notifications and commands are ignored, an indication
        // is confirmed, a request is answered (Part F 3.3: each direction has its own).
        if opcode & ATTOpcode.commandFlag != 0 || opcode == ATTOpcode.handleValueNotification
            || opcode == ATTOpcode.multipleHandleValueNotification || opcode == ATTOpcode.handleValueConfirmation {
            return IdentityReadStep()
        }
        if opcode == ATTOpcode.handleValueIndication { return IdentityReadStep(send: [ATTRequest.handleValueConfirmation]) }
        if !ATTOpcode.neverAnswered.contains(opcode) { return IdentityReadStep(send: peerRequests.handle(pdu).map { [$0] } ?? []) }
        var error: ATTErrorResponse? = nil
        if opcode == ATTOpcode.errorResponse {
            switch ATTResponse.error(pdu[...]) {
            case .failure(let e): return fail(.malformed(e.description))
            case .success(let e):
                guard e.request == pendingRequest else {
                    return fail(.malformed("an Error Response to \(attOpcodeName(e.request)) while awaiting the \(attOpcodeName(pendingRequest)) one"))
                }
                error = e
            }
        }
        return advance(pdu[...], error)
    }

    /// The request whose response is due.
    var pendingRequest: UInt8 {
        switch phase {
        case .exchangingMTU: ATTOpcode.exchangeMTURequest
        case .findingService: ATTOpcode.findByTypeValueRequest
        case .listingServices: ATTOpcode.readByGroupTypeRequest
        case .discoveringCharacteristics: ATTOpcode.readByTypeRequest
        case .reading: value.isEmpty ? ATTOpcode.readRequest : ATTOpcode.readBlobRequest
        case .finished: 0
        }
    }

    private mutating func advance(_ pdu: ArraySlice<UInt8>, _ error: ATTErrorResponse?) -> IdentityReadStep {
        switch phase {
        case .exchangingMTU:
            // A server that refuses the exchange keeps the default ATT_MTU (Part F 3.4.2.1).
            if error == nil {
                switch ATTResponse.exchangeMTU(pdu) {
                case .failure(let e): return fail(.malformed(e.description))
                case .success(let server): mtu = max(ATTMTU.leDefault, min(clientRxMTU, server))
                }
            }
            phase = .findingService
            return next(ATTRequest.findByTypeValue(start: 0x0001, end: 0xFFFF, type: 0x2800,
                                                   value: GATTDatabase.identityServiceUUID.wire))
        case .findingService:
            if let error {
                if error.code == ATTErrorCode.attributeNotFound.rawValue { return fail(.serviceMissing) }
                guard error.code == ATTErrorCode.requestNotSupported.rawValue else { return fail(.attError(error)) }
                return listServices(from: 0x0001)
            }
            switch ATTResponse.findByTypeValue(pdu) {
            case .failure(let e): return fail(.malformed(e.description))
            case .success(let found): return discoverCharacteristics(found[0])
            }
        case .listingServices(let from):
            if let error {
                return fail(error.code == ATTErrorCode.attributeNotFound.rawValue ? .serviceMissing : .attError(error))
            }
            switch ATTResponse.readByGroupType(pdu) {
            case .failure(let e): return fail(.malformed(e.description))
            case .success(let groups):
                if let s = groups.first(where: { $0.value.elementsEqual(GATTDatabase.identityServiceUUID.full) }) {
                    return discoverCharacteristics(s.range)
                }
                // Whole groups in handle order: the next request starts after the last one.
                let last = groups[groups.count - 1].range
                guard last.lowerBound >= from else { return fail(.malformed("Read By Group Type Response before handle \(from)")) }
                if last.upperBound == 0xFFFF { return fail(.serviceMissing) }
                return listServices(from: last.upperBound + 1)
            }
        case .discoveringCharacteristics(let range):
            if let error {
                return fail(error.code == ATTErrorCode.attributeNotFound.rawValue ? .characteristicMissing : .attError(error))
            }
            return readFirstCharacteristic(pdu, in: range)
        case .reading(let handle):
            return readValue(pdu, error, handle: handle)
        case .finished:
            return IdentityReadStep()
        }
    }

    private mutating func listServices(from start: UInt16) -> IdentityReadStep {
        phase = .listingServices(from: start)
        return next(ATTRequest.readByGroupType(start: start, end: 0xFFFF, type: GATTType.primaryService))
    }

    private mutating func discoverCharacteristics(_ range: ClosedRange<UInt16>) -> IdentityReadStep {
        service = range
        phase = .discoveringCharacteristics(range)
        return next(ATTRequest.readByType(start: range.lowerBound, end: range.upperBound, type: GATTType.characteristic))
    }

    /// The lowest declaration in the response is the service's first characteristic; its value
    /// handle must lie after it, within the service.
    private mutating func readFirstCharacteristic(_ pdu: ArraySlice<UInt8>, in range: ClosedRange<UInt16>) -> IdentityReadStep {
        let entries: [(handle: UInt16, value: ArraySlice<UInt8>)]
        switch ATTResponse.readByType(pdu) {
        case .failure(let e): return fail(.malformed(e.description))
        case .success(let list): entries = list
        }
        guard let first = entries.min(by: { $0.handle < $1.handle }) else { return fail(.characteristicMissing) }
        let c: CharacteristicDeclaration
        switch ATTResponse.characteristic(handle: first.handle, first.value) {
        case .failure(let e): return fail(.malformed(e.description))
        case .success(let d): c = d
        }
        guard range.contains(c.handle), c.valueHandle > c.handle, range.contains(c.valueHandle) else {
            return fail(.malformed("characteristic at \(c.handle) with its value at \(c.valueHandle), outside the service's \(range.lowerBound)-\(range.upperBound)"))
        }
        guard c.uuid == GATTDatabase.identifierCharacteristicUUID else { return fail(.unexpectedCharacteristic(c.uuid)) }
        guard c.properties & GATTProperty.read != 0 else { return fail(.notReadable(properties: c.properties)) }
        valueHandle = c.valueHandle
        phase = .reading(handle: c.valueHandle)
        return next(ATTRequest.read(handle: c.valueHandle))
    }

    /// Read, then Read Blob from the end of what came while each part fills the MTU (ATT_MTU-1
    /// octets: there may be more). A long read ended by Attribute Not Long or Invalid Offset has
    /// the whole value already.
    private mutating func readValue(_ pdu: ArraySlice<UInt8>, _ error: ATTErrorResponse?, handle: UInt16) -> IdentityReadStep {
        let blob = !value.isEmpty
        if let error {
            let ended = blob && (error.code == ATTErrorCode.invalidOffset.rawValue || error.code == 0x0B)
            return ended ? finish() : fail(.attError(error))
        }
        switch ATTResponse.value(pdu, opcode: blob ? ATTOpcode.readBlobResponse : ATTOpcode.readResponse) {
        case .failure(let e): return fail(.malformed(e.description))
        case .success(let part):
            value += part
            guard value.count <= Self.maximumValueLength else {
                return fail(.malformed("a value longer than \(Self.maximumValueLength) octets"))
            }
            if part.count < mtu - 1 { return finish() }
            return next(ATTRequest.readBlob(handle: handle, offset: UInt16(value.count)))
        }
    }

    private func next(_ pdu: [UInt8]) -> IdentityReadStep { IdentityReadStep(send: [pdu]) }

    private mutating func finish() -> IdentityReadStep {
        phase = .finished
        return IdentityReadStep(outcome: .success(value))
    }

    private mutating func fail(_ f: IdentityReadFailure) -> IdentityReadStep {
        phase = .finished
        return IdentityReadStep(outcome: .failure(f))
    }
}
