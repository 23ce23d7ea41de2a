/// What `altbeacond monitor --check` prints for a valid monitor.toml (issue 50: once in the
/// executable). Read by people and by root: the image's updater takes the card's own `control`
/// from the `  control: ` line (update-lib.sh's `monitor_control`), so its words are a contract.
public enum MonitorCheckReport {
    public static func render(_ c: MonitorConfig, path: String) -> String {
        var out = "\(path): a valid monitor config\n  adapter \(c.adapter), expecting \(c.expectations.map(\.name).joined(separator: ", "))\n"
        if let m = c.mqtt {
            let tls = m.tls.map {
                " over TLS (CA \($0.caFile), the certificate of \($0.expectedName(host: m.host))\($0.certFile == nil ? "" : ", a client certificate"))"
            } ?? ""
            out += "  MQTT: \(m.host):\(m.port)\(tls)\n"
            if m.control != .off {
                out += "  control: \(m.control.rawValue): changes from afar on altbeacond/<node>/beacon/set/+"
                    + "\(m.control == .fleet ? " and altbeacond/all/beacon/set/+" : "")\n"
            }
        }
        if let t = c.metrics.textfile { out += "  metrics: \(t)\n" }
        return out
    }

    /// Every problem of a refused file, then how many (`check` and `monitor --check` alike).
    public static func failure(_ e: ConfigDiagnostics, path: String) -> String {
        var out = e.all.map(\.description).joined(separator: "\n") + "\n"
        if e.all.count > 1 {
            let more = e.all.count >= TOML.maxErrors ? " (stopped at \(TOML.maxErrors); fix these and check again)" : ""
            out += "\(path): \(e.all.count) errors\(more)\n"
        }
        return out
    }
}
