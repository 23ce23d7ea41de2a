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
        if let c = status.change {
            out.append("\"change\":{\"request\":" + jsonString(c.request) + ",\"origin\":" + jsonString(c.origin)
                       + ",\"outcome\":" + jsonString(c.applied ? "applied" : "refused") + ",\"message\":" + jsonString(c.message)
                       + ",\"time\":\(c.time)}")
        } else {
            out.append("\"change\":null")
        }
        return out
    }
}
