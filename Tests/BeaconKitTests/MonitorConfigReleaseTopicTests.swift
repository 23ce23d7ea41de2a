import XCTest
@testable import BeaconKit

/// `[mqtt] release_topic` (issue 39): where the fleet's release is offered; another topic stages
/// one. Refused with FILE:LINE:COL like the other keys.
final class MonitorConfigReleaseTopicTests: XCTestCase {
    func mqtt(_ body: String) -> MQTTSettings? { monitorConfig("[mqtt]\nhost = \"broker.lan\"\n" + body + lobbyExpectation)?.mqtt }
    func refusal(_ body: String) -> String { monitorError("[mqtt]\nhost = \"broker.lan\"\n" + body + lobbyExpectation) }

    func testTheFleetTopicByDefault() {
        XCTAssertEqual(mqtt("")?.releaseTopic, "altbeacond/fleet/release")
        XCTAssertEqual(mqtt("release_topic = \"altbeacond/fleet/release/canary\"\n")?.releaseTopic, "altbeacond/fleet/release/canary")
    }

    func testRefusedTopics() {
        let why = "mqtt.release_topic must be an MQTT topic without wildcards (+ #), empty levels or control characters, "
            + "like \"altbeacond/fleet/release/canary\""
        for topic in ["altbeacond/fleet/+", "altbeacond/#", "", "altbeacond//release", "altbeacond/fleet/", "a\\tb"] {
            XCTAssertEqual(refusal("release_topic = \"\(topic)\"\n"), "monitor.toml:3:17: " + why, topic)
        }
        XCTAssertEqual(refusal("release_topic = 1\n"), "monitor.toml:3:17: expected a string for mqtt.release_topic, found an integer")
        XCTAssertEqual(refusal("release_topics = \"x\"\n"),
                       "monitor.toml:3:1: unknown key `mqtt.release_topics`; did you mean `mqtt.release_topic`?")
        XCTAssertEqual(monitorError("[monitor]\nrelease_topic = \"x\"\n" + lobbyExpectation),
                       "monitor.toml:2:1: unknown key `monitor.release_topic`: release_topic belongs in [mqtt], not in [monitor]")
    }

    /// The rule `control` takes, which an update's Install takes too.
    func testWhoAuthenticatesPublishers() {
        XCTAssertFalse(MQTTSettings(host: "h").authenticatesPublishers)
        XCTAssertFalse(MQTTSettings(host: "h", username: "pi").authenticatesPublishers, "a user name without a password proves nothing")
        XCTAssertTrue(MQTTSettings(host: "h", username: "pi", passwordFile: "/p").authenticatesPublishers)
        XCTAssertFalse(MQTTSettings(host: "h", tls: MQTTTLSSettings(caFile: "/ca")).authenticatesPublishers, "TLS alone authenticates the broker")
        XCTAssertTrue(MQTTSettings(host: "h", tls: MQTTTLSSettings(caFile: "/ca", certFile: "/c", keyFile: "/k")).authenticatesPublishers)
    }
}
