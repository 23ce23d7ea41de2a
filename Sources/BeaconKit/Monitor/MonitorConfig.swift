/// `altbeacond monitor`'s configuration (SPEC §10), as read from /etc/altbeacond/monitor.toml:
/// the controller to listen with, the beacons expected on air, and where to say what is heard.
public struct MonitorConfig: Equatable, Sendable {
    /// `[monitor] adapter`: "hciN".
    public var adapter: String
    /// N of hciN.
    public var adapterIndex: UInt16
    /// `[monitor] silent_after_s`: a beacon unheard this long is silent.
    public var silentAfterS: Int
    /// `[monitor] rescan_s`: restart the scan this often (0: never), for controllers that report
    /// an advertiser once per scan and not again (BlueZ's emulator; some firmware that filters
    /// duplicates whatever it is asked).
    public var rescanS: Int = 0
    /// `[monitor] node`: this observer's name in MQTT topics; nil: the caller uses the hostname
    /// (through `MonitorConfig.node(hostname:)`).
    public var node: String?
    /// `[monitor] area`: where this machine is, Home Assistant's suggested area for its devices
    /// (issue 48); nil: none.
    public var area: String?
    /// One per `[expect.NAME]` table, in file order; never empty.
    public var expectations: [Expectation]
    /// `[metrics] textfile`, as the beacon daemon's.
    public var metrics: MetricsSettings
    /// `[mqtt]`; nil without the table.
    public var mqtt: MQTTSettings?

    public static let defaultAdapter = "hci0"
    public static let defaultSilentAfterS = 120
    public static let silentAfterRange: ClosedRange<Int64> = 5...86400
    public static let nodeMaxLength = 64
    public static let areaMaxLength = 64
    public static let rescanRange: ClosedRange<Int64> = 0...3600

    public init(adapter: String = MonitorConfig.defaultAdapter, adapterIndex: UInt16 = 0,
                silentAfterS: Int = MonitorConfig.defaultSilentAfterS, node: String? = nil,
                expectations: [Expectation], metrics: MetricsSettings = MetricsSettings(), mqtt: MQTTSettings? = nil) {
        self.adapter = adapter; self.adapterIndex = adapterIndex; self.silentAfterS = silentAfterS; self.node = node
        self.expectations = expectations; self.metrics = metrics; self.mqtt = mqtt
    }

    /// A valid node name: 1-64 of `A-Z a-z 0-9 _ - .` (one MQTT topic level, no wildcard).
    public static func isValidNode(_ s: String) -> Bool {
        let u = s.utf8
        return !u.isEmpty && u.count <= nodeMaxLength && u.allSatisfy { isBareKeyByte($0) || $0 == UInt8(ascii: ".") }
    }

    /// The node name to use: `node` when set, else the hostname with every byte outside
    /// `A-Z a-z 0-9 _ - .` turned into `_` and cut to 64 bytes ("altbeacond" if nothing is left).
    public func node(hostname: String) -> String {
        if let node { return node }
        var bytes = hostname.utf8.prefix(Self.nodeMaxLength).map { isBareKeyByte($0) || $0 == UInt8(ascii: ".") ? $0 : UInt8(ascii: "_") }
        if bytes.isEmpty { bytes = Array("altbeacond".utf8) }
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// `[mqtt]`: the broker to publish to (MQTT 3.1.1).
public struct MQTTSettings: Equatable, Sendable {
    public var host: String
    public var port: UInt16
    public var username: String?
    /// An absolute path; the password is the file's first line (read by the caller).
    public var passwordFile: String?
    /// `keepalive_s`.
    public var keepAliveS: UInt16
    /// `discovery_prefix`: Home Assistant's MQTT discovery prefix.
    public var discoveryPrefix: String
    /// `tls = true` and its files; nil: plain TCP.
    public var tls: MQTTTLSSettings?
    /// `control`: changes from afar to the local beacon daemon (issue 32); off by default.
    public var control: MQTTControl = .off
    /// `release_topic`: where the fleet's release is offered (issue 39); another topic stages one
    /// (a few cards on `altbeacond/fleet/release/canary` first).
    public var releaseTopic: String = FirmwareUpdate.defaultReleaseTopic

    public static let defaultPort: UInt16 = 1883
    public static let defaultKeepAliveS: UInt16 = 60
    public static let keepAliveRange: ClosedRange<Int64> = 5...3600
    public static let defaultDiscoveryPrefix = "homeassistant"

    public init(host: String, port: UInt16 = MQTTSettings.defaultPort, username: String? = nil, passwordFile: String? = nil,
                keepAliveS: UInt16 = MQTTSettings.defaultKeepAliveS, discoveryPrefix: String = MQTTSettings.defaultDiscoveryPrefix,
                tls: MQTTTLSSettings? = nil, control: MQTTControl = .off, releaseTopic: String = FirmwareUpdate.defaultReleaseTopic) {
        self.host = host; self.port = port; self.username = username; self.passwordFile = passwordFile
        self.keepAliveS = keepAliveS; self.discoveryPrefix = discoveryPrefix; self.tls = tls; self.control = control
        self.releaseTopic = releaseTopic
    }

    /// The broker knows who publishes: the monitor logs in with a user name and password, or a
    /// TLS client certificate. What a message may change here (`control`, an update) needs it:
    /// otherwise anyone who reaches the broker could.
    public var authenticatesPublishers: Bool {
        (username != nil && passwordFile != nil) || (tls?.certFile != nil && tls?.keyFile != nil)
    }
}

/// Reading the monitor's config file.
public enum MonitorConfigFile {
    public static let defaultPath = "/etc/altbeacond/monitor.toml"

    /// Parses and validates the monitor's config file, as `ConfigFile.parse` does the beacon's:
    /// the same TOML subset and limits, `FILE:LINE:COL: message` diagnostics, unknown tables
    /// and keys refused with a "did you mean". The diagnostic is the first of `parseAll`'s.
    public static func parse(_ bytes: [UInt8], path: String) -> Result<MonitorConfig, ConfigDiagnostic> {
        parseAll(bytes, path: path).mapError { $0.first }
    }

    /// Like `parse`, with every problem found (at most `limit`; never empty on failure).
    public static func parseAll(_ bytes: [UInt8], path: String, limit: Int = TOML.maxErrors) -> Result<MonitorConfig, ConfigDiagnostics> {
        let (table, source, errors) = TOML.parseSource(bytes, path: path, limit: max(1, limit))
        if !errors.isEmpty { return .failure(ConfigDiagnostics(errors)) }
        var validator = ConfigValidator(source: source)
        if let config = validator.validateMonitor(table) { return .success(config) }
        let found = validator.diagnostics(limit: max(1, limit))
        return .failure(ConfigDiagnostics(found.isEmpty ? [source.diagnostic("invalid config", at: .start)] : found))
    }

    /// Convenience for text already in memory.
    public static func parse(_ text: String, path: String) -> Result<MonitorConfig, ConfigDiagnostic> {
        parse(Array(text.utf8), path: path)
    }
}

extension MonitorConfig {
    /// An edit of monitor.toml applied to the running monitor (issue 38): the expected beacons,
    /// `silent_after_s`, `rescan_s`, the node and `[mqtt]` take effect at once; the adapter,
    /// `[metrics]`, `[mqtt]` added or removed (an output to make or end) and a first `[expect]`
    /// table on a monitor started without one (no Bluetooth socket was opened) wait for a
    /// restart: `config` keeps the running ones, `waiting` names them.
    public func applying(_ new: MonitorConfig) -> (config: MonitorConfig, waiting: [String]) {
        var c = new
        var waiting: [String] = []
        if new.adapter != adapter {
            waiting.append("[monitor] adapter")
            c.adapter = adapter; c.adapterIndex = adapterIndex
        }
        if new.metrics != metrics {
            waiting.append("[metrics]")
            c.metrics = metrics
        }
        if (new.mqtt == nil) != (mqtt == nil) {
            waiting.append(mqtt == nil ? "[mqtt] added" : "[mqtt] removed")
            c.mqtt = mqtt
        }
        if expectations.isEmpty && !new.expectations.isEmpty {
            waiting.append("[expect] tables on a monitor started without any")
            c.expectations = []
        }
        return (c, waiting)
    }
}
