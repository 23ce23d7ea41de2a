// DNS messages (RFC 1035 §4) for the broker's name: a query for one A or AAAA record set, and
// what a response says about it. Pure values, no I/O; every decoder checks lengths before
// reading, and compression pointers may only point backwards, so no input loops or crashes.

/// The record types the resolver asks for or follows.
public enum DNSRecordType: UInt16, Sendable {
    case a = 1, cname = 5, aaaa = 28
}

/// Why bytes were not the response we wait for, or a name cannot be asked for.
public enum DNSError: Error, Equatable, Sendable {
    /// The message, or a field in it, ends before its length says.
    case truncated
    /// Another query's response (the ID differs): ignored, the right one may still come.
    case wrongID(UInt16)
    /// QR is 0: a query, not a response.
    case notAResponse
    /// The question section is not the one we sent.
    case questionMismatch
    /// A compression pointer that does not point backwards, or a label with the reserved bits 01/10.
    case badName
    /// A name over 255 bytes, or a label over 63 (RFC 1035 §2.3.4).
    case nameTooLong
    /// An empty label inside a name we were asked to encode ("a..b").
    case emptyLabel
    /// An A record whose data is not 4 bytes, an AAAA not 16.
    case badRecordLength
    /// RCODE 3: the server says the name does not exist.
    case noSuchName
    /// Another non-zero RCODE (2 server failure, 5 refused, ...).
    case serverError(UInt8)
    /// TC set and the answer unreadable: it did not fit in UDP (we do not retry over TCP).
    case truncatedByServer
}

/// A name as lower-cased labels, so that names compare the way DNS compares them (ASCII only).
public struct DNSName: Equatable, Hashable, Sendable, CustomStringConvertible {
    public var labels: [[UInt8]]

    public init(labels: [[UInt8]]) { self.labels = labels.map { $0.map(Self.lower) } }

    /// "broker.lan" or "broker.lan." (the root dot is implied).
    public init(_ text: String) throws(DNSError) {
        var parts = Array(text.utf8).split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        if parts.count > 1, parts.last?.isEmpty == true { parts.removeLast() }
        guard !parts.contains(where: { $0.isEmpty }) else { throw .emptyLabel }
        guard !parts.contains(where: { $0.count > 63 }) else { throw .nameTooLong }
        self.init(labels: parts.map(Array.init))
        guard encodedLength <= 255 else { throw .nameTooLong }
    }

    var encodedLength: Int { labels.reduce(1) { $0 + 1 + $1.count } }

    public var description: String { labels.map { String(decoding: $0, as: UTF8.self) }.joined(separator: ".") }

    private static func lower(_ b: UInt8) -> UInt8 { b >= 0x41 && b <= 0x5a ? b | 0x20 : b }
}

/// One address a response gave for the name, with its time to live in seconds.
public struct DNSAddress: Equatable, Sendable, CustomStringConvertible {
    /// 4 bytes (A) or 16 (AAAA), network order.
    public let bytes: [UInt8]
    public let ttl: UInt32

    public init(bytes: [UInt8], ttl: UInt32) { self.bytes = bytes; self.ttl = ttl }

    /// As inet_pton reads it back: dotted quad, or RFC 5952 text (longest zero run as "::").
    public var description: String {
        if bytes.count == 4 { return bytes.map { String($0) }.joined(separator: ".") }
        let words = (0..<8).map { UInt16(bytes[2 * $0]) << 8 | UInt16(bytes[2 * $0 + 1]) }
        var best = (start: -1, count: 1), i = 0
        while i < 8 {
            var j = i
            while j < 8, words[j] == 0 { j += 1 }
            if j - i > best.count { best = (i, j - i) }
            i = j == i ? i + 1 : j
        }
        let hex = { (w: ArraySlice<UInt16>) in w.map { String($0, radix: 16) }.joined(separator: ":") }
        guard best.start >= 0 else { return hex(words[...]) }
        return hex(words[..<best.start]) + "::" + hex(words[(best.start + best.count)...])
    }
}

public enum DNSMessage {
    /// A standard query (opcode 0) for `type` records of `name`, class IN. `recursionDesired`
    /// for a unicast server; mDNS leaves it 0 (RFC 6762 §18.6).
    public static func query(id: UInt16, name: DNSName, type: DNSRecordType, recursionDesired: Bool = true) -> [UInt8] {
        var out: [UInt8] = [UInt8(id >> 8), UInt8(id & 0xff), recursionDesired ? 0x01 : 0x00, 0x00,
                            0, 1, 0, 0, 0, 0, 0, 0]
        for label in name.labels { out.append(UInt8(label.count)); out += label }
        out += [0, UInt8(type.rawValue >> 8), UInt8(type.rawValue & 0xff), 0, 1]
        return out
    }

    /// What a response says about (`name`, `type`): the addresses of that type reached from
    /// `name` through the answer's CNAMEs, empty when the name exists without such records.
    /// `multicast`: an mDNS legacy unicast answer, whose class may carry the cache-flush bit and
    /// whose question section a responder may leave out (RFC 6762 §6.7, §10.2).
    public static func addresses(in bytes: [UInt8], id: UInt16, name: DNSName, type: DNSRecordType,
                                 multicast: Bool = false) throws(DNSError) -> [DNSAddress] {
        var r = DNSReader(bytes)
        guard try r.uint16() == id else { throw .wrongID(UInt16(bytes[0]) << 8 | UInt16(bytes[1])) }
        let flags = try r.uint16()
        guard flags & 0x8000 != 0 else { throw .notAResponse }
        let truncated = flags & 0x0200 != 0
        let rcode = UInt8(flags & 0x000f)
        if rcode == 3 { throw .noSuchName }
        if rcode != 0 { throw .serverError(rcode) }
        let qdCount = try r.uint16(), anCount = try r.uint16()
        _ = try r.uint16(); _ = try r.uint16()   // authority and additional: not needed
        guard qdCount == 1 || (multicast && qdCount == 0) else { throw .questionMismatch }
        do throws(DNSError) {
            if qdCount == 1 {
                let q = try r.name(), qType = try r.uint16(), qClass = try r.uint16()
                guard q == name, qType == type.rawValue, qClass & 0x7fff == 1 else { throw .questionMismatch }
            }
            var records: [(name: DNSName, type: UInt16, ttl: UInt32, data: Range<Int>)] = []
            for _ in 0..<anCount {
                let n = try r.name(), t = try r.uint16(), c = try r.uint16(), ttl = try r.uint32()
                let length = Int(try r.uint16())
                let data = try r.skip(length)
                if (multicast ? c & 0x7fff : c) == 1 { records.append((n, t, ttl, data)) }
            }
            // CNAME chains are short; the bound stops one that loops.
            var target = name
            for _ in 0..<16 {
                let found = records.filter { $0.name == target && $0.type == type.rawValue }
                if !found.isEmpty {
                    return try found.map { rec throws(DNSError) in
                        guard rec.data.count == (type == .a ? 4 : 16) else { throw .badRecordLength }
                        return DNSAddress(bytes: Array(bytes[rec.data]), ttl: rec.ttl)
                    }
                }
                guard let alias = records.first(where: { $0.name == target && $0.type == DNSRecordType.cname.rawValue }) else { break }
                var rd = DNSReader(bytes, at: alias.data.lowerBound)
                target = try rd.name()
                guard rd.index <= alias.data.upperBound else { throw .badRecordLength }
            }
            return []
        } catch {
            throw truncated && error == .truncated ? .truncatedByServer : error
        }
    }
}

/// Reads a message's fields, checking every length first.
struct DNSReader {
    let bytes: [UInt8]
    private(set) var index: Int

    init(_ bytes: [UInt8], at index: Int = 0) { self.bytes = bytes; self.index = index }

    mutating func uint16() throws(DNSError) -> UInt16 {
        guard bytes.count - index >= 2 else { throw .truncated }
        defer { index += 2 }
        return UInt16(bytes[index]) << 8 | UInt16(bytes[index + 1])
    }

    mutating func uint32() throws(DNSError) -> UInt32 {
        let high = try uint16()
        return UInt32(high) << 16 | UInt32(try uint16())
    }

    /// The range of the next `count` bytes, skipped.
    mutating func skip(_ count: Int) throws(DNSError) -> Range<Int> {
        guard bytes.count - index >= count else { throw .truncated }
        defer { index += count }
        return index..<(index + count)
    }

    /// A name, following compression pointers (RFC 1035 §4.1.4). Each pointer must point before
    /// the one that refers to it, so the walk always ends; the reader moves past the first pointer.
    mutating func name() throws(DNSError) -> DNSName {
        var labels: [[UInt8]] = []
        var length = 1
        var at = index
        var jumped = false
        while true {
            guard at < bytes.count else { throw .truncated }
            let b = bytes[at]
            switch b & 0xc0 {
            case 0x00 where b == 0:
                if !jumped { index = at + 1 }
                return DNSName(labels: labels)
            case 0x00:
                let n = Int(b)
                guard bytes.count - at - 1 >= n else { throw .truncated }
                length += 1 + n
                guard length <= 255 else { throw .nameTooLong }
                labels.append(Array(bytes[(at + 1)...(at + n)]))
                at += 1 + n
            case 0xc0:
                guard bytes.count - at >= 2 else { throw .truncated }
                let target = Int(b & 0x3f) << 8 | Int(bytes[at + 1])
                guard target < at else { throw .badName }
                if !jumped { index = at + 2 }
                jumped = true
                at = target
            default:
                throw .badName
            }
        }
    }
}
