// The discovery requests over a handle range (Core Vol 3 Part F 3.4.3-3.4.4, used by the GATT
// procedures of Part G 4.4-4.7): Find Information, Find By Type Value, Read By Type, Read By
// Group Type. Each lists attributes in handle order, as many whole entries as fit in ATT_MTU.

extension ATTServer {
    /// ATT_FIND_INFORMATION_REQ: Starting Handle, Ending Handle. Answers Format (1: 16-bit UUIDs,
    /// 2: 128-bit) and handle-type pairs, all of the first one's format (Part F 3.4.3.2).
    func findInformation(_ p: ArraySlice<UInt8>) -> ATTReply {
        let range = ATTServer.handleRange(p)
        if let error = range.error { return error }
        let found = database.attributes(from: range.start, through: range.end)
        guard let first = found.first else { return .error(.attributeNotFound, handle: range.start) }
        let width = first.type.wire.count
        var pdu: [UInt8] = [ATTOpcode.findInformationResponse, width == 2 ? 0x01 : 0x02]
        for a in found {
            if a.type.wire.count != width || pdu.count + 2 + width > mtu { break }
            pdu.appendATTLE16(a.handle)
            pdu.append(contentsOf: a.type.wire)
        }
        return .pdu(pdu)
    }

    /// ATT_FIND_BY_TYPE_VALUE_REQ: Starting Handle, Ending Handle, Attribute Type (a 16-bit UUID),
    /// Attribute Value (the rest). Answers Found Attribute Handle and Group End Handle pairs of the
    /// attributes of that type whose value is those octets exactly (Part F 3.4.3.3-4); GATT's
    /// Discover Primary Service by Service UUID is this with «Primary Service» (Part G 4.4.2).
    func findByTypeValue(_ p: ArraySlice<UInt8>) -> ATTReply {
        let range = ATTServer.handleRange(p)
        if let error = range.error { return error }
        let type = GATTUUID(p.attLE16(at: 5))
        let value = p[(p.startIndex + 7)...]
        var pdu: [UInt8] = [ATTOpcode.findByTypeValueResponse]
        for a in database.attributes(from: range.start, through: range.end)
        where a.type == type && a.readable && a.value.elementsEqual(value) {
            if pdu.count + 4 > mtu { break }
            pdu.appendATTLE16(a.handle)
            pdu.appendATTLE16(a.groupEnd)
        }
        if pdu.count == 1 { return .error(.attributeNotFound, handle: range.start) }
        return .pdu(pdu)
    }

    /// ATT_READ_BY_TYPE_REQ: Starting Handle, Ending Handle, Attribute Type (16 or 128-bit).
    /// Answers Length and handle-value pairs of that type (Part F 3.4.4.1-2): values cut to
    /// ATT_MTU-4 or 253 octets, all pairs as long as the first; stops at the first that is not,
    /// or that may not be read (an error only if that is the first). GATT's Discover All
    /// Characteristics of a Service (type «Characteristic») and Read Using Characteristic UUID.
    func readByType(_ p: ArraySlice<UInt8>) -> ATTReply {
        let range = ATTServer.handleRange(p)
        if let error = range.error { return error }
        guard let type = GATTUUID(wire: p[(p.startIndex + 5)...]) else { return .error(.invalidPDU, handle: 0) }
        return ATTServer.list(database.attributes(from: range.start, through: range.end).filter { $0.type == type },
                              start: range.start, opcode: ATTOpcode.readByTypeResponse,
                              header: 2, cap: min(mtu - 4, 253), mtu: mtu)
    }

    /// ATT_READ_BY_GROUP_TYPE_REQ: Starting Handle, Ending Handle, Attribute Group Type (16 or
    /// 128-bit). Answers Length and handle, group end, value triples (Part F 3.4.4.9-10): values
    /// cut to ATT_MTU-6 or 251 octets, all as long as the first. Only «Primary Service» and
    /// «Secondary Service» may be asked for (Part G 2.5.3; «Characteristic» shall not be); any
    /// other type is Unsupported Group Type. GATT's Discover All Primary Services (Part G 4.4.1).
    func readByGroupType(_ p: ArraySlice<UInt8>) -> ATTReply {
        let range = ATTServer.handleRange(p)
        if let error = range.error { return error }
        guard let type = GATTUUID(wire: p[(p.startIndex + 5)...]) else { return .error(.invalidPDU, handle: 0) }
        guard type == GATTType.primaryService || type == GATTType.secondaryService else {
            return .error(.unsupportedGroupType, handle: range.start)
        }
        return ATTServer.list(database.attributes(from: range.start, through: range.end).filter { $0.type == type },
                              start: range.start, opcode: ATTOpcode.readByGroupTypeResponse,
                              header: 4, cap: min(mtu - 6, 251), mtu: mtu)
    }

    /// The Read By Type / Read By Group Type response: opcode, Length, then entries of `header`
    /// octets (the handle; for a group also its end) and the value cut to `cap`, each as long as
    /// the first, as many as fit in `mtu`. Attribute Not Found (in error: the starting handle)
    /// when none matched; Read Not Permitted (in error: its handle) when the first may not be read.
    static func list(_ found: [GATTAttribute], start: UInt16, opcode: UInt8, header: Int, cap: Int, mtu: Int) -> ATTReply {
        guard let first = found.first else { return .error(.attributeNotFound, handle: start) }
        guard first.readable else { return .error(.readNotPermitted, handle: first.handle) }
        let length = min(first.value.count, cap)
        var pdu: [UInt8] = [opcode, UInt8(header + length)]
        for a in found {
            if !a.readable || min(a.value.count, cap) != length || pdu.count + header + length > mtu { break }
            pdu.appendATTLE16(a.handle)
            if header == 4 { pdu.appendATTLE16(a.groupEnd) }
            pdu.append(contentsOf: a.value.prefix(length))
        }
        return .pdu(pdu)
    }
}
