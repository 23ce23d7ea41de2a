/// `altbeacond health`: the status file read back and judged as monitoring plugins do (exit 0
/// on air, 1 degraded, 2 off air, 3 unknown). Pure: the command reads the file and asks the
/// kernel whether the pid lives; this decides.
public enum HealthCheck {
    /// The daemon rewrites its status file at least every 60 s: older than this, it is not
    /// looking after the beacon any more (stopped by SIGKILL, hung), whatever the file says.
    public static let staleAfterS: Int64 = 180

    /// Why nothing is known of the beacon, for Home Assistant (issue 38).
    public enum Absence: String, Equatable, Sendable, CaseIterable {
        /// No status file, or it names a pid that is not running (SIGKILL, a crash, a power cut).
        case notRunning = "not-running"
        /// The file was not rewritten for more than `staleAfterS`: the daemon hangs.
        case stale
        /// The file is no status file (not a JSON object, or without exit, pid or updated).
        case unreadable
    }

    public struct Result: Equatable, Sendable {
        public var verdict: HealthVerdict
        /// Why, in one line: the status summary, or what is wrong with the file.
        public var reason: String
        /// The status file's object, when it was one.
        public var status: JSONValue?
        /// Why the verdict is `unknown` (nil when it is known).
        public var absence: Absence?

        public init(verdict: HealthVerdict, reason: String, status: JSONValue?, absence: Absence? = nil) {
            self.verdict = verdict; self.reason = reason; self.status = status; self.absence = absence
        }

        /// The verdict in one word for Home Assistant's Health entity, never HA's reserved
        /// `unknown` (issue 38): on-air, degraded, off-air, or why it is not known.
        public var homeAssistantWord: String { verdict == .unknown ? (absence ?? .notRunning).rawValue : verdict.word }

        /// "on-air: advertising ... on hci0" (the plugin's one line).
        public var line: String { "\(verdict.word): \(reason)\n" }

        public var json: String {
            "{\"health\":\(jsonString(verdict.word)),\"exit\":\(verdict.rawValue),\"reason\":\(jsonString(reason)),\"status\":"
                + (status.map(Self.render) ?? "null") + "}\n"
        }

        static func render(_ v: JSONValue) -> String {
            switch v {
            case .null: "null"
            case .bool(let b): b ? "true" : "false"
            case .number(let n): n
            case .string(let s): jsonString(s)
            case .array(let items): "[" + items.map(render).joined(separator: ",") + "]"
            case .object(let members): "{" + members.map { jsonString($0.0) + ":" + render($0.1) }.joined(separator: ",") + "}"
            }
        }
    }

    /// `file`: the status file's bytes, or nil with `readError` saying why not; `now`: Unix time;
    /// `isRunning`: whether a process with that pid exists.
    public static func evaluate(path: String, file: [UInt8]?, readError: String? = nil, now: Int64,
                                isRunning: (Int32) -> Bool) -> Result {
        guard let file else {
            return Result(verdict: .unknown, reason: "no status file \(path) (\(readError ?? "missing")): altbeacond is not running", status: nil,
                          absence: .notRunning)
        }
        guard let v = JSONValue.parse(file), case .object = v else {
            return Result(verdict: .unknown, reason: "\(path) is not a status file (not a JSON object)", status: nil, absence: .unreadable)
        }
        guard let exit = v["exit"]?.integer, let verdict = HealthVerdict(rawValue: Int32(truncatingIfNeeded: exit)),
              let pid = v["pid"]?.integer, let updated = v["updated"]?.integer else {
            return Result(verdict: .unknown, reason: "\(path) lacks exit, pid or updated", status: v, absence: .unreadable)
        }
        guard pid > 0, pid <= Int64(Int32.max), isRunning(Int32(pid)) else {
            return Result(verdict: .unknown, reason: "altbeacond (pid \(pid)) is not running; \(path) is left from it", status: v, absence: .notRunning)
        }
        let age = now - updated
        guard age <= staleAfterS else {
            return Result(verdict: .unknown, reason: "\(path) was last written \(age) s ago (it is rewritten every 60 s): altbeacond is not keeping it up", status: v,
                          absence: .stale)
        }
        return Result(verdict: verdict, reason: v["summary"]?.string ?? v["state"]?.string ?? "?", status: v)
    }
}
