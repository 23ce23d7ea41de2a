import XCTest
@testable import BeaconKit

final class MonitorConfigTests: XCTestCase {
    let uuid = "2f234454-cf6d-4a0f-adf2-f4911ba9ffa6"

    func testDefaults() throws {
        let c = try XCTUnwrap(monitorConfig(lobbyExpectation))
        XCTAssertEqual(c.adapter, "hci0")
        XCTAssertEqual(c.adapterIndex, 0)
        XCTAssertEqual(c.silentAfterS, 120)
        XCTAssertEqual(c.rescanS, 0, "no rescans unless asked")
        XCTAssertEqual(try XCTUnwrap(monitorConfig("[monitor]\nrescan_s = 30\n" + lobbyExpectation)).rescanS, 30)
        XCTAssertTrue(monitorError("[monitor]\nrescan_s = 3601\n" + lobbyExpectation).contains("between 0 and 3600"))
        XCTAssertNil(c.node)
        XCTAssertEqual(c.node(hostname: "hall-pi"), "hall-pi", "nil: the hostname")
        XCTAssertEqual(c.metrics, MetricsSettings())
        XCTAssertNil(c.mqtt)
        XCTAssertEqual(c.expectations, [Expectation(name: "lobby", type: "altbeacon", fields: [
            FrameField("uuid", uuid), .number("major", 1), .number("minor", 2),
        ])])
        XCTAssertEqual(MonitorConfigFile.defaultPath, "/etc/altbeacond/monitor.toml")
        let m = try XCTUnwrap(monitorConfig("[mqtt]\nhost = \"broker\"\n" + lobbyExpectation)?.mqtt)
        XCTAssertEqual(m, MQTTSettings(host: "broker", port: 1883, username: nil, passwordFile: nil, keepAliveS: 60,
                                       discoveryPrefix: "homeassistant"))
    }

    func testEveryKey() throws {
        let c = try XCTUnwrap(monitorConfig("""
            [monitor]
            adapter = "hci1"
            silent_after_s = 300
            node = "hall-pi.2"

            [expect.a]
            type = "altbeacon"
            uuid = "2F234454CF6D4A0FADF2F4911BA9FFA6"
            major = 0x10
            minor = 65535

            [expect.B-2]
            type = "ibeacon"
            uuid = "2f234454-CF6D-4a0f-adf2-f4911ba9ffa6"
            major = 1
            minor = 2

            [expect.over_flow]
            type = "overflow-area"
            major = 1
            minor = 2

            [expect.over2]
            type = "overflow-area"
            matching_byte = 0x55
            major = 1
            minor = 2

            [expect.uid]
            type = "eddystone-uid"
            namespace = "EDD1EBEAC04E5DEFA017"
            instance = "0123456789AB"

            [expect.url]
            type = "eddystone-url"
            url = "https://www.example.com/"

            [metrics]
            textfile = "/var/lib/prometheus/node-exporter/altbeacond-monitor.prom"

            [mqtt]
            host = "192.168.1.10"
            port = 8883
            username = "altbeacond"
            password_file = "/etc/altbeacond/mqtt-password"
            keepalive_s = 30
            discovery_prefix = "ha/discovery"

            """))
        XCTAssertEqual(c.adapter, "hci1")
        XCTAssertEqual(c.adapterIndex, 1)
        XCTAssertEqual(c.silentAfterS, 300)
        XCTAssertEqual(c.node, "hall-pi.2")
        XCTAssertEqual(c.node(hostname: "other"), "hall-pi.2")
        XCTAssertEqual(c.metrics.textfile, "/var/lib/prometheus/node-exporter/altbeacond-monitor.prom")
        XCTAssertEqual(c.mqtt, MQTTSettings(host: "192.168.1.10", port: 8883, username: "altbeacond",
                                            passwordFile: "/etc/altbeacond/mqtt-password", keepAliveS: 30, discoveryPrefix: "ha/discovery"))
        XCTAssertEqual(c.expectations.map(\.name), ["a", "B-2", "over_flow", "over2", "uid", "url"], "file order")
        XCTAssertEqual(c.expectations.map(\.type), ["altbeacon", "ibeacon", "overflow-area", "overflow-area", "eddystone-uid", "eddystone-url"])
        // Normalized as scan prints them: lowercase hyphenated UUID, numbers in decimal, lowercase hex.
        XCTAssertEqual(c.expectations[0].fields, [FrameField("uuid", uuid), .number("major", 16), .number("minor", 65535)])
        XCTAssertEqual(c.expectations[1].fields, [FrameField("uuid", uuid), .number("major", 1), .number("minor", 2)])
        XCTAssertEqual(c.expectations[2].fields, [.byte("matching_byte", 0xaa), .number("major", 1), .number("minor", 2)], "default 0xAA")
        XCTAssertEqual(c.expectations[3].fields.first, .byte("matching_byte", 0x55))
        XCTAssertEqual(c.expectations[3].fields.first?.text, "0x55")
        XCTAssertEqual(c.expectations[4].fields, [FrameField("namespace", "edd1ebeac04e5defa017"), FrameField("instance", "0123456789ab")])
        XCTAssertEqual(c.expectations[5].fields, [FrameField("url", "https://www.example.com/")])
        XCTAssertEqual(c.expectations[0].idText, "\(uuid) major=16 minor=65535")
    }

    /// Each expectation matches the frame as `scan` hears it, and nothing else.
    func testExpectationsMatchFramesHeardOnAir() throws {
        let c = try XCTUnwrap(monitorConfig("""
            [expect.alt]
            type = "altbeacon"
            uuid = "2F234454CF6D4A0FADF2F4911BA9FFA6"
            major = 1
            minor = 2
            [expect.ib]
            type = "ibeacon"
            uuid = "2f234454cf6d4a0fadf2f4911ba9ffa6"
            major = 1
            minor = 2
            [expect.over]
            type = "overflow-area"
            major = 1
            minor = 2
            [expect.uid]
            type = "eddystone-uid"
            namespace = "edd1ebeac04e5defa017"
            instance = "0123456789ab"
            [expect.url]
            type = "eddystone-url"
            url = "https://www.example.com/"

            """))
        let heard = [FrameTests.altbeaconHex, FrameTests.ibeaconHex, FrameTests.overflowHex, FrameTests.uidHex, FrameTests.urlHex]
            .map { monitorSighting($0) }
        for (i, e) in c.expectations.enumerated() {
            XCTAssertEqual(heard.map(e.matches), heard.indices.map { $0 == i }, e.name)
        }
        let tlm = monitorSighting(FrameTests.tlmHex)
        XCTAssertFalse(c.expectations.contains { $0.matches(tlm) }, "TLM carries no ID")
        // Another minor, matching byte, instance or URL: another beacon.
        XCTAssertFalse(c.expectations[0].matches(monitorSighting("020106 1bff 1801 beac 2f234454cf6d4a0fadf2f4911ba9ffa6 0001 0003 c5 00")))
        XCTAssertFalse(c.expectations[2].matches(monitorSighting("020106 14ff 4c00 01 01 55 0001 0002 00000000000000000000")))
        XCTAssertFalse(c.expectations[3].matches(monitorSighting("020106 0303aafe 1716aafe 00 ee edd1ebeac04e5defa017 0123456789ac 0000")))
        XCTAssertFalse(c.expectations[4].matches(monitorSighting("020106 0303aafe 0e16aafe 10 ee 00 6578616d706c65 00")), "http://")
        // Power, company and sender do not identify a beacon.
        XCTAssertTrue(c.expectations[0].matches(monitorSighting("020106 1bff 4c00 beac 2f234454cf6d4a0fadf2f4911ba9ffa6 0001 0002 b0 07",
                                                                address: [1, 2, 3, 4, 5, 6])))
        // The overflow area at position 1 with the default matching byte.
        XCTAssertTrue(c.expectations[2].matches(monitorSighting("020106 14ff 4c00 01 01 0000000000 000000 aa 0001 0002 00 00")))
        XCTAssertEqual(Expectation(name: "x", frame: EddystoneURLFrame(encoded: [1, 0x65, 0x78, 0x61, 0x6d, 0x70, 0x6c, 0x65, 0], power0m: 0)),
                       c.expectations[4].with(name: "x"))
    }

    func testParseAllListsEveryProblem() throws {
        let text = "[monitor]\nsilent_after_s = 1\nnode = \"a b\"\n" + lobbyExpectation.replacingPrefix("[expect.lobby]\n", with: "[expect.lobby]\nmajr = 3\n")
        guard case .failure(let all) = MonitorConfigFile.parseAll(Array(text.utf8), path: "m.toml") else { return XCTFail("accepted") }
        XCTAssertEqual(all.all.map { "\($0.line):\($0.column)" }, ["2:18", "3:8", "5:1"])
    }

    /// Issue 48: `[monitor] area`, Home Assistant's suggested area: any text but control characters.
    func testArea() throws {
        func parse(_ area: String) -> Result<MonitorConfig, ConfigDiagnostics> {
            MonitorConfigFile.parseAll(Array("[monitor]\narea = \(area)\n\(lobbyExpectation)".utf8), path: "m.toml")
        }
        XCTAssertEqual(try parse("\"Hall – 1st floor\"").get().area, "Hall – 1st floor")
        XCTAssertNil(try MonitorConfigFile.parseAll(Array(lobbyExpectation.utf8), path: "m.toml").get().area)
        for bad in ["\"\"", "\"a\\tb\"", "\"\(String(repeating: "x", count: 65))\""] {
            guard case .failure(let e) = parse(bad) else { XCTFail("accepted area = \(bad)"); continue }
            XCTAssertTrue(e.all.first?.message.hasPrefix("monitor.area must be 1 to 64 characters") ?? false, "\(e.all)")
        }
    }

    func testNodeFromHostname() {
        let c = MonitorConfig(expectations: [])
        XCTAssertEqual(c.node(hostname: "pi.local"), "pi.local")
        XCTAssertEqual(c.node(hostname: "my pi/+#é"), "my_pi_____")
        XCTAssertEqual(c.node(hostname: ""), "altbeacond")
        XCTAssertEqual(c.node(hostname: String(repeating: "h", count: 100)).count, 64)
        XCTAssertTrue(MonitorConfig.isValidNode(c.node(hostname: "my pi/+#é")))
    }
}
