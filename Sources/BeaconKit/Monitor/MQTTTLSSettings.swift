/// `[mqtt] tls = true` and its files: the broker's certificate is checked against `ca_file` and
/// `server_name` (default: `host`); `cert_file` and `key_file` are a client certificate, for a
/// broker that asks for one (mosquitto's `require_certificate`).
public struct MQTTTLSSettings: Equatable, Sendable {
    /// Trust anchors, PEM; default Debian's bundle of public CAs (package ca-certificates).
    public var caFile: String
    public var certFile: String?
    public var keyFile: String?
    public var serverName: String?

    public static let systemCAFile = "/etc/ssl/certs/ca-certificates.crt"
    /// MQTT over TLS (IANA's port for secure-mqtt; mosquitto's TLS listeners by convention).
    public static let defaultPort: UInt16 = 8883

    public init(caFile: String = MQTTTLSSettings.systemCAFile, certFile: String? = nil, keyFile: String? = nil, serverName: String? = nil) {
        self.caFile = caFile; self.certFile = certFile; self.keyFile = keyFile; self.serverName = serverName
    }

    /// The name the broker's certificate must carry.
    public func expectedName(host: String) -> String { serverName ?? host }
}
