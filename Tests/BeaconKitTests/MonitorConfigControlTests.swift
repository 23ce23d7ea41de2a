import XCTest
@testable import BeaconKit

/// `[mqtt] control` (issue 32): off by default, and refused without a broker that authenticates
/// its publishers, with its FILE:LINE:COL message.
final class MonitorConfigControlTests: XCTestCase {
    let login = "username = \"pi\"\npassword_file = \"/etc/altbeacond/mqtt-password\"\n"
    func mqtt(_ body: String) -> MQTTSettings? { monitorConfig("[mqtt]\nhost = \"broker.lan\"\n" + body + lobbyExpectation)?.mqtt }
    func refusal(_ body: String) -> String { monitorError("[mqtt]\nhost = \"broker.lan\"\n" + body + lobbyExpectation) }

    func testOffByDefault() {
        XCTAssertEqual(mqtt("")?.control, .off)
        XCTAssertEqual(mqtt("control = \"off\"\n")?.control, .off, "off needs no password")
    }

    func testWithAUserAndPasswordOrAClientCertificate() {
        XCTAssertEqual(mqtt(login + "control = \"beacon\"\n")?.control, .beacon)
        XCTAssertEqual(mqtt(login + "control = \"fleet\"\n")?.control, .fleet)
        XCTAssertEqual(mqtt("tls = true\ncert_file = \"/c.pem\"\nkey_file = \"/k.pem\"\ncontrol = \"fleet\"\n")?.control, .fleet)
        XCTAssertEqual(mqtt(login + "tls = true\ncontrol = \"beacon\"\n")?.control, .beacon)
    }

    func testRefusedWithoutAuthentication() {
        let why = "needs the broker to authenticate who publishes: set mqtt.username and mqtt.password_file "
            + "(or tls = true with cert_file and key_file); otherwise anyone who reaches the broker could change the beacon"
        XCTAssertEqual(refusal("control = \"beacon\"\n"), "monitor.toml:3:11: mqtt.control = \"beacon\" " + why)
        XCTAssertEqual(refusal("username = \"pi\"\ncontrol = \"fleet\"\n"), "monitor.toml:4:11: mqtt.control = \"fleet\" " + why,
                       "a user name without a password proves nothing")
        XCTAssertEqual(refusal("tls = true\ncontrol = \"beacon\"\n"), "monitor.toml:4:11: mqtt.control = \"beacon\" " + why,
                       "TLS alone authenticates the broker, not us")
    }

    func testRefusedValues() {
        XCTAssertEqual(refusal(login + "control = \"fleat\"\n"),
                       "monitor.toml:5:11: mqtt.control must be one of \"off\", \"beacon\", \"fleet\"; did you mean \"fleet\"?")
        XCTAssertEqual(refusal(login + "control = true\n"), "monitor.toml:5:11: expected a string for mqtt.control, found a boolean")
        XCTAssertEqual(refusal(login + "controls = \"beacon\"\n"), "monitor.toml:5:1: unknown key `mqtt.controls`; did you mean `mqtt.control`?")
    }
}
