// Issue 32: what a change from afar needs to read back from the status file: the configured
// identity (the Home Assistant entities' state), the configured interval (issue 38: `interval_ms`
// is the one on air), the advertising switch, identify, and the last change asked for with its
// outcome.

extension StatusExport {
    var remoteMembers: [String] {
        var out: [String] = []
        if let b = status.identity {
            out.append("\"uuid\":" + jsonString(b.uuidString))
            out.append("\"major\":\(b.major)")
            out.append("\"minor\":\(b.minor)")
            out.append("\"power\":\(b.power)")
        }
        if let i = status.configuredIntervalMs { out.append("\"configured_interval_ms\":\(i)") }
        out.append("\"advertising\":\(!status.advertisingOff)")
        out.append("\"identifying\":\(status.identifying)")
        func object(_ c: RemoteChangeReport, n: Int? = nil) -> String {
            "{\"request\":" + jsonString(c.request) + ",\"origin\":" + jsonString(c.origin)
                + ",\"outcome\":" + jsonString(c.applied ? "applied" : "refused") + ",\"message\":" + jsonString(c.message)
                + ",\"time\":\(c.time)" + (n.map { ",\"n\":\($0)" } ?? "") + "}"
        }
        out.append("\"change\":" + (status.changes.last.map { object($0) } ?? "null"))
        // each with its number since the daemon started (`n`): the monitor says each one once
        let first = status.changes.count - status.changes.recent.count + 1
        out.append("\"changes\":[" + status.changes.recent.enumerated().map { object($1, n: first + $0) }.joined(separator: ",") + "]")
        return out
    }
}
