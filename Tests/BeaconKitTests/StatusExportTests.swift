import XCTest
@testable import BeaconKit

/// The beacon's health outputs (SPEC §10): the JSON status file, the Prometheus text file, the
/// verdict `altbeacond health` exits with, and `[metrics]` in the config.
final class StatusExportTests: XCTestCase {
    let beacon = "2f234454-cf6d-4a0f-adf2-f4911ba9ffa6 major 1 minor 2 power -59"

    func status(_ phase: DaemonStatus.Phase, refused: String? = nil, ladder: Int = 0, gatt: String? = nil,
                centrals: Int = 0) -> DaemonStatus {
        var s = DaemonStatus(phase: phase, ladderFailures: ladder, rearms: [.reset: 2, .removed: 1], refusedEdit: refused,
                             adapter: "hci0", beacon: beacon, mode: "legacy", intervalMs: 100, frames: ["altbeacon", "ibeacon"],
                             gattServer: gatt, centrals: centrals)
        s.escalations = [.powerCycled: 1]
        return s
    }

    func export(_ s: DaemonStatus) -> StatusExport {
        StatusExport(status: s, version: "0.1.0", pid: 321, startTime: 1_764_000_000, updated: 1_764_000_060)
    }

    func testVerdictPerState() {
        XCTAssertEqual(HealthVerdict(status(.advertising)), .onAir)
        XCTAssertEqual(HealthVerdict(status(.advertising, refused: "c.toml:3:9: bad")), .degraded)
        XCTAssertEqual(HealthVerdict(status(.advertising, ladder: 1)), .degraded, "on air, but recovering")
        XCTAssertEqual(HealthVerdict(status(.arming)), .degraded)
        XCTAssertEqual(HealthVerdict(status(.fault(.connected))), .degraded)
        XCTAssertEqual(HealthVerdict(status(.fault(.missing))), .offAir)
        XCTAssertEqual(HealthVerdict(status(.fault(.hung))), .offAir)
        XCTAssertEqual(HealthVerdict(status(.stopping)), .offAir)
    }

    func testJSONStatusFileReadsBackAsWritten() throws {
        let json = export(status(.advertising, gatt: "altbeacond (own ATT server)", centrals: 1)).json
        XCTAssertTrue(json.hasSuffix("}\n"))
        XCTAssertEqual(json.filter { $0 == "\n" }.count, 1, "one line")
        let v = try XCTUnwrap(JSONValue.parse(Array(json.utf8)))
        XCTAssertEqual(v["health"], .string("on-air"))
        XCTAssertEqual(v["exit"]?.integer, 0)
        XCTAssertEqual(v["pid"]?.integer, 321)
        XCTAssertEqual(v["updated"]?.integer, 1_764_000_060)
        XCTAssertEqual(v["state"], .string("advertising"))
        XCTAssertEqual(v["fault"], .null)
        XCTAssertEqual(v["frames"], .array([
            .object([("frame", .string("altbeacon")), ("on_air", .bool(true))]),
            .object([("frame", .string("ibeacon")), ("on_air", .bool(true))]),
            .object([("frame", .string("gatt-identity")), ("on_air", .bool(false))]),   // left out while a central is connected
        ]))
        XCTAssertEqual(v["rearms"]?["reset"]?.integer, 2)
        XCTAssertEqual(v["rearms"]?["hung"]?.integer, 0)
        XCTAssertEqual(v["escalations"]?["power-cycled"]?.integer, 1)
        XCTAssertEqual(v["config_refused"], .bool(false))
        XCTAssertEqual(v["summary"]?.string, status(.advertising, gatt: "altbeacond (own ATT server)", centrals: 1).text)
        XCTAssertEqual(v["address"], .null, "not known: null")
        XCTAssertEqual(v["changes"], .array([]))
        var c = status(.advertising)
        for i in 1...18 { c.changes.record(RemoteChangeReport(request: "set minor \(i)", origin: "o", applied: true, message: "", time: 4)) }
        c.changes.record(RemoteChangeReport(request: "set major 7", origin: "o", applied: true, message: "", time: 5))
        c.changes.record(RemoteChangeReport(request: "set power 5", origin: "o", applied: false, message: "m", time: 5))
        let changes = try XCTUnwrap(JSONValue.parse(Array(export(c).json.utf8)))["changes"]
        guard case .array(let items)? = changes else { return XCTFail("\(String(describing: changes))") }
        XCTAssertEqual(items.map { $0["n"]?.integer }, Array(5...20), "the last 16, numbered since the daemon started (issue 48)")
        XCTAssertEqual(items.suffix(2).map { $0["outcome"]?.string }, ["applied", "refused"])
        var s = status(.advertising)
        s.address = "B8:27:EB:12:34:56"
        XCTAssertEqual(try XCTUnwrap(JSONValue.parse(Array(export(s).json.utf8)))["address"]?.string, "B8:27:EB:12:34:56",
                       "the address on air (issue 48: the local beacon's device in Home Assistant)")
    }

    func testJSONEscapesWhatAnEditCanPutInTheRefusal() throws {
        let refusal = "c.toml:1:1: bad \"quote\" \\ \u{1}\u{7f} é"
        let v = try XCTUnwrap(JSONValue.parse(Array(export(status(.advertising, refused: refusal)).json.utf8)))
        XCTAssertEqual(v["refused_edit"], .string(refusal))
        XCTAssertEqual(v["health"], .string("degraded"))
        XCTAssertEqual(v["exit"]?.integer, 1)
    }

    func testPrometheusTextFile() {
        let text = export(status(.advertising, refused: "x")).prometheus
        let lines = text.split(separator: "\n").map(String.init)
        for expected in [
            "altbeacond_build_info{version=\"0.1.0\"} 1",
            "altbeacond_on_air 1",
            "altbeacond_health 1",
            "altbeacond_frame_on_air{frame=\"altbeacon\"} 1",
            "altbeacond_frame_on_air{frame=\"ibeacon\"} 1",
            "altbeacond_rearms_total{cause=\"reset\"} 2",
            "altbeacond_rearms_total{cause=\"hardware-error\"} 0",
            "altbeacond_escalations_total{step=\"power-cycled\"} 1",
            "altbeacond_escalations_total{step=\"restart-requested\"} 0",
            "altbeacond_config_refused 1",
            "altbeacond_start_time_seconds 1764000000",
            "altbeacond_last_update_timestamp_seconds 1764000060",
        ] { XCTAssertTrue(lines.contains(expected), "missing: \(expected)\n\(text)") }
        XCTAssertFalse(text.contains("altbeacond_gatt_centrals"), "only with [gatt_identity]")
        // Every sample's metric has exactly one HELP and one TYPE line before it.
        var declared: [String] = []
        for l in lines {
            if l.hasPrefix("# TYPE ") { declared.append(String(l.split(separator: " ")[2])) }
            else if !l.hasPrefix("#") {
                let name = String(l.prefix { $0 != "{" && $0 != " " })
                XCTAssertEqual(declared.last, name, l)
            }
        }
        XCTAssertEqual(Set(declared).count, declared.count)
        XCTAssertTrue(text.hasSuffix("\n"))
    }

    func testPrometheusOffAir() {
        let text = export(status(.fault(.missing))).prometheus
        XCTAssertTrue(text.contains("\naltbeacond_on_air 0\n"))
        XCTAssertTrue(text.contains("\naltbeacond_frame_on_air{frame=\"altbeacon\"} 0\n"))
        XCTAssertTrue(text.contains("\naltbeacond_health 2\n"))
    }

    func testLabelValuesAreEscaped() {
        XCTAssertEqual(PrometheusText.label("a\"b\\c\nd"), "\"a\\\"b\\\\c\\nd\"")
    }

    // MARK: health

    func evaluate(_ file: String?, now: Int64 = 1_764_000_100, running: Bool = true) -> HealthCheck.Result {
        HealthCheck.evaluate(path: "/run/altbeacond/status.json", file: file.map { Array($0.utf8) }, readError: "No such file or directory",
                             now: now) { pid in XCTAssertEqual(pid, 321); return running }
    }

    func testHealthExitsAsTheStatusSays() {
        XCTAssertEqual(evaluate(export(status(.advertising)).json).verdict, .onAir)
        XCTAssertEqual(evaluate(export(status(.advertising)).json).line, "on-air: advertising \(beacon) on hci0; re-arms: reset 2, removed 1\n")
        XCTAssertEqual(evaluate(export(status(.advertising, refused: "bad")).json).verdict, .degraded)
        XCTAssertEqual(evaluate(export(status(.fault(.missing))).json).verdict, .offAir)
    }

    func testHealthIsUnknownWithoutALiveFreshStatus() {
        let noFile = evaluate(nil)
        XCTAssertEqual(noFile.verdict, .unknown)
        XCTAssertTrue(noFile.reason.contains("No such file or directory"))
        XCTAssertEqual(evaluate(export(status(.advertising)).json, running: false).verdict, .unknown, "dead pid")
        XCTAssertEqual(evaluate(export(status(.advertising)).json, now: 1_764_000_060 + 180).verdict, .onAir)
        let stale = evaluate(export(status(.advertising)).json, now: 1_764_000_060 + 181)
        XCTAssertEqual(stale.verdict, .unknown)
        XCTAssertTrue(stale.reason.contains("181 s ago"), stale.reason)
        XCTAssertEqual(evaluate("").verdict, .unknown)
        XCTAssertEqual(evaluate("{\"exit\":0}").verdict, .unknown, "no pid")
        XCTAssertEqual(evaluate("{\"exit\":9,\"pid\":321,\"updated\":1764000060}").verdict, .unknown, "no such verdict")
        XCTAssertEqual(evaluate("[1,2]").verdict, .unknown)
    }

    func testHealthJSONCarriesTheStatus() throws {
        let r = evaluate(export(status(.advertising)).json)
        let v = try XCTUnwrap(JSONValue.parse(Array(r.json.utf8)))
        XCTAssertEqual(v["health"], .string("on-air"))
        XCTAssertEqual(v["exit"]?.integer, 0)
        XCTAssertEqual(v["status"], JSONValue.parse(Array(export(status(.advertising)).json.utf8)))
        XCTAssertEqual(try XCTUnwrap(JSONValue.parse(Array(evaluate(nil).json.utf8)))["status"], .null)
    }

    // MARK: JSON reader

    func testJSONReader() {
        XCTAssertEqual(JSONValue.parse(Array(" {\"a\" : [1, -2.5e3, true, false, null], \"b\": \"\\u00e9\\ud83d\\ude00\\n\"} ".utf8)),
                       .object([("a", .array([.number("1"), .number("-2.5e3"), .bool(true), .bool(false), .null])),
                                ("b", .string("é😀\n"))]))
        for bad in ["", "{", "[1,]", "{\"a\"}", "{\"a\":1,}", "\"\u{1}\"", "\"\\ud83d\"", "\"\\x\"", "tru", "-", "1 2", "{\"a\":1}}"] {
            XCTAssertNil(JSONValue.parse(Array(bad.utf8)), bad)
        }
        XCTAssertNil(JSONValue.parse([0x22, 0xff, 0x22]), "not UTF-8")
        let deep = String(repeating: "[", count: 100) + String(repeating: "]", count: 100)
        XCTAssertNil(JSONValue.parse(Array(deep.utf8)), "nesting is bounded")
        let ok = String(repeating: "[", count: 60) + String(repeating: "]", count: 60)
        XCTAssertNotNil(JSONValue.parse(Array(ok.utf8)))
    }

    // MARK: [metrics]

    func testMetricsTable() throws {
        XCTAssertNil(try XCTUnwrap(config(minimalBeacon)).metrics.textfile)
        let c = try XCTUnwrap(config(minimalBeacon + "[metrics]\ntextfile = \"/var/lib/prometheus/node-exporter/altbeacond.prom\"\n"))
        XCTAssertEqual(c.metrics.textfile, "/var/lib/prometheus/node-exporter/altbeacond.prom")
        XCTAssertEqual(configError(minimalBeacon + "[metrics]\ntextfile = \"x.prom\"\n"),
                       "config.toml:7:12: metrics.textfile must be an absolute path, found \"x.prom\"")
        XCTAssertTrue(configError(minimalBeacon + "[metrics]\ntextfile = \"/tmp/x.txt\"\n").contains("must end in .prom"))
        XCTAssertTrue(configError(minimalBeacon + "[metrics]\ntextfile = 1\n").contains("expected a string for metrics.textfile"))
        XCTAssertTrue(configError(minimalBeacon + "[metrics]\ntextfiel = \"/a.prom\"\n").contains("textfile"), "did you mean")
    }
}

/// Issue 32: what a change from afar reads back from the status file.
final class StatusExportRemoteTests: XCTestCase {
    func status() -> DaemonStatus {
        var s = DaemonStatus(phase: .advertising, adapter: "hci0", beacon: "b", frames: ["altbeacon"])
        s.identity = BeaconIdentity(uuid: [UInt8](repeating: 0xab, count: 16), major: 9, minor: 11, power: -40)
        return s
    }

    func testIdentityAdvertisingAndChange() throws {
        var s = status()
        s.changes.record(RemoteChangeReport(request: "set power 5", origin: "mqtt t", applied: false, message: "c.toml:4:9: bad", time: 77))
        let v = try XCTUnwrap(JSONValue.parse(Array(StatusExport(status: s, version: "v", pid: 1, startTime: 0, updated: 0).json.utf8)))
        XCTAssertEqual(v["uuid"], .string("abababab-abab-abab-abab-abababababab"))
        XCTAssertEqual(v["major"]?.integer, 9)
        XCTAssertEqual(v["power"]?.integer, -40)
        XCTAssertEqual(v["advertising"], .bool(true))
        XCTAssertEqual(v["identifying"], .bool(false))
        XCTAssertEqual(v["change"]?["outcome"], .string("refused"))
        XCTAssertEqual(v["change"]?["message"], .string("c.toml:4:9: bad"))
        XCTAssertEqual(v["change"]?["time"]?.integer, 77)
        XCTAssertEqual(v["health"], .string("on-air"))
    }

    /// Issue 38: the configured interval beside the one the controller took.
    func testTheConfiguredIntervalBesideTheOneOnAir() throws {
        var s = status()
        s.intervalMs = 100
        s.configuredIntervalMs = 90
        let v = try XCTUnwrap(JSONValue.parse(Array(StatusExport(status: s, version: "v", pid: 1, startTime: 0, updated: 0).json.utf8)))
        XCTAssertEqual(v["interval_ms"]?.integer, 100)
        XCTAssertEqual(v["configured_interval_ms"]?.integer, 90)
    }

    func testAdvertisingOffIsOffAirOnPurpose() throws {
        var s = status()
        s.phase = .starting   // the paused session never started
        s.advertisingOff = true
        XCTAssertEqual(HealthVerdict(s), .offAir)
        XCTAssertEqual(s.stateWord, "off")
        XCTAssertEqual(s.health, .advertisingOff)
        XCTAssertTrue(s.text.hasPrefix("advertising off (beacon.advertising = false)"), s.text)
        let v = try XCTUnwrap(JSONValue.parse(Array(StatusExport(status: s, version: "v", pid: 1, startTime: 0, updated: 0).json.utf8)))
        XCTAssertEqual(v["advertising"], .bool(false))
        guard case .array(let frames)? = v["frames"] else { return XCTFail("no frames") }
        XCTAssertEqual(frames.first?["on_air"], .bool(false))
        s.phase = .stopping
        XCTAssertEqual(s.health, .stopped, "dark when stopping, whatever the switch")
    }

    func testIdentifyShowsOverEveryHealthButStopped() {
        var s = status()
        s.identifying = true
        XCTAssertEqual(s.health, .identifying)
        s.advertisingOff = true
        XCTAssertEqual(s.health, .identifying)
        s.phase = .stopping
        XCTAssertEqual(s.health, .stopped)
        XCTAssertEqual(HealthVerdict(status()), .onAir, "identify changes nothing of the verdict")
    }

    func testPatternsOfTheNewStates() {
        XCTAssertEqual(LEDPatterns(health: .advertisingOff, hasFaultLED: true), LEDPatterns(status: .slowPulse, fault: .off))
        XCTAssertEqual(LEDPatterns(health: .identifying, hasFaultLED: true), LEDPatterns(status: .strobe, fault: .strobe))
        XCTAssertEqual(LEDPatterns(health: .identifying, hasFaultLED: false), LEDPatterns(status: .strobe, fault: nil))
        // Unlike every other row: no other pattern blinks at these rates.
        let others: [LEDPattern] = [.fastBlink, .slowBlink, .onWithOffBlink, .shortFlash]
        XCTAssertFalse(others.contains(.slowPulse) || others.contains(.strobe))
    }
}
