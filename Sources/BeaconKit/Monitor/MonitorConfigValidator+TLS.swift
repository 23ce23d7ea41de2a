/// `[mqtt] tls`, `ca_file`, `cert_file`, `key_file`, `server_name` (docs/monitoring.md).
extension ConfigValidator {
    /// The TLS settings, nil for plain TCP; problems reported as they are found. A TLS file key
    /// without `tls = true` is refused rather than ignored: a broker left in plain text by a
    /// missing line would send the password in the clear.
    mutating func readMQTTTLS(_ t: TOMLTable) -> MQTTTLSSettings? {
        let on = boolean(t, "mqtt", "tls") ?? false
        var tls = MQTTTLSSettings()
        if let (s, p) = path(t, "ca_file", like: "/etc/altbeacond/mqtt-ca.pem") { tls.caFile = s; if !on { needsTLS("ca_file", p) } }
        if let (s, p) = path(t, "cert_file", like: "/etc/altbeacond/mqtt-client.pem") { tls.certFile = s; if !on { needsTLS("cert_file", p) } }
        if let (s, p) = path(t, "key_file", like: "/etc/altbeacond/mqtt-client.key") { tls.keyFile = s; if !on { needsTLS("key_file", p) } }
        if let (s, p) = string(t, "mqtt", "server_name") {
            let u = s.utf8
            if u.isEmpty || u.count > 253 || u.contains(where: { $0 <= 0x20 || $0 >= 0x7F || $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: ":") }) {
                report("mqtt.server_name must be the broker's name as its certificate gives it, like \"broker.example.net\"", at: p)
            } else {
                tls.serverName = s
                if !on { needsTLS("server_name", p) }
            }
        }
        if on, tls.certFile != nil, tls.keyFile == nil, let e = t.entry("cert_file") {
            report("mqtt.cert_file needs mqtt.key_file, the client certificate's private key", at: e.keyPosition, rank: .missing, key: "mqtt.key_file")
        }
        if on, tls.keyFile != nil, tls.certFile == nil, let e = t.entry("key_file") {
            report("mqtt.key_file needs mqtt.cert_file, the client certificate it belongs to", at: e.keyPosition, rank: .missing, key: "mqtt.cert_file")
        }
        return on ? tls : nil
    }

    private mutating func path(_ t: TOMLTable, _ key: String, like example: String) -> (String, SourcePosition)? {
        guard let (s, p) = string(t, "mqtt", key) else { return nil }
        guard s.hasPrefix("/"), !s.hasSuffix("/"), s.utf8.count <= 4000, !s.utf8.contains(0) else {
            report("mqtt.\(key) must be the absolute path of a file, like \"\(example)\"", at: p)
            return nil
        }
        return (s, p)
    }

    private mutating func needsTLS(_ key: String, _ p: SourcePosition) {
        report("mqtt.\(key) needs mqtt.tls = true (without it the connection is plain TCP)", at: p, rank: .missing, key: "mqtt.tls")
    }
}
