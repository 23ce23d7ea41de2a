/// `[mqtt] control` (issue 32, docs/monitoring.md "Changes from afar").
extension ConfigValidator {
    /// The control mode; `.off` when absent or refused (each problem reported). Control needs a
    /// broker that knows who publishes: a user name and password, or a TLS client certificate.
    /// Without one, anyone who reaches the broker could re-identify or silence the beacon.
    mutating func readMQTTControl(_ t: TOMLTable, _ settings: MQTTSettings) -> MQTTControl {
        guard let (s, p) = string(t, "mqtt", "control") else { return .off }
        let names = MQTTControl.allCases.map(\.rawValue)
        guard let mode = MQTTControl(rawValue: s) else {
            let hint = closest(s, among: names).map { "; did you mean \"\($0)\"?" } ?? ""
            report("mqtt.control must be one of \(names.map { "\"\($0)\"" }.joined(separator: ", "))\(hint)", at: p)
            return .off
        }
        guard mode != .off else { return .off }
        guard settings.authenticatesPublishers else {
            report("mqtt.control = \"\(s)\" needs the broker to authenticate who publishes: set mqtt.username and mqtt.password_file "
                   + "(or tls = true with cert_file and key_file); otherwise anyone who reaches the broker could change the beacon",
                   at: p, rank: .missing, key: "mqtt.password_file")
            return .off
        }
        return mode
    }
}
