// Issue 32: changes from afar. The monitor (the Pi's one network client) carries each change to
// the beacon daemon (no network) as a small file in the daemon's requests directory; the daemon
// judges a setting as it judges a config edit and writes it into config.toml. This is the file's
// format, shared by both ends: no I/O here.
//
//     set power -40            one line: the verb, then the setting and the value as received
//     identify                 or an action
//     origin mqtt altbeacond/all/beacon/set/power      optional second line: for the log

/// A setting that can be changed from afar, by the name its topic and request carry, and the
/// config key it becomes: the beacon's own settings here, and one per frame switch, from the
/// frame table (`BeaconFrames.switches`): a new frame type's switch is a setting with no line here.
public struct RemoteSetting: Hashable, Sendable, CustomStringConvertible {
    public enum Kind: Sendable { case string, integer, boolean }

    /// The name its topic and request carry (`set <rawValue> <value>`).
    public let rawValue: String
    public let table: String
    public let key: String
    public let kind: Kind
    /// What the config takes, for an integer: Home Assistant's number entity's min and max.
    public let range: ClosedRange<Int64>?
    /// The switch it is, for a frame switch (its Home Assistant name is the switch's).
    public let frameSwitch: FrameSwitch?

    init(_ name: String, table: String, key: String? = nil, _ kind: Kind, range: ClosedRange<Int64>? = nil,
         frameSwitch: FrameSwitch? = nil) {
        rawValue = name; self.table = table; self.key = key ?? name; self.kind = kind
        self.range = range; self.frameSwitch = frameSwitch
    }

    init(_ s: FrameSwitch) { self.init(s.setting, table: s.table, key: s.key, .boolean, frameSwitch: s) }

    public static let uuid = RemoteSetting("uuid", table: "beacon", .string)
    public static let major = RemoteSetting("major", table: "beacon", .integer, range: BeaconIdentity.majorMinorRange)
    public static let minor = RemoteSetting("minor", table: "beacon", .integer, range: BeaconIdentity.majorMinorRange)
    public static let power = RemoteSetting("power", table: "beacon", .integer, range: BeaconIdentity.powerRange)
    public static let intervalMs = RemoteSetting("interval_ms", table: "bluetooth", .integer, range: BluetoothSettings.intervalRange)
    /// `beacon.advertising`: the whole beacon on or off air, kept across reboots.
    public static let advertising = RemoteSetting("advertising", table: "beacon", .boolean)

    /// The beacon's own settings, then the frame switches in the frame table's order.
    public static let allCases: [RemoteSetting] = [.uuid, .major, .minor, .power, .intervalMs, .advertising]
        + BeaconFrames.switches.map(RemoteSetting.init)

    public init?(rawValue: String) {
        guard let s = Self.allCases.first(where: { $0.rawValue == rawValue }) else { return nil }
        self = s
    }

    public static func == (a: RemoteSetting, b: RemoteSetting) -> Bool { a.rawValue == b.rawValue }
    public func hash(into h: inout Hasher) { h.combine(rawValue) }
    public var description: String { rawValue }

    /// The config file's table and key, and the TOML type the value must take.
    public var configKey: (table: String, key: String, kind: Kind) { (table, key, kind) }

    /// The beacon's identity: set one beacon at a time, never by the fleet topic (a fleet of
    /// beacons with one identity cannot be told apart).
    public var isIdentity: Bool { self == .uuid || self == .major || self == .minor }

    /// The value as a TOML literal for `configKey`, or why it cannot be one. Integers are plain
    /// decimal (Home Assistant's number entity may send "-40.0": a zero fraction is taken);
    /// booleans ON/OFF (Home Assistant's switch), on/off, true/false, 1/0.
    public func literal(_ value: String) -> Result<String, RemoteRequestError> {
        let v = trimmed(value)
        switch configKey.kind {
        case .string:
            guard v.utf8.count <= 64, !v.unicodeScalars.contains(where: \.isControlCharacter) else {
                return .failure(.badValue(self, v))
            }
            var out = "\""
            for s in v.unicodeScalars {
                switch s {
                case "\"": out += "\\\""
                case "\\": out += "\\\\"
                default: out.unicodeScalars.append(s)
                }
            }
            return .success(out + "\"")
        case .integer:
            var digits = Substring(v)
            if let dot = digits.firstIndex(of: "."), digits[digits.index(after: dot)...].allSatisfy({ $0 == "0" }) {
                digits = digits[..<dot]
            }
            let body = digits.first == "-" || digits.first == "+" ? digits.dropFirst() : digits
            guard (1...6).contains(body.count), body.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else {
                return .failure(.badValue(self, v))
            }
            return .success(digits.first == "+" ? String(body) : String(digits))
        case .boolean:
            switch v.lowercased() {
            case "on", "true", "1": return .success("true")
            case "off", "false", "0": return .success("false")
            default: return .failure(.badValue(self, v))
            }
        }
    }
}

public enum RemoteRequestError: Error, Equatable, Sendable, CustomStringConvertible {
    case badValue(RemoteSetting, String)
    case unknownSetting(String)
    case malformed(String)

    public var description: String {
        switch self {
        case .badValue(let s, let v):
            let want = switch s.configKey.kind {
            case .string: "a string of up to 64 bytes without control characters"
            case .integer: "a whole number"
            case .boolean: "ON or OFF"
            }
            return "\(s.rawValue): \"\(printable(v))\" is not \(want)"
        case .unknownSetting(let n): return "\"\(printable(n))\" is not a setting that can be changed from afar (one of: \(RemoteSetting.allCases.map(\.rawValue).joined(separator: ", ")))"
        case .malformed(let why): return "not a change request: \(why)"
        }
    }
}

/// One change request: a setting and its value as received, or an action.
public struct RemoteRequest: Equatable, Sendable {
    public enum Action: Equatable, Sendable {
        case set(RemoteSetting, String)
        /// The status LED blinks its identify pattern for `identifySeconds`.
        case identify
        /// The beacon daemon restarts (under systemd: exits so that the unit starts it again).
        case restart
    }

    public static let identifySeconds: Int64 = 10
    /// A request file is never larger than this; a larger one is refused unread.
    public static let maximumBytes = 512

    public var action: Action
    /// Where it came from, for the log ("mqtt altbeacond/all/beacon/set/power").
    public var origin: String

    public init(_ action: Action, origin: String = "") { self.action = action; self.origin = origin }

    /// The request's words for the log and the status file: "set power -40", "identify".
    public var summary: String {
        switch action {
        case .set(let s, let v): "set \(s.rawValue) \(printable(trimmed(v)))"
        case .identify: "identify"
        case .restart: "restart"
        }
    }

    public var encoded: [UInt8] {
        var text = summary + "\n"
        if !origin.isEmpty { text += "origin " + printable(origin) + "\n" }
        return Array(text.utf8)
    }

    /// Parses what `encoded` writes; anything else is refused with why.
    public static func decode(_ bytes: [UInt8]) -> Result<RemoteRequest, RemoteRequestError> {
        guard bytes.count <= maximumBytes else { return .failure(.malformed("more than \(maximumBytes) bytes")) }
        let text = String(decoding: bytes, as: UTF8.self)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: true)
        guard let first = lines.first else { return .failure(.malformed("empty")) }
        var origin = ""
        if lines.count > 1, lines[1].hasPrefix("origin ") { origin = String(lines[1].dropFirst(7)) }
        let words = first.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: true)
        switch words.first {
        case "identify" where words.count == 1: return .success(RemoteRequest(.identify, origin: origin))
        case "restart" where words.count == 1: return .success(RemoteRequest(.restart, origin: origin))
        case "set" where words.count >= 2:
            guard let setting = RemoteSetting(rawValue: String(words[1])) else { return .failure(.unknownSetting(String(words[1]))) }
            return .success(RemoteRequest(.set(setting, words.count > 2 ? String(words[2]) : ""), origin: origin))
        default:
            return .failure(.malformed("\"\(printable(String(first)))\""))
        }
    }
}

/// By scalars: "\r\n" is one Character.
private func trimmed(_ s: String) -> String {
    var u = Substring(s).unicodeScalars
    func blank(_ c: Unicode.Scalar) -> Bool { c == " " || c == "\t" || c == "\r" || c == "\n" }
    while let c = u.first, blank(c) { u = u.dropFirst() }
    while let c = u.last, blank(c) { u = u.dropLast() }
    return String(u)
}

/// Text from the network on its way to logs: at most 80 scalars, escaped as the terminal and the
/// journal get any text (`escapedForTerminal`: no control or reordering scalar raw).
private func printable(_ s: String) -> String {
    let u = s.unicodeScalars
    guard u.count > 80 else { return escapedForTerminal(s) }
    return escapedForTerminal(String(String.UnicodeScalarView(u.prefix(80)))) + "…"
}
