// Issue 39: the release an owner offers a fleet, one retained JSON message on one topic
// (`[mqtt] release_topic`, default `altbeacond/fleet/release`; a canary topic stages it):
//
//     {"version":"1.3.0","url":"https://host/altbeacond-1.3.0.raucb",
//      "release_url":"https://host/notes","install":false,
//      "rollout":25,"halt_after":1,"downgrade":false}
//
// and the request the monitor hands the root-side updater for it. Every value that reaches the
// request file is checked here: it is read by root. Issue 49: `size` and `sha256` are gone (an
// earlier format's are ignored): RAUC checks the bundle's signature and every block it reads
// against the signed manifest, and a whole-file hash could only be checked after downloading
// the whole bundle, which streaming avoids; the updater bounds the size by the signed manifest.

/// A release as the fleet topic offers it.
public struct FleetRelease: Equatable, Sendable {
    public var version: String
    /// The RAUC bundle: http:// or https:// only.
    public var url: String
    /// The release notes, for Home Assistant's link; nil when absent.
    public var releaseURL: String?
    /// Every card on the topic that can install does so on its own (one message updates a fleet).
    public var install: Bool
    /// Issue 49: the share of the fleet's cards that install it on their own, 1-100 (each card's
    /// wave from its own identity: `FleetRollout.bucket`); 100 when absent.
    public var rollout: Int
    /// Issue 49: the cards that rolled it back (their reports on the release topic) after which
    /// no other card installs it on its own; 1 when absent.
    public var haltAfter: Int
    /// Issue 49: the owner says an older version than a card's may replace it (a card refuses
    /// a downgrade otherwise: a replayed release with a known hole is still validly signed).
    public var downgrade: Bool

    /// A larger message is ignored unread.
    public static let maximumPayload = 4096
    public static let maximumURL = 2048
    public static let maximumVersion = 64

    public init(version: String, url: String, releaseURL: String? = nil, install: Bool = false, rollout: Int = 100,
                haltAfter: Int = 1, downgrade: Bool = false) {
        self.version = version; self.url = url; self.releaseURL = releaseURL; self.install = install
        self.rollout = rollout; self.haltAfter = haltAfter; self.downgrade = downgrade
    }

    /// The message's release, or why it is none. Unknown members are ignored (a later format
    /// may add some; an earlier one's `size` and `sha256`).
    public static func parse(_ payload: [UInt8]) -> Result<FleetRelease, FleetReleaseError> {
        guard payload.count <= maximumPayload else { return .failure(.invalid("more than \(maximumPayload) bytes")) }
        guard let json = JSONValue.parse(payload), case .object = json else { return .failure(.invalid("not a JSON object")) }
        guard let version = json["version"]?.string else { return .failure(.invalid("no \"version\" string")) }
        guard let url = json["url"]?.string else { return .failure(.invalid("no \"url\" string")) }
        var releaseURL: String?
        switch json["release_url"] {
        case nil, .null?: break
        case .string(let s)?: releaseURL = s
        default: return .failure(.invalid("\"release_url\" is not a string"))
        }
        func flag(_ key: String) -> Result<Bool, FleetReleaseError> {
            switch json[key] {
            case nil, .null?: return .success(false)
            case .bool(let b)?: return .success(b)
            default: return .failure(.invalid("\"\(key)\" is not true or false"))
            }
        }
        func count(_ key: String, _ range: ClosedRange<Int64>, absent: Int) -> Result<Int, FleetReleaseError> {
            switch json[key] {
            case nil, .null?: return .success(absent)
            case let v?:
                guard let n = v.integer, range.contains(n) else {
                    return .failure(.invalid("\"\(key)\" must be a whole number from \(range.lowerBound) to \(range.upperBound)"))
                }
                return .success(Int(n))
            }
        }
        let install = flag("install"), downgrade = flag("downgrade")
        let rollout = count("rollout", 1...100, absent: 100), haltAfter = count("halt_after", 1...100_000, absent: 1)
        for case .failure(let e) in [install.map { _ in 0 }, downgrade.map { _ in 0 }, rollout, haltAfter] { return .failure(e) }
        let r = FleetRelease(version: version, url: url, releaseURL: releaseURL, install: (try? install.get()) ?? false,
                             rollout: (try? rollout.get()) ?? 100, haltAfter: (try? haltAfter.get()) ?? 1,
                             downgrade: (try? downgrade.get()) ?? false)
        if let why = r.problem { return .failure(.invalid(why)) }
        return .success(r)
    }

    /// Why this release cannot be requested; nil when it can.
    public var problem: String? {
        if !Self.isVersion(version) {
            return "\"version\" must be 1 to \(Self.maximumVersion) of 0-9 A-Z a-z . + ~ -"
        }
        if !Self.isFetchURL(url) { return "\"url\" must be an http:// or https:// URL without spaces, quotes or backslashes" }
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
        // `downgrade=yes`: the owner's word from the release message, re-checked by root against
        // the bundle's own version (the updater never takes a version from this file on trust).
        let lines = ["version=\(release.version)", "url=\(release.url)", "origin=\(origin.rawValue)", "time=\(time)"]
            + (release.downgrade ? ["downgrade=yes"] : [])
        return Array((lines.joined(separator: "\n") + "\n").utf8)
    }
}
