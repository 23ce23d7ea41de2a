/// What `scan --read-identity` says of one device advertising the GATT identity: the identifier
/// read from its characteristic, or why it could not be read. One per device per scan.
public struct IdentityReadReport: Equatable, Sendable {
    public enum Outcome: Equatable, Sendable {
        /// The characteristic's value, as read.
        case identifier([UInt8])
        /// Why not, in one line (timeout, refused, service missing, an ATT error by name ...).
        case failed(String)
    }

    /// `AA:BB:CC:DD:EE:FF`.
    public var address: String
    /// The device's local name when heard (its scan response).
    public var name: [UInt8]?
    public var outcome: Outcome

    public init(address: String, name: [UInt8]?, outcome: Outcome) {
        self.address = address; self.name = name; self.outcome = outcome
    }

    /// `identity <address> "<identifier>" name=<name>`, or
    /// `identity <address> name=<name> failed: <reason>`; the identifier quoted with `"`, `\`,
    /// controls and non-ASCII octets as `\xNN`, the name as `escapedText` (`null` when unheard).
    public var line: String {
        let name = "name=" + (self.name.map { escapedText($0) } ?? "null")
        switch outcome {
        case .identifier(let v): return "identity \(address) \"\(escapedText(v, inQuotes: true))\" \(name)"
        case .failed(let reason): return "identity \(address) \(name) failed: \(Self.printable(reason))"
        }
    }

    /// `{"type":"gatt-identity","address":...,"identifier":...,"name":...}`, or with `"error"`
    /// in place of `"identifier"`; `"name":null` when no name was heard.
    public var jsonLine: String {
        var s = "{\"type\":" + jsonString(GATTIdentity.name) + ",\"address\":" + jsonString(address)
        switch outcome {
        case .identifier(let v): s += ",\"identifier\":" + jsonString(jsonText(v))
        case .failed(let reason): s += ",\"error\":" + jsonString(reason)
        }
        s += ",\"name\":" + (name.map { jsonString(jsonText($0)) } ?? "null")
        return s + "}"
    }

    /// A reason is our own text, but it may quote bytes from the air: escaped as the terminal
    /// gets any text (`escapedForTerminal`).
    static func printable(_ reason: String) -> String { escapedForTerminal(reason) }
}
