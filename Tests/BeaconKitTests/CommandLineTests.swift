import XCTest
@testable import BeaconKit

final class CommandLineTests: XCTestCase {
    func testCommands() {
        XCTAssertEqual(try Arguments.parse(["run"]).get(), .run(configPath: "/etc/altbeacond/config.toml"))
        XCTAssertEqual(try Arguments.parse(["check", "--config", "/x.toml"]).get(), .check(configPath: "/x.toml"))
        XCTAssertEqual(try Arguments.parse(["run", "--config=/y.toml"]).get(), .run(configPath: "/y.toml"))
        XCTAssertEqual(try Arguments.parse(["run", "-c", "z"]).get(), .run(configPath: "z"))
        XCTAssertEqual(try Arguments.parse(["scan"]).get(), .scan(adapter: "hci0", timeoutSeconds: nil, json: false))
        XCTAssertEqual(try Arguments.parse(["scan", "--adapter", "hci1", "--timeout", "5", "--json"]).get(),
                       .scan(adapter: "hci1", timeoutSeconds: 5, json: true))
        XCTAssertEqual(try Arguments.parse(["--help"]).get(), .help)
        XCTAssertEqual(try Arguments.parse(["run", "--help"]).get(), .help)
        XCTAssertEqual(try Arguments.parse(["--version"]).get(), .version)
        XCTAssertEqual(try Arguments.parse(["monitor", "--check"]).get(), .checkMonitor(configPath: "/etc/altbeacond/monitor.toml"))
        XCTAssertEqual(try Arguments.parse(["monitor", "--config", "/m.toml", "--check"]).get(), .checkMonitor(configPath: "/m.toml"))
        XCTAssertEqual(try Arguments.parse(["monitor", "-c", "/m.toml"]).get(), .monitor(configPath: "/m.toml", once: false, timeoutSeconds: nil))
    }

    func testUsageErrors() {
        func message(_ argv: [String]) -> String? {
            if case .failure(let e) = Arguments.parse(argv) { return e.message }
            return nil
        }
        XCTAssertEqual(message([]), "no command given")
        XCTAssertEqual(message(["frob"]), "unknown command 'frob'")
        XCTAssertEqual(message(["--frob"]), "unknown option '--frob'")
        XCTAssertEqual(message(["run", "--config"]), "option '--config' needs a value")
        XCTAssertEqual(message(["check", "--json"]), "unknown option '--json' for 'check'")
        XCTAssertEqual(message(["scan", "--adapter", "bt0"]), "--adapter takes hciN, not 'bt0'")
        XCTAssertEqual(message(["scan", "--timeout", "0"]), "--timeout takes a whole number of seconds, not '0'")
        XCTAssertEqual(message(["scan", "-t"]), "option '-t' needs a value")
        XCTAssertEqual(message(["monitor", "--check", "--once"]), "--check and --once do not go together")
    }

    func testAdapterNames() {
        XCTAssertEqual(parseAdapterIndex("hci0"), 0)
        XCTAssertEqual(parseAdapterIndex("hci12"), 12)
        XCTAssertNil(parseAdapterIndex("hci"))
        XCTAssertNil(parseAdapterIndex("hci-1"))
        XCTAssertNil(parseAdapterIndex("hci65535"))
        XCTAssertNil(parseAdapterIndex("HCI0"))
        XCTAssertNil(parseAdapterIndex("hci01"))   // the same parser as bluetooth.adapter
        XCTAssertEqual(parseAdapterIndex("hci65534"), 65534)
    }

    func testCheckReportHasTheExactPayloadLineAndTheGuidesCommands() {
        let id = BeaconIdentity(uuid: Array(0..<16), major: 0xabcd, minor: 7, power: -70, companyID: 0x004c, reserved: 9)
        let config = BeaconConfig(beacon: id, bluetooth: BluetoothSettings(adapter: "hci2", adapterIndex: 2, intervalMs: 250))
        let out = CheckReport.render(config, path: "/c.toml")
        let lines = out.split(separator: "\n").map(String.init)
        XCTAssertTrue(lines.contains("advertising-data: 0201061bff4c00beac000102030405060708090a0b0c0d0e0fabcd0007ba09"))
        XCTAssertTrue(lines.contains("  hcitool -i hci2 cmd 0x08 0x0006 90 01 90 01 03 00 00 00 00 00 00 00 00 07 00"))
        XCTAssertTrue(lines.contains("  hciconfig hci2 up"))
        XCTAssertTrue(out.contains("00010203-0405-0607-0809-0a0b0c0d0e0f"))
        XCTAssertTrue(out.contains("0x004c (Apple)"))
    }
}
