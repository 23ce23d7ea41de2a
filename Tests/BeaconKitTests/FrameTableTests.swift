import XCTest
@testable import BeaconKit

/// The frame settings by name, as the tests use them (Sources derive them from the frame table).
extension RemoteSetting {
    static var frameAltBeacon: RemoteSetting { RemoteSetting(rawValue: "altbeacon")! }
    static var frameIBeacon: RemoteSetting { RemoteSetting(rawValue: "ibeacon")! }
    static var frameOverflow: RemoteSetting { RemoteSetting(rawValue: "overflow")! }
    static var frameEddystone: RemoteSetting { RemoteSetting(rawValue: "eddystone")! }
    static var frameEddystoneTLM: RemoteSetting { RemoteSetting(rawValue: "eddystone_tlm")! }
}

/// Issue 40: one frame table (`BeaconFrames.types` and each type's traits) from which the config
/// keys, the remote settings, Home Assistant's switches and device models are derived.
final class FrameTableTests: XCTestCase {
    func testEveryFrameTypeHasASwitchAConfigReaderAndAModel() {
        for t in BeaconFrames.types {
            XCTAssertNotNil(t.traits.switchedBy, "\(t.name) has no switch: Home Assistant could not turn it on")
            XCTAssertTrue(t is any ConfigurableFrame.Type, "\(t.name) cannot be read from the config")
            XCTAssertNotEqual(t.traits.model, t.name, "\(t.name) has no device model")
        }
    }

    func testTheSwitchesAreTheRemoteSettingsAndTheHomeAssistantSwitches() {
        XCTAssertEqual(BeaconFrames.switches.map(\.setting), ["altbeacon", "ibeacon", "overflow", "eddystone", "eddystone_tlm"])
        XCTAssertEqual(RemoteSetting.allCases.map(\.rawValue),
                       ["uuid", "major", "minor", "power", "interval_ms", "advertising"] + BeaconFrames.switches.map(\.setting))
        let ha = MonitorExport.frameSwitches
        XCTAssertEqual(ha.map(\.setting.rawValue), BeaconFrames.switches.map(\.setting))
        XCTAssertEqual(ha.map(\.name), ["AltBeacon frame", "iBeacon frame", "Overflow area frame", "Eddystone frame", "Eddystone-TLM frame"])
        XCTAssertEqual(ha.map(\.frames), [["altbeacon"], ["ibeacon"], ["overflow-area"], ["eddystone-uid", "eddystone-url"], ["eddystone-tlm"]])
        // Every frame type is turned on by one of them: none would show OFF in Home Assistant while on air.
        XCTAssertEqual(Set(ha.flatMap(\.frames)), Set(BeaconFrames.names))
        for s in RemoteSetting.allCases where s.frameSwitch != nil {
            XCTAssertEqual(s.configKey.kind, .boolean)
            XCTAssertNotNil(ConfigSchema.keys(of: s.table)?.firstIndex(of: s.key), "\(s): \(s.table).\(s.key) is not a config key")
        }
    }

    func testTheFrameTablesKeysComeFromTheFrameTypes() {
        let tables = BeaconFrames.configTables
        XCTAssertEqual(tables.map(\.name), ["ibeacon", "overflow", "eddystone"])
        XCTAssertEqual(tables.map(\.keys), [["enabled", "uuid", "major", "minor", "power"], ["enabled", "major", "minor", "matching_byte"],
                                            ["enabled", "namespace", "instance", "power_0m", "url", "tlm"]])
        XCTAssertEqual(ConfigSchema.keys(of: "eddystone"), tables[2].keys)
    }

    func testRangesAreSharedByTheConfigAndHomeAssistant() {
        XCTAssertEqual(RemoteSetting.major.range, BeaconIdentity.majorMinorRange)
        XCTAssertEqual(RemoteSetting.minor.range, BeaconIdentity.majorMinorRange)
        XCTAssertEqual(RemoteSetting.power.range, BeaconIdentity.powerRange)
        XCTAssertEqual(RemoteSetting.intervalMs.range, BluetoothSettings.intervalRange)
        let power = MonitorExport.localBeaconControlDiscovery(node: "pi", prefix: "homeassistant", announce: true)
            .first { $0.topic.hasSuffix("/power/config") }?.payload ?? ""
        XCTAssertTrue(power.contains("\"min\":-127,\"max\":0"), power)
    }

    func testDeviceModelsComeFromTheTraits() {
        XCTAssertEqual(MonitorExport.frameModel("ibeacon"), "Apple iBeacon")
        XCTAssertEqual(MonitorExport.frameModel("eddystone-url"), "Google Eddystone-URL")
        XCTAssertEqual(MonitorExport.frameModel("something-new"), "something-new")
        XCTAssertEqual(BeaconFrames.identifiedByBeaconID, ["altbeacon", "ibeacon"])
    }
}
