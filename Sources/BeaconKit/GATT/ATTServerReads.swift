// The read requests by handle (Core Vol 3 Part F 3.4.4.3-8 and 3.4.4.11-12): Read, Read Blob
// (long values, e.g. a 64-octet identifier with ATT_MTU 23), Read Multiple, Read Multiple
// Variable Length.

extension ATTServer {
    /// The attribute at `handle` if a client may read it, else the error: Invalid Handle (0x0000
    /// or no such attribute), Read Not Permitted.
    func readable(_ handle: UInt16) -> Result<GATTAttribute, ATTReplyError> {
        guard let a = database.attribute(handle) else { return .failure(ATTReplyError(.invalidHandle, handle)) }
        guard a.readable else { return .failure(ATTReplyError(.readNotPermitted, handle)) }
        return .success(a)
    }

    /// ATT_READ_REQ: Attribute Handle. Answers the value's first ATT_MTU-1 octets (Part F 3.4.4.4).
    func read(_ p: ArraySlice<UInt8>) -> ATTReply {
        switch readable(p.attLE16(at: 1)) {
        case .failure(let e): return e.reply
        case .success(let a): return .pdu([ATTOpcode.readResponse] + a.value.prefix(mtu - 1))
        }
    }

    /// ATT_READ_BLOB_REQ: Attribute Handle, Value Offset. Answers up to ATT_MTU-1 octets from the
    /// offset: none at the value's end, Invalid Offset past it (Part F 3.4.4.5-6).
    func readBlob(_ p: ArraySlice<UInt8>) -> ATTReply {
        let handle = p.attLE16(at: 1)
        let offset = Int(p.attLE16(at: 3))
        switch readable(handle) {
        case .failure(let e): return e.reply
        case .success(let a):
            guard offset <= a.value.count else { return .error(.invalidOffset, handle: handle) }
            return .pdu([ATTOpcode.readBlobResponse] + a.value[offset...].prefix(mtu - 1))
        }
    }

    /// ATT_READ_MULTIPLE_REQ: a Set Of Handles (two or more). Answers the values one after the
    /// other, cut to ATT_MTU-1 octets in all; the first handle that is invalid or may not be read
    /// is the error (Part F 3.4.4.7-8).
    func readMultiple(_ p: ArraySlice<UInt8>) -> ATTReply {
        switch values(p) {
        case .failure(let e): return e.reply
        case .success(let values):
            var pdu: [UInt8] = [ATTOpcode.readMultipleResponse]
            for v in values { pdu.append(contentsOf: v.prefix(mtu - pdu.count)) }
            return .pdu(pdu)
        }
    }

    /// ATT_READ_MULTIPLE_VARIABLE_REQ: a Set Of Handles (two or more). Answers Length Value
    /// Tuples (the value's whole length, then as much of it as fits), cut to ATT_MTU-1 octets in
    /// all; a tuple's two length octets are never split (Part F 3.4.4.11-12).
    func readMultipleVariable(_ p: ArraySlice<UInt8>) -> ATTReply {
        switch values(p) {
        case .failure(let e): return e.reply
        case .success(let values):
            var pdu: [UInt8] = [ATTOpcode.readMultipleVariableResponse]
            for v in values {
                if mtu - pdu.count < 2 { break }
                pdu.appendATTLE16(UInt16(v.count))
                pdu.append(contentsOf: v.prefix(mtu - pdu.count))
            }
            return .pdu(pdu)
        }
    }

    /// The values of the Set Of Handles after the opcode, or the first handle's error.
    private func values(_ p: ArraySlice<UInt8>) -> Result<[[UInt8]], ATTReplyError> {
        var values: [[UInt8]] = []
        for offset in stride(from: 1, to: p.count - 1, by: 2) {
            switch readable(p.attLE16(at: offset)) {
            case .failure(let e): return .failure(e)
            case .success(let a): values.append(a.value)
            }
        }
        return .success(values)
    }
}

/// An Error Response's code and handle, as a `Result` failure.
struct ATTReplyError: Error, Equatable {
    let code: ATTErrorCode
    let handle: UInt16
    init(_ code: ATTErrorCode, _ handle: UInt16) { self.code = code; self.handle = handle }
    var reply: ATTReply { .error(code, handle: handle) }
}
