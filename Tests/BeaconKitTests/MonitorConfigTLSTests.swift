import XCTest
@testable import BeaconKit

/// `[mqtt] tls` and its files (issue 30): what is accepted, the defaults, and each refusal with
/// its FILE:LINE:COL message.
final class MonitorConfigTLSTests: XCTestCase {
    func mqtt(_ body: String) -> MQTTSettings? { monitorConfig("[mqtt]\nhost = \"broker.lan\"\n" + body + lobbyExpectation)?.mqtt }
    func refusal(_ body: String) -> String { monitorError("[mqtt]\nhost = \"broker.lan\"\n" + body + lobbyExpectation) }

    func testPlainByDefault() {
        XCTAssertNil(mqtt("")?.tls)
        XCTAssertEqual(mqtt("")?.port, 1883)
        XCTAssertNil(mqtt("tls = false\n")?.tls)
    }

    func testTLSDefaultsToPort8883TheSystemCAsAndTheHostName() {
        let m = mqtt("tls = true\n")
        XCTAssertEqual(m?.port, 8883)
        XCTAssertEqual(m?.tls, MQTTTLSSettings(caFile: "/etc/ssl/certs/ca-certificates.crt"))
        XCTAssertEqual(m?.tls?.expectedName(host: "broker.lan"), "broker.lan")
    }

    func testEveryKey() {
        let m = mqtt("""
            port = 18883
            tls = true
            ca_file = "/etc/altbeacond/mqtt-ca.pem"
            cert_file = "/etc/altbeacond/mqtt-client.pem"
            key_file = "/etc/altbeacond/mqtt-client.key"
            server_name = "mqtt.example.net"

            """)
        XCTAssertEqual(m?.port, 18883, "an explicit port wins over TLS's default")
        XCTAssertEqual(m?.tls, MQTTTLSSettings(caFile: "/etc/altbeacond/mqtt-ca.pem", certFile: "/etc/altbeacond/mqtt-client.pem",
                                               keyFile: "/etc/altbeacond/mqtt-client.key", serverName: "mqtt.example.net"))
        XCTAssertEqual(m?.tls?.expectedName(host: "10.0.0.5"), "mqtt.example.net")
    }

    func testTLSFilesWithoutTLSAreRefusedNotIgnored() {
        let needs = "needs mqtt.tls = true (without it the connection is plain TCP)"
        XCTAssertEqual(refusal("ca_file = \"/ca.pem\"\n"), "monitor.toml:3:11: mqtt.ca_file " + needs)
        XCTAssertEqual(refusal("tls = false\nserver_name = \"b\"\n"), "monitor.toml:4:15: mqtt.server_name " + needs)
        XCTAssertEqual(refusal("cert_file = \"/c.pem\"\nkey_file = \"/k.pem\"\n"), "monitor.toml:3:13: mqtt.cert_file " + needs)
    }

    func testRefusals() {
        XCTAssertEqual(refusal("tls = \"yes\"\n"), "monitor.toml:3:7: expected a boolean (true or false) for mqtt.tls, found a string")
        XCTAssertEqual(refusal("tls = true\nca_file = \"ca.pem\"\n"),
                       "monitor.toml:4:11: mqtt.ca_file must be the absolute path of a file, like \"/etc/altbeacond/mqtt-ca.pem\"")
        XCTAssertEqual(refusal("tls = true\nkey_file = \"/etc/\"\ncert_file = \"/c.pem\"\n"),
                       "monitor.toml:4:12: mqtt.key_file must be the absolute path of a file, like \"/etc/altbeacond/mqtt-client.key\"")
        XCTAssertEqual(refusal("tls = true\ncert_file = \"/c.pem\"\n"),
                       "monitor.toml:4:1: mqtt.cert_file needs mqtt.key_file, the client certificate's private key")
        XCTAssertEqual(refusal("tls = true\nkey_file = \"/k.pem\"\n"),
                       "monitor.toml:4:1: mqtt.key_file needs mqtt.cert_file, the client certificate it belongs to")
        let name = "mqtt.server_name must be the broker's name as its certificate gives it, like \"broker.example.net\""
        for bad in ["", "a b", "b:8883", "https://b"] {
            XCTAssertEqual(refusal("tls = true\nserver_name = \"\(bad)\"\n"), "monitor.toml:4:15: " + name, bad)
        }
        XCTAssertEqual(refusal("tls = true\ncafile = \"/ca.pem\"\n"), "monitor.toml:4:1: unknown key `mqtt.cafile`; did you mean `mqtt.ca_file`?")
    }

    /// Issue 32: [mqtt] alone publishes this Pi's own beacon; an [expect] without beacons is
    /// still a mistake.
    func testMQTTAloneNeedsNoExpectation() {
        let c = monitorConfig("[mqtt]\nhost = \"broker.lan\"\n")
        XCTAssertEqual(c?.expectations.count, 0)
        XCTAssertEqual(c?.mqtt?.host, "broker.lan")
        XCTAssertEqual(monitorError("[expect]\n[mqtt]\nhost = \"b\"\n"),
                       "monitor.toml:1:1: [expect] lists no beacon: expected beacons are tables [expect.NAME], like [expect.lobby]")
        XCTAssertEqual(monitorError("[metrics]\ntextfile = \"/m.prom\"\n").prefix(37), "monitor.toml:1:1: no beacon to expect")
    }

    /// The client key is judged as the password file is, under its own name.
    func testTheClientKeyIsJudgedLikeThePassword() {
        let f = MonitorPasswordFile.Facts(mode: 0o100644, owner: 0, group: 0, uid: 0, gid: 0)
        XCTAssertEqual(MonitorPasswordFile.problem(path: "/k", f, what: "the MQTT client key"),
                       "the MQTT client key /k is open to every user (mode 0644): refused (chmod o-rwx /k)")
    }
}
