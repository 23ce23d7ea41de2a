import Glibc
import XCTest
@testable import BeaconKit

/// The frame protocol as a whole: every frame type in `BeaconFrames.types` goes from the config
/// to the air, from the air to a sighting, and from the sighting to the `[expect.NAME]` a monitor
/// matches it by; and no `BeaconFrame` is left out of the registry.
final class FrameProtocolTests: XCTestCase {
    /// Turns on every frame type in `BeaconFrames.types`: a new frame type adds its table here.
    static let everyFrame = """
        [beacon]
        uuid = "2f234454-cf6d-4a0f-adf2-f4911ba9ffa6"
        major = 1
        minor = 2
        [ibeacon]
        major = 7
        [overflow]
        matching_byte = 0x55
        [eddystone]
        namespace = "edd1ebeac04e5defa017"
        instance = "0123456789ab"
        url = "https://www.example.com/x"
        tlm = true

        """
    static let telemetry = Telemetry(uptimeDeciseconds: 3600, advertisingCount: 10_000, temperature: 0x1980, batteryMillivolts: 3000)
    static let sender: [UInt8] = [0x66, 0x55, 0x44, 0x33, 0x22, 0x11]

    func testEveryRegisteredFrameIsConfiguredInRegistryOrder() throws {
        let c = try XCTUnwrap(config(Self.everyFrame))
        XCTAssertEqual(c.frames.map(\.name), BeaconFrames.names, "a new frame type: turn it on in everyFrame")
        XCTAssertEqual(Set(BeaconFrames.names).count, BeaconFrames.types.count, "names are unique")
    }

    /// Encoded as the beacon sends it, decoded as one sighting of the same frame, identified by
    /// the keys an expectation matches (or, without IDs, by the sender's address).
    func testEveryRegisteredFrameRoundTrips() throws {
        let c = try XCTUnwrap(config(Self.everyFrame))
        for configured in c.frames {
            let frame = configured.frame, name = frame.name
            let report = AdvertisingReport(eventType: 3, addressType: 0, address: Self.sender, rssi: -60,
                                           data: frame.advertisingData(Self.telemetry))
            let heard = Sighting.all(in: report, atMs: 0)
            XCTAssertEqual(heard.map(\.type), [name], name)
            guard let s = heard.first else { continue }
            XCTAssertEqual(s.frame.advertisingData(Self.telemetry), frame.advertisingData(Self.telemetry), name)
            if frame.carriesTelemetry {
                XCTAssertEqual((s.frame as? any TelemetryFrame)?.received, Self.telemetry, name)
            } else {
                XCTAssertEqual(s.frame.fields, frame.fields, name)
                XCTAssertFalse(s.frame is any TelemetryFrame, name)
            }
            let keys = type(of: frame).traits.identifyingKeys
            XCTAssertEqual(Set(s.identifyingFields.map(\.key)), Set(keys), name)
            XCTAssertEqual(s.identifyingFields.count + s.otherFields.count, s.frame.fields.count, name)
            if keys.isEmpty {
                XCTAssertEqual(s.key.parts, [.text(s.address)], name)
                XCTAssertTrue(monitorError("[expect.x]\ntype = \"\(name)\"\n").contains("cannot be expected"), name)
                guard frame.carriesTelemetry else { continue }
                // Telemetry goes to the expected beacon last heard from the same sender.
                let lobbyOnly = try XCTUnwrap(monitorConfig(lobbyExpectation)?.expectations)
                var tracker = BeaconTracker(expectations: lobbyOnly, silentAfterMs: 60_000, startMs: 0)
                let lobby = AdvertisingReport(eventType: 3, addressType: 0, address: Self.sender, rssi: -60,
                                              data: try XCTUnwrap(c.frames.first).frame.advertisingData(.zero))
                _ = tracker.record(lobby, atMs: 0, wallSeconds: 0)
                _ = tracker.record(report, atMs: 10, wallSeconds: 0)
                XCTAssertEqual(tracker.states.first?.tlm, TLMReading(Self.telemetry), name)
                continue
            }
            // The expectation written from what scan shows, as a person would copy it.
            var toml = "[expect.x]\ntype = \"\(name)\"\n"
            for f in s.identifyingFields { toml += "\(f.key) = " + (f.isNumber ? f.value : "\"\(f.value)\"") + "\n" }
            let expectation = try XCTUnwrap(monitorConfig(toml)?.expectations.first, name)
            XCTAssertEqual(expectation, Expectation(name: "x", frame: frame), name)
            XCTAssertTrue(expectation.matches(s), name)
            var tracker = BeaconTracker(expectations: [expectation], silentAfterMs: 60_000, startMs: 0)
            XCTAssertEqual(tracker.record(report, atMs: 10, wallSeconds: 0), [.heard(name: "x", first: true)], name)
        }
    }

    /// Reference power, calibration and distance go together; counting and identifying keys are
    /// fields of the frame; the frames with IDs can be expected; only a frame whose bytes follow
    /// the telemetry carries it.
    func testEachFrameTypeIsConsistent() throws {
        let c = try XCTUnwrap(config(Self.everyFrame))
        let other = Telemetry(uptimeDeciseconds: 1, advertisingCount: 1, temperature: nil)
        for configured in c.frames {
            let frame = configured.frame, t = type(of: frame), name = frame.name
            let report = AdvertisingReport(eventType: 3, addressType: 0, address: Self.sender, rssi: -60,
                                           data: frame.advertisingData(Self.telemetry))
            let heard = try XCTUnwrap(Sighting.all(in: report, atMs: 0).first, name)
            XCTAssertEqual(frame.carriesTelemetry, frame.advertisingData(.zero) != frame.advertisingData(other), name)
            XCTAssertEqual(t.traits.calibrationLine != nil, frame.powerAt1m != nil, name)
            XCTAssertEqual(heard.distanceMeters != nil, frame.powerAt1m != nil, name)
            XCTAssertFalse(t.traits.rangedByRSSI, name)
            XCTAssertEqual(t is any ExpectableFrame.Type, !t.traits.identifyingKeys.isEmpty, "expectable: the frames with IDs, \(name)")
            let keys = Set(heard.frame.fields.map(\.key))
            XCTAssertTrue(Set(t.traits.identifyingKeys).isSubset(of: keys), name)
            XCTAssertTrue(Set(t.traits.countingKeys).isSubset(of: keys), name)
            XCTAssertTrue(t.traits.countingKeys.isEmpty || frame.carriesTelemetry, name)
        }
    }

    /// What `calibrate` prints for each frame type with a power, at -63 dBm and at the limits.
    func testCalibrationLines() {
        func line(_ t: any BeaconFrame.Type, _ rssi: Int) -> String? { t.traits.calibrationLine?(rssi) }
        XCTAssertEqual(line(AltBeaconFrame.self, -63), "power = -63   # [beacon]")
        XCTAssertEqual(line(IBeaconFrame.self, 5), "power = 0   # [ibeacon] (or [beacon] when it is the same)")
        XCTAssertEqual(line(EddystoneUIDFrame.self, -63), "power_0m = -22   # [eddystone]")
        XCTAssertEqual(line(EddystoneURLFrame.self, -150), "power_0m = -100   # [eddystone]")
        XCTAssertNil(line(OverflowAreaFrame.self, -63))
        XCTAssertNil(line(EddystoneTLMFrame.self, -63))
        XCTAssertEqual(EddystoneUIDFrame(namespace: [], instance: [], power0m: -18).powerAt1m, -59)
    }

    /// Every `BeaconFrame` declared in BeaconKit is in `BeaconFrames.types`, except the GATT
    /// identity's two, which `[gatt_identity]` and scan's `Sighting.listed` handle. Read from the
    /// sources: Swift cannot list a protocol's conformances at run time.
    func testEveryFrameTypeIsRegistered() throws {
        let notListed: Set<String> = ["IdentityAdvertisement", "HeardGATTIdentity"]
        let registered = Set(BeaconFrames.types.map { String(describing: $0) })
        let declared = try Self.declaredFrameTypes()
        XCTAssertTrue(declared.isSuperset(of: registered), "the scan of the sources missed some: \(declared)")
        for name in declared.subtracting(notListed) {
            XCTAssertTrue(registered.contains(name), "\(name) is a BeaconFrame but not in BeaconFrames.types")
        }
        XCTAssertTrue(notListed.isSubset(of: declared))
    }

    /// The types declared (or extended) to conform to `BeaconFrame`, or to a protocol refining
    /// it (`ExpectableFrame`, ...), in Sources/BeaconKit.
    static func declaredFrameTypes() throws -> Set<String> {
        let tests = "\(#filePath)".split(separator: "/", omittingEmptySubsequences: false).dropLast(3).joined(separator: "/")
        var declarations: [(kind: Substring, name: Substring, inherits: ArraySlice<Substring>)] = []
        for file in try swiftFiles(under: tests + "/Sources/BeaconKit") {
            for line in try XCTUnwrap(readText(file)).split(separator: "\n") where !line.trimmingPrefixSpaces.hasPrefix("//") {
                let words = line.split(whereSeparator: { " ,:{<".contains($0) })
                guard let k = words.firstIndex(where: { ["struct", "enum", "class", "extension", "protocol"].contains($0) }),
                      k + 1 < words.count, line.contains(":") else { continue }
                declarations.append((words[k], words[k + 1], words[(k + 2)...]))
            }
        }
        var frameProtocols: Set<Substring> = ["BeaconFrame"]
        while true {
            let more = declarations.filter { $0.kind == "protocol" && $0.inherits.contains(where: frameProtocols.contains) }.map(\.name)
            if Set(more).isSubset(of: frameProtocols) { break }
            frameProtocols.formUnion(more)
        }
        return Set(declarations.filter { $0.kind != "protocol" && $0.inherits.contains(where: frameProtocols.contains) }.map { String($0.name) })
    }

    static func swiftFiles(under dir: String) throws -> [String] {
        guard let d = opendir(dir) else { throw DirectoryError(errno) }
        defer { closedir(d) }
        var out: [String] = []
        while let e = readdir(d) {
            let name = withUnsafeBytes(of: e.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name.hasPrefix(".") { continue }
            let path = dir + "/" + name
            if name.hasSuffix(".swift") { out.append(path) } else if Int32(e.pointee.d_type) == Int32(DT_DIR) { out += try swiftFiles(under: path) }
        }
        return out
    }

    static func readText(_ path: String) -> String? {
        guard let f = fopen(path, "r") else { return nil }
        defer { fclose(f) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = fread(&buffer, 1, buffer.count, f)
            if n <= 0 { break }
            bytes += buffer[..<n]
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

struct DirectoryError: Error { let code: Int32; init(_ c: Int32) { code = c } }

extension Substring {
    var trimmingPrefixSpaces: Substring { drop { $0 == " " } }
}
