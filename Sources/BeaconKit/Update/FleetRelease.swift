// Issue 39: the release an owner offers a fleet, one retained JSON message on one topic
// (`[mqtt] release_topic`, default `altbeacond/fleet/release`; a canary topic stages it):
//
//     {"version":"1.3.0","url":"https://host/altbeacond-1.3.0.raucb","size":123456,
//      "sha256":"<64 lower-case hex>","release_url":"https://host/notes","install":false}
//
// and the request the monitor hands the root-side updater for it. Every value that reaches the
// request file is checked here: it is read by root.

/// A release as the fleet topic offers it.
public struct FleetRelease: Equatable, Sendable {
    public var version: String
    /// The RAUC bundle: http:// or https:// only.
    public var url: String
    /// Bytes, 1 to `maximumSize`.
    public var size: Int64
    /// 64 lower-case hex digits.
    public var sha256: String
    /// The release notes, for Home Assistant's link; nil when absent.
    public var releaseURL: String?
    /// Every card on the topic that can install does so on its own (one message updates a fleet).
    public var install: Bool

    /// 2 GiB: far above any image this project makes (about 150 MB).
    public static let maximumSize: Int64 = 2 << 30
    /// A larger message is ignored unread.
    public static let maximumPayload = 4096
    public static let maximumURL = 2048
    public static let maximumVersion = 64

    public init(version: String, url: String, size: Int64, sha256: String, releaseURL: String? = nil, install: Bool = false) {
        self.version = version; self.url = url; self.size = size; self.sha256 = sha256; self.releaseURL = releaseURL; self.install = install
    }

    /// The message's release, or why it is none. Unknown members are ignored (a later format may add some).
    public static func parse(_ payload: [UInt8]) -> Result<FleetRelease, FleetReleaseError> {
        guard payload.count <= maximumPayload else { return .failure(.invalid("more than \(maximumPayload) bytes")) }
        guard let json = JSONValue.parse(payload), case .object = json else { return .failure(.invalid("not a JSON object")) }
        guard let version = json["version"]?.string else { return .failure(.invalid("no \"version\" string")) }
        guard let url = json["url"]?.string else { return .failure(.invalid("no \"url\" string")) }
        guard let size = json["size"]?.integer else { return .failure(.invalid("no \"size\" (a whole number of bytes)")) }
        guard let sha256 = json["sha256"]?.string else { return .failure(.invalid("no \"sha256\" string")) }
        var releaseURL: String?
        switch json["release_url"] {
        case nil, .null?: break
        case .string(let s)?: releaseURL = s
        default: return .failure(.invalid("\"release_url\" is not a string"))
        }
        var install = false
        switch json["install"] {
        case nil, .null?: break
        case .bool(let b)?: install = b
        default: return .failure(.invalid("\"install\" is not true or false"))
        }
        let r = FleetRelease(version: version, url: url, size: size, sha256: sha256, releaseURL: releaseURL, install: install)
        if let why = r.problem { return .failure(.invalid(why)) }
        return .success(r)
    }

    /// Why this release cannot be requested; nil when it can.
    public var problem: String? {
        if !Self.isVersion(version) {
            return "\"version\" must be 1 to \(Self.maximumVersion) of 0-9 A-Z a-z . + ~ -"
        }
        if !Self.isFetchURL(url) { return "\"url\" must be an http:// or https:// URL without spaces, quotes or backslashes" }
        if !(1...Self.maximumSize).contains(size) { return "\"size\" must be 1 to \(Self.maximumSize) bytes" }
        if !Self.isSHA256(sha256) { return "\"sha256\" must be 64 lower-case hex digits" }
        if let r = releaseURL, !Self.isFetchURL(r) {
            return "\"release_url\" must be an http:// or https:// URL without spaces, quotes or backslashes"
        }
        return nil
    }

    /// `[0-9A-Za-z.+~-]{1,64}`.
    public static func isVersion(_ s: String) -> Bool {
        let u = s.utf8
        return (1...maximumVersion).contains(u.count) && u.allSatisfy { b in
            (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A)
                || b == UInt8(ascii: ".") || b == UInt8(ascii: "+") || b == UInt8(ascii: "~") || b == UInt8(ascii: "-")
        }
    }

    /// http:// or https://, a host after it, then printable ASCII but quotes and backslash.
    public static func isFetchURL(_ s: String) -> Bool {
        let u = Array(s.utf8)
        guard u.count <= maximumURL, isPlainValue(s) else { return false }
        for scheme in ["http://", "https://"] where u.starts(with: scheme.utf8) {
            let rest = u.dropFirst(scheme.utf8.count)
            return !rest.isEmpty && rest.first != UInt8(ascii: "/")
        }
        return false
    }

    /// 64 of 0-9 a-f.
    public static func isSHA256(_ s: String) -> Bool {
        s.utf8.count == 64 && s.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) }
    }

    /// A value a request line may carry: printable ASCII, no space, quote or backslash (root
    /// reads it; a shell, a log or a URL parser downstream sees nothing to interpret).
    public static func isPlainValue(_ s: String) -> Bool {
        !s.utf8.isEmpty && s.utf8.allSatisfy { b in
            b > 0x20 && b < 0x7F && b != UInt8(ascii: "\"") && b != UInt8(ascii: "'") && b != UInt8(ascii: "\\")
        }
    }
}

public enum FleetReleaseError: Error, Equatable, Sendable, CustomStringConvertible {
    case invalid(String)
    public var description: String {
        switch self { case .invalid(let why): "not a release: \(why)" }
    }
}

/// What the monitor asks the updater: `/run/altbeacon-update/request`, `key=value` lines.
public struct UpdateRequest: Equatable, Sendable {
    /// Who asked, for the updater's log: Home Assistant's Install, or the fleet's release.
    public enum Origin: String, Sendable {
        case homeAssistant = "mqtt:homeassistant"
        case fleet = "mqtt:fleet"
    }

    public var release: FleetRelease
    public var origin: Origin
    /// Unix seconds.
    public var time: Int64

    public init(release: FleetRelease, origin: Origin, time: Int64) { self.release = release; self.origin = origin; self.time = time }

    /// The file's bytes; nil when a value could not be written safely (`FleetRelease.problem`).
    public var encoded: [UInt8]? {
        guard release.problem == nil else { return nil }
        let lines = ["version=\(release.version)", "url=\(release.url)", "size=\(release.size)", "sha256=\(release.sha256)",
                     "origin=\(origin.rawValue)", "time=\(time)"]
        return Array((lines.joined(separator: "\n") + "\n").utf8)
    }
}
