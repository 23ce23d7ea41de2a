import XCTest
@testable import BeaconKit

/// The monitor config's refusals (SPEC §10): each with its FILE:LINE:COL message.
extension MonitorConfigTests {
    func testMonitorTableRefusals() {
        XCTAssertEqual(monitorError("[monitor]\nadapter = \"hci01\"\n" + lobbyExpectation),
                       "monitor.toml:2:11: monitor.adapter must be hciN with N from 0 to 65534 and no leading zeros, like \"hci0\"")
        XCTAssertEqual(monitorError("[monitor]\nsilent_after_s = 4\n" + lobbyExpectation),
                       "monitor.toml:2:18: monitor.silent_after_s must be between 5 and 86400, found 4")
        XCTAssertEqual(monitorError("[monitor]\nsilent_after_s = 86401\n" + lobbyExpectation),
                       "monitor.toml:2:18: monitor.silent_after_s must be between 5 and 86400, found 86401")
        XCTAssertEqual(monitorError("[monitor]\nsilent_after_s = \"60\"\n" + lobbyExpectation),
                       "monitor.toml:2:18: expected an integer for monitor.silent_after_s, found a string")
        let node = "monitor.node must be 1 to 64 letters, digits, _, - or . (it is one MQTT topic level), like \"hall-pi\""
        XCTAssertEqual(monitorError("[monitor]\nnode = \"hall/pi\"\n" + lobbyExpectation), "monitor.toml:2:8: " + node)
        XCTAssertEqual(monitorError("[monitor]\nnode = \"+\"\n" + lobbyExpectation), "monitor.toml:2:8: " + node)
        XCTAssertEqual(monitorError("[monitor]\nnode = \"\"\n" + lobbyExpectation), "monitor.toml:2:8: " + node)
        XCTAssertEqual(monitorError("[monitor]\nnode = \"\(String(repeating: "n", count: 65))\"\n" + lobbyExpectation), "monitor.toml:2:8: " + node)
        XCTAssertNotNil(monitorConfig("[monitor]\nnode = \"\(String(repeating: "n", count: 64))\"\n" + lobbyExpectation))
    }

    func testUnknownNamesAndMissingTables() {
        let nothing = "no beacon to expect: add an [expect.NAME] table, like [expect.lobby] with type = \"altbeacon\", uuid, major and minor "
            + "(or [mqtt] alone, to publish this Pi's own beacon)"
        XCTAssertEqual(monitorError(""), "monitor.toml:1:1: " + nothing)
        XCTAssertEqual(monitorError("[monitor]\nadapter = \"hci1\"\n"), "monitor.toml:1:1: " + nothing)
        XCTAssertEqual(monitorError("[expect]\n"),
                       "monitor.toml:1:1: [expect] lists no beacon: expected beacons are tables [expect.NAME], like [expect.lobby]")
        XCTAssertEqual(monitorError("expect = 1\n"), "monitor.toml:1:10: expected a table for expect, found an integer")
        XCTAssertEqual(monitorError("[moniter]\n" + lobbyExpectation), "monitor.toml:1:2: unknown table [moniter]; did you mean [monitor]?")
        // A misspelt [expect...] is the mistake, not the missing expectations.
        XCTAssertEqual(monitorError(lobbyExpectation.replacingPrefix("[expect.", with: "[expects.")),
                       "monitor.toml:1:2: unknown table [expects]; did you mean [expect.NAME]?")
        XCTAssertEqual(monitorError("[beacon]\nmajor = 1\n" + lobbyExpectation),
                       "monitor.toml:1:2: unknown table [beacon]: it belongs in the beacon's config (config.toml); monitor.toml takes [monitor], [expect.NAME], [metrics], [mqtt]")
        XCTAssertEqual(monitorError("[zzz]\n" + lobbyExpectation),
                       "monitor.toml:1:2: unknown table [zzz]; monitor.toml takes [monitor], [expect.NAME], [metrics], [mqtt]")
        XCTAssertEqual(monitorError("[monitor]\nsilent_after = 60\n" + lobbyExpectation),
                       "monitor.toml:2:1: unknown key `monitor.silent_after`; did you mean `monitor.silent_after_s`?")
        XCTAssertEqual(monitorError("[monitor]\nhost = \"x\"\n" + lobbyExpectation),
                       "monitor.toml:2:1: unknown key `monitor.host`: host belongs in [mqtt], not in [monitor]")
        XCTAssertEqual(monitorError("adapter = \"hci0\"\n" + lobbyExpectation),
                       "monitor.toml:1:1: unknown key `adapter`: adapter belongs in [monitor], not at the top level")
        XCTAssertEqual(monitorError("[monitor]\nqqqqqqqq = 1\n" + lobbyExpectation),
                       "monitor.toml:2:1: unknown key `monitor.qqqqqqqq`; [monitor] takes adapter, silent_after_s, rescan_s, node, area")
        XCTAssertEqual(monitorError("[metrics]\ntextfil = \"/a.prom\"\n" + lobbyExpectation),
                       "monitor.toml:2:1: unknown key `metrics.textfil`; did you mean `metrics.textfile`?")
        // The TOML layer's own refusals come through as they are.
        XCTAssertEqual(monitorError("[monitor\n"), "monitor.toml:1:9: expected `.` or `]` in the table header, found end of line")
    }

    func testExpectationRefusals() {
        let head = "[expect.lobby]\n"
        func e(_ body: String) -> String { monitorError(head + body) }
        XCTAssertEqual(monitorError("[expect]\ntype = \"altbeacon\"\n"),
                       "monitor.toml:2:1: `expect.type` is not a beacon: each expected beacon is a table [expect.NAME], like [expect.lobby]")
        XCTAssertEqual(monitorError("[expect.\"lobby door\"]\ntype = \"altbeacon\"\n"),
                       "monitor.toml:1:9: [expect.\"lobby door\"]: the name must be 1 to 64 letters, digits, _ or - (it is an MQTT topic level and a Prometheus label)")
        XCTAssertEqual(monitorError("[expect.\(String(repeating: "x", count: 65))]\ntype = \"altbeacon\"\n").prefix(26), "monitor.toml:1:9: [expect.")
        XCTAssertEqual(e("uuid = \"\(uuid)\"\nmajor = 1\nminor = 2\n"),
                       "monitor.toml:1:1: missing required key `expect.lobby.type` in [expect.lobby]")
        XCTAssertEqual(e("type = \"eddystone-tlm\"\n"),
                       "monitor.toml:2:8: expect.lobby.type \"eddystone-tlm\" cannot be expected: TLM frames carry no ID. Expect the beacon's other frame (eddystone-uid, eddystone-url, ...); its TLM is read from the same address")
        XCTAssertEqual(e("type = \"altbeacn\"\n"),
                       "monitor.toml:2:8: expect.lobby.type must be one of altbeacon, ibeacon, overflow-area, eddystone-uid, eddystone-url; did you mean \"altbeacon\"?")
        XCTAssertEqual(e("type = \"gatt-identity-xyzzy\"\n"),
                       "monitor.toml:2:8: expect.lobby.type must be one of altbeacon, ibeacon, overflow-area, eddystone-uid, eddystone-url")
        XCTAssertEqual(e("type = \"altbeacon\"\nuuid = \"\(uuid)\"\nmajor = 1\nminor = 2\nurl = \"https://a.b\"\n"),
                       "monitor.toml:6:1: expect.lobby.url does not apply to type \"altbeacon\", which is identified by uuid, major, minor")
        XCTAssertEqual(e("type = \"eddystone-uid\"\nnamespace = \"edd1ebeac04e5defa017\"\ninstance = \"0123456789ab\"\nmajor = 1\n"),
                       "monitor.toml:5:1: expect.lobby.major does not apply to type \"eddystone-uid\", which is identified by namespace, instance")
        // The misspelt key is the mistake; the missing one it was meant for is not reported first.
        XCTAssertEqual(e("type = \"altbeacon\"\nuuid = \"\(uuid)\"\nmjaor = 1\nminor = 2\n"),
                       "monitor.toml:4:1: unknown key `expect.lobby.mjaor`; did you mean `expect.lobby.major`?")
        XCTAssertEqual(e("type = \"altbeacon\"\nuuid = \"\(uuid)\"\nzzzzzzzzzz = 1\nmajor = 1\nminor = 2\n"),
                       "monitor.toml:4:1: unknown key `expect.lobby.zzzzzzzzzz`; [expect.NAME] takes type, uuid, major, minor, matching_byte, namespace, instance, url")
        XCTAssertEqual(e("type = \"altbeacon\"\nuuid = \"\(uuid)\"\nmajor = 1\n"),
                       "monitor.toml:1:1: missing required key `expect.lobby.minor` in [expect.lobby]")
        XCTAssertEqual(e("type = \"ibeacon\"\nmajor = 1\nminor = 2\n"),
                       "monitor.toml:1:1: missing required key `expect.lobby.uuid` in [expect.lobby]")
        XCTAssertEqual(e("type = \"altbeacon\"\nuuid = \"2f234454\"\nmajor = 1\nminor = 2\n"),
                       "monitor.toml:3:8: expect.lobby.uuid must be 32 hex digits, plain or grouped 8-4-4-4-12 with hyphens (like \"2f234454-cf6d-4a0f-adf2-f4911ba9ffa6\")")
        XCTAssertEqual(e("type = \"altbeacon\"\nuuid = \"\(uuid)\"\nmajor = 65536\nminor = 2\n"),
                       "monitor.toml:4:9: expect.lobby.major must be between 0 and 65535, found 65536")
        XCTAssertEqual(e("type = \"overflow-area\"\nmajor = 1\nminor = -1\n"),
                       "monitor.toml:4:9: expect.lobby.minor must be between 0 and 65535, found -1")
        XCTAssertEqual(e("type = \"overflow-area\"\nmajor = 1\nminor = 2\nmatching_byte = 256\n"),
                       "monitor.toml:5:17: expect.lobby.matching_byte must be between 0 and 255, found 256")
        XCTAssertEqual(e("type = \"eddystone-uid\"\nnamespace = \"edd1ebeac04e5defa0\"\ninstance = \"0123456789ab\"\n"),
                       "monitor.toml:3:13: expect.lobby.namespace must be exactly 20 hex digits, like \"edd1ebeac04e5defa017\"")
        XCTAssertEqual(e("type = \"eddystone-uid\"\nnamespace = \"edd1ebeac04e5defa017\"\ninstance = \"0123456789ag\"\n"),
                       "monitor.toml:4:12: expect.lobby.instance must be exactly 12 hex digits, like \"0123456789ab\"")
        XCTAssertEqual(e("type = \"eddystone-uid\"\nnamespace = \"edd1ebeac04e5defa017\"\n"),
                       "monitor.toml:1:1: missing required key `expect.lobby.instance` in [expect.lobby]")
        XCTAssertEqual(e("type = \"eddystone-url\"\nurl = \"ftp://example.com\"\n"),
                       "monitor.toml:3:7: expect.lobby.url must start with http:// or https:// (lowercase), like \"https://example.com\"")
        XCTAssertEqual(e("type = \"eddystone-url\"\nurl = \"https://a b.com\"\n"),
                       "monitor.toml:3:7: expect.lobby.url has a character Eddystone cannot send at byte 10 (only printable ASCII, no spaces)")
        XCTAssertEqual(e("type = \"eddystone-url\"\nurl = \"https://example.com/a/very/long/path\"\n"),
                       "monitor.toml:3:7: expect.lobby.url encodes to 24 bytes after its scheme; Eddystone-URL carries at most 17, so no beacon can send it")
        XCTAssertEqual(e("type = \"eddystone-url\"\n"), "monitor.toml:1:1: missing required key `expect.lobby.url` in [expect.lobby]")
        XCTAssertEqual(monitorError(lobbyExpectation + lobbyExpectation.replacingPrefix("[expect.lobby]", with: "[expect.hall]")),
                       "monitor.toml:6:1: [expect.hall] expects the same altbeacon frame as [expect.lobby] (line 1)")
        // The same IDs in another frame type are another expectation.
        XCTAssertNotNil(monitorConfig(lobbyExpectation + lobbyExpectation.replacingPrefix("[expect.lobby]\ntype = \"altbeacon\"",
                                                                                         with: "[expect.hall]\ntype = \"ibeacon\"")))
    }

    func testMetricsAndMQTTRefusals() {
        XCTAssertEqual(monitorError("[metrics]\ntextfile = \"m.prom\"\n" + lobbyExpectation),
                       "monitor.toml:2:12: metrics.textfile must be an absolute path, found \"m.prom\"")
        XCTAssertEqual(monitorError("[metrics]\ntextfile = \"/m.txt\"\n" + lobbyExpectation),
                       "monitor.toml:2:12: metrics.textfile must end in .prom (node_exporter's textfile collector reads only those), found \"/m.txt\"")
        func mqtt(_ body: String) -> String { monitorError("[mqtt]\n" + body + lobbyExpectation) }
        XCTAssertEqual(mqtt("port = 1\n"), "monitor.toml:1:1: missing required key `mqtt.host` in [mqtt]")
        XCTAssertEqual(mqtt("hots = \"b\"\n"), "monitor.toml:2:1: unknown key `mqtt.hots`; did you mean `mqtt.host`?")
        let host = "must be a host name or an IP address, like \"broker.local\" or \"192.168.1.10\""
        XCTAssertEqual(mqtt("host = \"\"\n"), "monitor.toml:2:8: mqtt.host " + host)
        XCTAssertEqual(mqtt("host = \"a b\"\n"), "monitor.toml:2:8: mqtt.host " + host)
        XCTAssertEqual(mqtt("host = \"b\"\nport = 0\n"), "monitor.toml:3:8: mqtt.port must be between 1 and 65535, found 0")
        XCTAssertEqual(mqtt("host = \"b\"\nport = 65536\n"), "monitor.toml:3:8: mqtt.port must be between 1 and 65535, found 65536")
        XCTAssertEqual(mqtt("host = \"b\"\nkeepalive_s = 4\n"), "monitor.toml:3:15: mqtt.keepalive_s must be between 5 and 3600, found 4")
        XCTAssertEqual(mqtt("host = \"b\"\nkeepalive_s = 3601\n"), "monitor.toml:3:15: mqtt.keepalive_s must be between 5 and 3600, found 3601")
        XCTAssertEqual(mqtt("host = \"b\"\nusername = \"\"\n"),
                       "monitor.toml:3:12: mqtt.username must be 1 to 65535 bytes without control characters (leave it out to connect anonymously)")
        XCTAssertEqual(mqtt("host = \"b\"\nusername = \"u\"\npassword_file = \"secret\"\n"),
                       "monitor.toml:4:17: mqtt.password_file must be the absolute path of a file, like \"/etc/altbeacond/mqtt-password\"")
        XCTAssertEqual(mqtt("host = \"b\"\npassword_file = \"/etc/p\"\n"),
                       "monitor.toml:3:17: mqtt.password_file needs mqtt.username: MQTT 3.1.1 sends a password only with a user name")
        let prefix = "must be an MQTT topic without wildcards (+ #), empty levels or control characters, like \"homeassistant\""
        for bad in ["", "ha/#", "ha/+/x", "/ha", "ha/", "a//b"] {
            XCTAssertEqual(mqtt("host = \"b\"\ndiscovery_prefix = \"\(bad)\"\n"), "monitor.toml:3:20: mqtt.discovery_prefix " + prefix, bad)
        }
        XCTAssertEqual(mqtt("host = \"b\"\nhost = \"c\"\n").prefix(17), "monitor.toml:3:1:", "duplicate key: the TOML layer")
    }

    /// Issue 30: a port or a scheme in mqtt.host passed the check and failed at every connect.
    func testMQTTHostWithAPortIsRefusedWithAHint() {
        func mqtt(_ host: String) -> String { monitorError("[mqtt]\nhost = \"\(host)\"\n" + lobbyExpectation) }
        XCTAssertEqual(mqtt("1.2.3.4:1883"), "monitor.toml:2:8: mqtt.host \"1.2.3.4:1883\" has a port in it: put the port in mqtt.port, like host = \"1.2.3.4\" and port = 1883")
        XCTAssertEqual(mqtt("broker.lan:8883"), "monitor.toml:2:8: mqtt.host \"broker.lan:8883\" has a port in it: put the port in mqtt.port, like host = \"broker.lan\" and port = 8883")
        XCTAssertEqual(mqtt("[::1]:1883"), "monitor.toml:2:8: mqtt.host \"[::1]:1883\" has brackets: write the IPv6 address bare, like host = \"::1\", and put the port in mqtt.port")
        XCTAssertEqual(mqtt("mqtt://ha.local:1883"), "monitor.toml:2:8: mqtt.host \"mqtt://ha.local:1883\" is a URL: give the host alone, like host = \"ha.local\", and put the port in mqtt.port")
        for good in ["::1", "fe80::1", "2001:db8::10", "192.168.1.10", "homeassistant.local", "broker"] {
            XCTAssertEqual(monitorConfig("[mqtt]\nhost = \"\(good)\"\n" + lobbyExpectation)?.mqtt?.host, good)
        }
    }

    /// Every problem, first the one to fix first.
}
