// Issue 39: updates of an A/B card. The root-side updater (RAUC + U-Boot) and the monitor (the
// Pi's one network client, an unprivileged user) meet only in files of /run/altbeacon-update/
// (made by tmpfiles on an A/B image alone, 0770 root:altbeacond). This is the updater's `state`
// file as the monitor reads it: no I/O here.
//
//     installed_version=1.2.0      the booted slot's altbeacond version
//     slot=A                       A|B
//     phase=idle                   idle|downloading|installing|rebooting|trial
//     progress=42                  0-100, only while installing (may be absent)
//     outcome=installed            none|installed|refused|rolled-back|failed|download-failed|interrupted
//     outcome_version=1.3.0        what the outcome is about (may be absent)
//     message=free text            why (RAUC's refusal, "its beacon was not on air within 600 s")
//     time=1764244000              unix seconds of the outcome

/// Where the two ends meet, and the file that says this card is an image (injectable for tests).
public struct FirmwareUpdatePaths: Equatable, Sendable {
    /// Exists only on an A/B image.
    public var directory: String
    /// Present on every image the project built, A/B or not (a package install has none).
    public var imageMarker: String

    public static let standard = FirmwareUpdatePaths(directory: "/run/altbeacon-update", imageMarker: "/usr/lib/altbeacon-image")

    public init(directory: String, imageMarker: String) { self.directory = directory; self.imageMarker = imageMarker }

    /// Written by the updater (root), read by the monitor.
    public var stateFile: String { directory + "/state" }
    /// Written by the monitor (a temporary file renamed over it), read by the updater.
    public var requestFile: String { directory + "/request" }
    /// Written by the monitor (`connected=1` or `0`), read by the update gate: a new slot with
    /// `[mqtt]` is kept only once its monitor reached the broker.
    public var monitorFile: String { directory + "/monitor" }
}

/// The updater's `state` file.
public struct UpdaterState: Equatable, Sendable {
    public enum Phase: String, Sendable {
        case idle, downloading, installing, rebooting
        /// Booted into the new slot, not yet kept: it is kept once its beacon is on air.
        case trial
    }

    public enum Outcome: String, Sendable {
        case none, installed, refused
        case rolledBack = "rolled-back"
        case failed
        /// Issue 49: the bundle could not be fetched (the network, the server), after the
        /// updater's own tries: not a refusal; the fleet's release is asked again later.
        case downloadFailed = "download-failed"
        /// Issue 49: the install did not finish (a power cut before the new slot was made
        /// primary): not the release's fault; the fleet's release is asked again at once.
        case interrupted
    }

    /// A larger file is not the updater's: read as empty.
    public static let maxBytes = 4096

    public var installedVersion: String?
    public var slot: String?
    /// Absent: idle (nothing says an update is under way). A word this monitor does not know is
    /// kept as written (`phaseWord`) and taken as busy.
    public var phaseWord: String?
    public var progress: Int?
    public var outcome: Outcome?
    public var outcomeVersion: String?
    public var message: String?
    public var time: Int64?

    public init(installedVersion: String? = nil, slot: String? = nil, phaseWord: String? = nil, progress: Int? = nil,
                outcome: Outcome? = nil, outcomeVersion: String? = nil, message: String? = nil, time: Int64? = nil) {
        self.installedVersion = installedVersion; self.slot = slot; self.phaseWord = phaseWord; self.progress = progress
        self.outcome = outcome; self.outcomeVersion = outcomeVersion; self.message = message; self.time = time
    }

    /// nil for a word this monitor does not know.
    public var phase: Phase? { phaseWord.map { Phase(rawValue: $0) } ?? .idle }
    public var isIdle: Bool { phase == .idle }

    /// `key=value` lines; unknown keys, lines without `=`, empty values and values out of range
    /// are skipped (the updater writes the file atomically: what is there is whole).
    public static func parse(_ bytes: [UInt8]) -> UpdaterState {
        var s = UpdaterState()
        guard bytes.count <= maxBytes else { return s }
        for line in bytes.split(separator: 0x0A) {
            guard let eq = line.firstIndex(of: UInt8(ascii: "=")) else { continue }
            let key = String(decoding: line[line.startIndex..<eq], as: UTF8.self)
            var raw = line[(eq + 1)...]
            if raw.last == 0x0D { raw = raw.dropLast() }
            guard !raw.isEmpty else { continue }
            let value = String(decoding: raw, as: UTF8.self)
            switch key {
            case "installed_version": s.installedVersion = value
            case "slot": s.slot = value
            case "phase": s.phaseWord = value
            case "progress": s.progress = Int(value).flatMap { (0...100).contains($0) ? $0 : nil }
            case "outcome": s.outcome = Outcome(rawValue: value)
            case "outcome_version": s.outcomeVersion = value
            case "message": s.message = value
            case "time": s.time = Int64(value)
            default: continue
            }
        }
        return s
    }

    /// The last outcome in words: "installed 1.3.0", "refused 1.3.0: reason", "rolled back from
    /// 1.3.0: reason", "failed 1.3.0: reason"; nil when there is none.
    public var outcomeText: String? {
        guard let outcome, outcome != .none else { return nil }
        let v = outcomeVersion.map { " " + $0 } ?? ""
        let why = message.flatMap { $0.isEmpty ? nil : ": " + $0 } ?? ""
        switch outcome {
        case .none: return nil
        case .installed: return "installed" + v + why
        case .refused: return "refused" + v + why
        case .rolledBack: return "rolled back" + (outcomeVersion.map { " from " + $0 } ?? "") + why
        case .failed: return "failed" + v + why
        case .downloadFailed: return "could not download" + v + why
        case .interrupted: return "install interrupted" + v + why
        }
    }

    /// What identifies the last outcome: a request is made again only once it changed.
    var outcomeKey: String { "\(outcome?.rawValue ?? "")|\(outcomeVersion ?? "")|\(time.map { "\($0)" } ?? "")" }
}
