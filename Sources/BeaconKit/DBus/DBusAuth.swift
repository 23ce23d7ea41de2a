/// The client side of D-Bus authentication (specification, "Authentication Protocol") with the
/// one mechanism the system bus offers a local process: EXTERNAL, the kernel's word for our uid
/// (SO_PEERCRED). Lines in, lines out; no I/O.
public struct DBusAuthClient: Sendable {
    public enum Step: Equatable, Sendable {
        /// Wait for more bytes.
        case needMore
        /// Authenticated: send `reply` (BEGIN) and then messages; `leftover` are bytes after OK.
        case authenticated(guid: String, reply: [UInt8], leftover: [UInt8])
        case rejected(String)
    }

    private var buffer: [UInt8] = []
    public init() {}

    /// What the client sends first: the credentials nul byte, then AUTH EXTERNAL with the uid
    /// as hex-encoded decimal ASCII ("0" → "30").
    public static func greeting(uid: UInt32) -> [UInt8] {
        let hex = String(uid).utf8.map { hexString(CollectionOfOne($0)) }.joined()
        return [0] + Array("AUTH EXTERNAL \(hex)\r\n".utf8)
    }

    /// The longest line the server may send before we give up on it.
    static let maximumLine = 16384

    public mutating func feed(_ bytes: [UInt8]) -> Step {
        buffer += bytes
        while let end = lineEnd() {
            let line = String(decoding: buffer[0..<end], as: UTF8.self)
            buffer.removeFirst(end + 2)
            if line.hasPrefix("OK ") || line == "OK" {
                let guid = line.count > 3 ? String(line.dropFirst(3)) : ""
                return .authenticated(guid: guid, reply: Array("BEGIN\r\n".utf8), leftover: buffer)
            }
            if line.hasPrefix("REJECTED") || line.hasPrefix("ERROR") {
                return .rejected("the bus refused EXTERNAL authentication (\(line))")
            }
            // DATA (a challenge EXTERNAL never needs) or anything else: not a step we can take.
            return .rejected("unexpected answer to AUTH EXTERNAL: \(line)")
        }
        return buffer.count > Self.maximumLine ? .rejected("no line end from the bus") : .needMore
    }

    private func lineEnd() -> Int? {
        guard buffer.count >= 2 else { return nil }
        for i in 0..<(buffer.count - 1) where buffer[i] == 0x0d && buffer[i + 1] == 0x0a { return i }
        return nil
    }
}
