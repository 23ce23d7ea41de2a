import XCTest
@testable import BeaconKit

/// Issue 39: the card's firmware in Home Assistant, as published.
final class FirmwareUpdateExportTests: XCTestCase {
    static let rolledBack = UpdaterState(installedVersion: "1.2.0", slot: "A", phaseWord: "idle", outcome: .rolledBack, outcomeVersion: "1.3.0",
                                         message: "its beacon was not on air within 600 s", time: 1_764_244_000)

    func card(_ control: MQTTControl = .beacon, _ capability: FirmwareCapability, release: Bool = true) -> FirmwareUpdate {
        var f = FirmwareUpdate(node: "pi", control: control, authenticated: control != .off, monitorVersion: "1.2.0")
        f.capability = capability
        if release { _ = f.received(topic: "altbeacond/fleet/release", payload: Array(FleetReleaseTests.message.utf8), retained: true, nowS: 0) }
        return f
    }

    static let device = "{\"identifiers\":[\"altbeacond_beacon__pi\"],\"name\":\"pi beacon\",\"model\":\"altbeacond (beacon)\","
        + "\"manufacturer\":\"altbeacond\",\"sw_version\":\"1.2.0\",\"via_device\":\"altbeacond__pi\"}"
    static let tail = "\"availability_topic\":\"altbeacond/pi/status\",\"payload_available\":\"online\",\"payload_not_available\":\"offline\","
        + "\"device\":\(device),\"origin\":{\"name\":\"altbeacond\",\"sw_version\":\"1.2.0\"}}"
    static let outcomeSensor = (topic: "homeassistant/sensor/altbeacond_beacon__pi/update_outcome/config",
                                payload: "{\"name\":\"Update outcome\",\"unique_id\":\"altbeacond_beacon__pi__update_outcome\","
                                    + "\"state_topic\":\"altbeacond/pi/update/detail\",\"value_template\":\"{% if value_json is not defined %}unknown"
                                    + "{% else %}{{ (value_json.outcome or 'none')[:255] }}{% endif %}\","
                                    + "\"json_attributes_topic\":\"altbeacond/pi/update/detail\",\"json_attributes_template\":\"{{ ({'slot': "
                                    + "value_json.slot, 'phase': value_json.phase} if value_json is defined else {}) | tojson }}\","
                                    + "\"icon\":\"mdi:update\",\"entity_category\":\"diagnostic\",\"expire_after\":120," + tail)

    func discovery(_ f: FirmwareUpdate, announce: Bool = true) -> [String] {
        MonitorExport.firmwareDiscovery(f, prefix: "homeassistant", announce: announce, beaconVersion: "1.2.0", version: "1.2.0")
            .map { $0.topic + " " + $0.payload }
    }

    func testAnABCardWithControlGetsAnInstall() {
        XCTAssertEqual(discovery(card(.beacon, .ab(Self.rolledBack))), [
            "homeassistant/update/altbeacond_beacon__pi/firmware/config {\"name\":\"Firmware\",\"unique_id\":\"altbeacond_beacon__pi__firmware\","
                + "\"state_topic\":\"altbeacond/pi/update\",\"device_class\":\"firmware\",\"entity_category\":\"config\","
                + "\"json_attributes_topic\":\"altbeacond/pi/update/detail\","
                + "\"command_topic\":\"altbeacond/pi/update/set\",\"payload_install\":\"install\"," + Self.tail,
            Self.outcomeSensor.topic + " " + Self.outcomeSensor.payload,
        ])
    }

    func testNoInstallWhereItCannotWork() {
        let without = [
            "homeassistant/update/altbeacond_beacon__pi/firmware/config {\"name\":\"Firmware\",\"unique_id\":\"altbeacond_beacon__pi__firmware\","
                + "\"state_topic\":\"altbeacond/pi/update\",\"device_class\":\"firmware\",\"entity_category\":\"config\","
                + "\"json_attributes_topic\":\"altbeacond/pi/update/detail\"," + Self.tail,
            Self.outcomeSensor.topic + " " + Self.outcomeSensor.payload,
        ]
        XCTAssertEqual(discovery(card(.off, .ab(Self.rolledBack))), without, "control off")
        XCTAssertEqual(discovery(card(.beacon, .package)), without, "a package install")
        XCTAssertEqual(discovery(card(.beacon, .needsReflash)), without, "an image from before A/B")
        var anonymous = card(.beacon, .ab(Self.rolledBack))
        anonymous.reconfigure(node: "pi", releaseTopic: "altbeacond/fleet/release", control: .beacon, authenticated: false)
        XCTAssertEqual(discovery(anonymous), without, "a broker that does not authenticate")
        XCTAssertEqual(discovery(card(.beacon, .package), announce: false),
                       ["homeassistant/update/altbeacond_beacon__pi/firmware/config ", Self.outcomeSensor.topic + " "], "removed")
    }

    func testTheStateOfARolledBackUpdate() {
        let why = "rolled back from 1.3.0: its beacon was not on air within 600 s"
        XCTAssertEqual(MonitorExport.firmwareJSON(card(.beacon, .ab(Self.rolledBack))),
                       "{\"installed_version\":\"1.2.0\",\"latest_version\":\"1.3.0\",\"title\":\"altbeacond\","
                       + "\"release_summary\":\"Last: \(why)\",\"release_url\":\"https://host/notes\",\"in_progress\":false,"
                       + "\"update_percentage\":null}")
        XCTAssertEqual(MonitorExport.firmwareDetailJSON(card(.beacon, .ab(Self.rolledBack))),
                       "{\"outcome\":\"\(why)\",\"phase\":\"idle\",\"slot\":\"A\",\"can_install\":true}")
    }

    func testTheStateWhileInstalling() {
        let installing = UpdaterState(installedVersion: "1.2.0", slot: "B", phaseWord: "installing", progress: 42)
        XCTAssertEqual(MonitorExport.firmwareJSON(card(.beacon, .ab(installing))),
                       "{\"installed_version\":\"1.2.0\",\"latest_version\":\"1.3.0\",\"title\":\"altbeacond\","
                       + "\"release_summary\":\"Installing: 42 %\",\"release_url\":\"https://host/notes\",\"in_progress\":true,"
                       + "\"update_percentage\":42}")
        XCTAssertEqual(MonitorExport.firmwareDetailJSON(card(.beacon, .ab(installing))),
                       "{\"outcome\":null,\"phase\":\"installing\",\"slot\":\"B\",\"can_install\":true}")
        var downloading = installing
        downloading.phaseWord = "downloading"
        XCTAssertEqual(MonitorExport.releaseSummary(card(.beacon, .ab(downloading))), "Downloading")
        XCTAssertTrue(MonitorExport.firmwareJSON(card(.beacon, .ab(downloading))).hasSuffix("\"in_progress\":true,\"update_percentage\":null}"),
            "in progress, without a percentage (only while installing)")
    }

    func testAPackageInstallSaysApt() {
        XCTAssertEqual(MonitorExport.firmwareJSON(card(.beacon, .package)),
                       "{\"installed_version\":\"1.2.0\",\"latest_version\":\"1.3.0\",\"title\":\"altbeacond\","
                       + "\"release_summary\":\"A package install: updated with apt (sudo apt upgrade)\",\"release_url\":\"https://host/notes\","
                       + "\"in_progress\":false,\"update_percentage\":null}")
        XCTAssertEqual(MonitorExport.firmwareDetailJSON(card(.beacon, .package)),
                       "{\"outcome\":null,\"phase\":null,\"slot\":null,\"can_install\":false}")
    }

    func testTheSummarySaysWhyThereIsNoInstall() {
        func summary(_ f: FirmwareUpdate) -> String { MonitorExport.releaseSummary(f) }
        XCTAssertEqual(summary(card(.beacon, .needsReflash, release: false)), "This card's image predates A/B updates: reflash it once to get them")
        XCTAssertEqual(summary(card(.off, .ab(UpdaterState(installedVersion: "1.2.0")), release: false)),
                       "Install needs [mqtt] control = \"beacon\" (or \"fleet\") in this card's monitor.toml. No release known on altbeacond/fleet/release")
        var anonymous = card(.beacon, .ab(UpdaterState()))
        anonymous.reconfigure(node: "pi", releaseTopic: "altbeacond/fleet/release", control: .beacon, authenticated: false)
        XCTAssertEqual(summary(anonymous), "Install needs a broker that authenticates who publishes (mqtt.username and password_file)")
        XCTAssertEqual(summary(card(.beacon, .ab(UpdaterState(phaseWord: "trial")))), "On trial: kept once its beacon is on air")
        XCTAssertEqual(summary(card(.beacon, .ab(UpdaterState(phaseWord: "rebooting")))), "Rebooting into the new slot")
        XCTAssertEqual(summary(card(.beacon, .ab(UpdaterState(phaseWord: "verifying")))), "Updating (verifying)")
        XCTAssertEqual(summary(card(.beacon, .ab(UpdaterState()))), "", "nothing to say")
        XCTAssertTrue(MonitorExport.firmwareJSON(card(.beacon, .ab(UpdaterState()))).contains("\"release_summary\":\"\","),
                      "said as an empty string: HA's schema takes no null there")
        var long = Self.rolledBack
        long.message = String(repeating: "x", count: 400)
        XCTAssertEqual(summary(card(.beacon, .ab(long))).count, 255, "HA keeps 255 characters")
        var package = card(.beacon, .package)
        _ = package.received(topic: "altbeacond/pi/update/set", payload: Array("install".utf8), retained: false, nowS: 5)
        XCTAssertEqual(summary(package), "A package install: updated with apt (sudo apt upgrade). Last: refused by the monitor: "
                       + "1.3.0: this card is a package install, updated with apt (sudo apt upgrade)")
        XCTAssertEqual(card(.beacon, .ab(UpdaterState())).installedVersion, "1.2.0", "no installed_version in the file: the monitor's")
    }

    /// Home Assistant 2024.11 and later validate the state with MQTT_JSON_UPDATE_SCHEMA: these
    /// members only, strings never null, update_percentage 0...100 or null. Every state the card
    /// can be in is checked against that rule.
    func testEveryStateFitsHomeAssistantsUpdateSchema() {
        let allowed: Set<String> = ["installed_version", "latest_version", "title", "release_summary", "release_url",
                                    "entity_picture", "in_progress", "update_percentage"]
        let installing = UpdaterState(installedVersion: "1.2.0", slot: "B", phaseWord: "installing", progress: 142)
        let cards = [card(.beacon, .ab(Self.rolledBack)), card(.beacon, .ab(installing)), card(.beacon, .package),
                     card(.off, .needsReflash, release: false), card(.beacon, .ab(UpdaterState()), release: false)]
        for f in cards {
            let json = MonitorExport.firmwareJSON(f)
            guard case .object(let members)? = JSONValue.parse(Array(json.utf8)) else { return XCTFail("not a JSON object: \(json)") }
            for (key, value) in members {
                XCTAssertTrue(allowed.contains(key), "\(key) is not in HA's schema: \(json)")
                switch key {
                case "in_progress":
                    guard case .bool = value else { return XCTFail("\(key) not a boolean: \(json)") }
                case "update_percentage":
                    if case .null = value { continue }
                    guard let n = value.integer, (0...100).contains(n) else { return XCTFail("\(key) not 0...100 or null: \(json)") }
                default:
                    guard value.string != nil else { return XCTFail("\(key) not a string: \(json)") }
                }
            }
        }
        XCTAssertTrue(MonitorExport.firmwareJSON(card(.beacon, .ab(UpdaterState()), release: false))
            .hasPrefix("{\"installed_version\":\"1.2.0\",\"latest_version\":\"1.2.0\","), "no release known: up to date as far as the card knows")
    }
}
