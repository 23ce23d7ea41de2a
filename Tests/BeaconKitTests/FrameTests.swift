import XCTest
@testable import BeaconKit

/// Bytes from hex written by hand; spaces are for the reader.
func bytes(_ hex: String) -> [UInt8] {
    let digits = Array(hex.utf8.filter { $0 != UInt8(ascii: " ") })
    precondition(digits.count % 2 == 0, "odd hex: \(hex)")
    func nibble(_ c: UInt8) -> UInt8 {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return c - UInt8(ascii: "a") + 10
        default: preconditionFailure("not hex: \(hex)")
        }
    }
    return stride(from: 0, to: digits.count, by: 2).map { nibble(digits[$0]) << 4 | nibble(digits[$0 + 1]) }
}

/// xorshift64 (Marsaglia): a seeded, reproducible generator, no Foundation.
struct XorShift64: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed == 0 ? 0x9E37_79B9_7F4A_7C15 : seed }
    mutating func next() -> UInt64 {
        state ^= state << 13
        state ^= state >> 7
        state ^= state << 17
        return state
    }
}

/// The bytes on air of every frame (SPEC §3), checked against vectors written out by hand from
/// the published formats (AltBeacon spec, Apple's iBeacon layout, google/eddystone
/// protocol-specification), never computed by the encoders under test.
final class FrameTests: XCTestCase {
    static let uuid = bytes("2f234454 cf6d 4a0f adf2 f4911ba9ffa6")
    static let namespace = bytes("edd1ebeac04e5defa017")
    static let instance = bytes("0123456789ab")

    static let altbeacon = AltBeaconFrame(BeaconIdentity(uuid: uuid, major: 1, minor: 2, power: -59))
    static let ibeacon = IBeaconFrame(uuid: uuid, major: 1, minor: 2, power: -59)
    static let uid = EddystoneUIDFrame(namespace: namespace, instance: instance, power0m: -18)
    static let url = EddystoneURLFrame(encoded: bytes("01 6578616d706c65 00"), power0m: -18)   // https://www.example.com/
    static let telemetry = Telemetry(uptimeDeciseconds: 3600, advertisingCount: 10_000, temperature: 0x1980, batteryMillivolts: 3000)

    // Hand-written golden vectors.
    static let altbeaconHex = "020106 1bff 1801 beac 2f234454cf6d4a0fadf2f4911ba9ffa6 0001 0002 c5 00"
    static let ibeaconHex = "020106 1aff 4c00 0215 2f234454cf6d4a0fadf2f4911ba9ffa6 0001 0002 c5"
    static let uidHex = "020106 0303aafe 1716aafe 00 ee edd1ebeac04e5defa017 0123456789ab 0000"
    static let urlHex = "020106 0303aafe 0e16aafe 10 ee 01 6578616d706c65 00"
    static let tlmHex = "020106 0303aafe 1116aafe 20 00 0bb8 1980 00002710 00000e10"
    static let tlmZeroHex = "020106 0303aafe 1116aafe 20 00 0000 8000 00000000 00000000"

    /// Every frame type with a valid payload of it.
    static let samples: [(frame: any BeaconFrame, hex: String)] = [
        (altbeacon, altbeaconHex), (ibeacon, ibeaconHex), (uid, uidHex), (url, urlHex), (EddystoneTLMFrame(), tlmHex),
    ]

    func air(_ f: any BeaconFrame, _ t: Telemetry = FrameTests.telemetry) -> String { hexString(f.advertisingData(t)) }

    // MARK: - Golden vectors

    func testAltBeaconGolden() {
        XCTAssertEqual(air(Self.altbeacon), bytes(Self.altbeaconHex).hexText)
        XCTAssertEqual(bytes(Self.altbeaconHex).count, 31)
        let other = AltBeaconFrame(BeaconIdentity(uuid: Self.uuid, major: 0xabcd, minor: 0x0102, power: -127, companyID: 0x004c, reserved: 0xfe))
        XCTAssertEqual(air(other), bytes("020106 1bff 4c00 beac 2f234454cf6d4a0fadf2f4911ba9ffa6 abcd 0102 81 fe").hexText)
    }

    func testIBeaconGolden() {
        XCTAssertEqual(air(Self.ibeacon), bytes(Self.ibeaconHex).hexText)
        XCTAssertEqual(bytes(Self.ibeaconHex).count, 30)
        let edge = IBeaconFrame(uuid: [UInt8](repeating: 0xff, count: 16), major: 0xffff, minor: 0, power: 0)
        XCTAssertEqual(air(edge), bytes("020106 1aff 4c00 0215 ffffffffffffffffffffffffffffffff ffff 0000 00").hexText)
        // A malformed UUID never misaligns the frame.
        XCTAssertEqual(IBeaconFrame(uuid: [1, 2], major: 1, minor: 2, power: -1).advertisingData(.zero).count, 30)
        XCTAssertEqual(Self.ibeacon.fields, [FrameField("uuid", "2f234454-cf6d-4a0f-adf2-f4911ba9ffa6"), FrameField("major", "1", number: true),
                                             FrameField("minor", "2", number: true), FrameField("power", "-59", number: true)])
    }

    func testEddystoneUIDGolden() {
        XCTAssertEqual(air(Self.uid), bytes(Self.uidHex).hexText)
        XCTAssertEqual(bytes(Self.uidHex).count, 31)
        let hot = EddystoneUIDFrame(namespace: [UInt8](repeating: 0xaa, count: 10), instance: [UInt8](repeating: 0x55, count: 6), power0m: 20)
        XCTAssertEqual(air(hot), bytes("020106 0303aafe 1716aafe 00 14 aaaaaaaaaaaaaaaaaaaa 555555555555 0000").hexText)
        XCTAssertEqual(Self.uid.fields, [FrameField("namespace", "edd1ebeac04e5defa017"), FrameField("instance", "0123456789ab"),
                                         FrameField("power_0m", "-18", number: true)])
    }

    func testEddystoneURLGolden() {
        XCTAssertEqual(air(Self.url), bytes(Self.urlHex).hexText)
        XCTAssertEqual(Self.url.url, "https://www.example.com/")
        XCTAssertEqual(Self.url.fields, [FrameField("url", "https://www.example.com/"), FrameField("power_0m", "-18", number: true)])
        // The longest URL: 17 encoded bytes, the whole 31-byte payload.
        let longest = EddystoneURLFrame(encoded: [0x03] + Array("abcdefghijklmnopq".utf8), power0m: -20)
        XCTAssertEqual(air(longest), bytes("020106 0303aafe 1716aafe 10 ec 03 6162636465666768696a6b6c6d6e6f7071").hexText)
        XCTAssertEqual(longest.advertisingData(.zero).count, 31)
    }

    func testEddystoneTLMGolden() {
        XCTAssertEqual(air(EddystoneTLMFrame()), bytes(Self.tlmHex).hexText)
        XCTAssertEqual(air(EddystoneTLMFrame(), .zero), bytes(Self.tlmZeroHex).hexText)
        XCTAssertEqual(bytes(Self.tlmHex).count, 25)
        // Negative temperature: -1.25 °C is 0xfec0 in 8.8; the largest counters.
        let cold = Telemetry(uptimeDeciseconds: .max, advertisingCount: .max, temperature: -320)
        XCTAssertEqual(air(EddystoneTLMFrame(), cold), bytes("020106 0303aafe 1116aafe 20 00 0000 fec0 ffffffff ffffffff").hexText)
        XCTAssertTrue(EddystoneTLMFrame().carriesTelemetry)
        for (f, _) in Self.samples where !(f is EddystoneTLMFrame) { XCTAssertFalse(f.carriesTelemetry, f.name) }
    }

    func testNamesAndOrder() {
        XCTAssertEqual(BeaconFrames.names, ["altbeacon", "ibeacon", "eddystone-uid", "eddystone-url", "eddystone-tlm"])
        XCTAssertEqual(Self.samples.map(\.frame.name), BeaconFrames.names)
    }

    // MARK: - Telemetry

    func testFixed88() {
        XCTAssertEqual(Telemetry.fixed88(millidegrees: 25_500), 0x1980)
        XCTAssertEqual(Telemetry.fixed88(millidegrees: 0), 0)
        XCTAssertEqual(Telemetry.fixed88(millidegrees: 1_000), 0x0100)
        XCTAssertEqual(Telemetry.fixed88(millidegrees: 500), 0x0080)
        XCTAssertEqual(Telemetry.fixed88(millidegrees: -1_250), -320)
        XCTAssertEqual(Telemetry.fixed88(millidegrees: 45_678), 0x2dad)   // 11693.568, truncated
        XCTAssertEqual(Telemetry.fixed88(millidegrees: 127_999), 0x7fff)
        XCTAssertEqual(Telemetry.fixed88(millidegrees: 200_000), 0x7fff)
        // Clamped, never 0x8000 (that says "not supported"), and no overflow on absurd readings.
        XCTAssertEqual(Telemetry.fixed88(millidegrees: -200_000), -0x7fff)
        XCTAssertEqual(Telemetry.fixed88(millidegrees: -128_000), -0x7fff)
        XCTAssertEqual(Telemetry.fixed88(millidegrees: .max), 0x7fff)
        XCTAssertEqual(Telemetry.fixed88(millidegrees: .min), -0x7fff)
        XCTAssertEqual(Telemetry.fixed88(millidegrees: Int64.max / 256 + 1), 0x7fff)
    }

    func testTLMNotSupportedAndFields() throws {
        XCTAssertEqual(EddystoneTLMFrame.temperatureNotSupported, 0x8000)
        let none = try XCTUnwrap(EddystoneTLMFrame.decode(bytes(Self.tlmZeroHex)[...]))
        XCTAssertNil(none.received?.temperature)
        XCTAssertEqual(none.fields, [FrameField("battery_mv", "null", number: true), FrameField("temperature_c", "null", number: true),
                                     FrameField("adv_count", "0", number: true), FrameField("uptime_s", "0.0", number: true)])
        let full = try XCTUnwrap(EddystoneTLMFrame.decode(bytes(Self.tlmHex)[...]))
        XCTAssertEqual(full.received, Self.telemetry)
        XCTAssertEqual(full.fields, [FrameField("battery_mv", "3000", number: true), FrameField("temperature_c", "25.50", number: true),
                                     FrameField("adv_count", "10000", number: true), FrameField("uptime_s", "360.0", number: true)])
        XCTAssertEqual(EddystoneTLMFrame.celsius(-320), "-1.25")
        XCTAssertEqual(EddystoneTLMFrame.celsius(0x0080), "0.50")
        XCTAssertEqual(EddystoneTLMFrame.celsius(0x0005), "0.01")
        XCTAssertEqual(EddystoneTLMFrame.celsius(-0x7fff), "-127.99")
        // Only version 0 (unencrypted) is read; 0x01 is encrypted TLM.
        var encrypted = bytes(Self.tlmHex); encrypted[12] = 0x01
        XCTAssertNil(EddystoneTLMFrame.decode(encrypted[...]))
        // The frame the daemon sends describes itself without numbers.
        XCTAssertEqual(EddystoneTLMFrame().fields.map(\.key), ["telemetry"])
    }

    // MARK: - Eddystone-URL encoding

    func enc(_ url: String) -> Result<[UInt8], EddystoneURLFrame.EncodingError> { EddystoneURLFrame.encode(url) }

    func testURLSchemes() {
        XCTAssertEqual(enc("http://www.a"), .success(bytes("00 61")))
        XCTAssertEqual(enc("https://www.a"), .success(bytes("01 61")))
        XCTAssertEqual(enc("http://a"), .success(bytes("02 61")))
        XCTAssertEqual(enc("https://a"), .success(bytes("03 61")))
        // The longest scheme wins: never "https://" followed by "www." spelled out.
        XCTAssertEqual(enc("https://www.example.com/"), .success(bytes("01 6578616d706c65 00")))
        XCTAssertEqual(enc("http://www.example.com/"), .success(bytes("00 6578616d706c65 00")))
        XCTAssertEqual(enc("http://www"), .success(bytes("02 777777")))
        for bad in ["HTTP://a", "Http://a", "HTTPS://www.a", "https:/a", "ftp://a", "a.com", "", " http://a", "www.a.com", "httpss://a"] {
            XCTAssertEqual(enc(bad), .failure(.scheme), bad)
        }
    }

    func testURLExpansionCodes() {
        let expansions = [".com/", ".org/", ".edu/", ".net/", ".info/", ".biz/", ".gov/",
                          ".com", ".org", ".edu", ".net", ".info", ".biz", ".gov"]
        for (code, text) in expansions.enumerated() {
            XCTAssertEqual(enc("http://a" + text), .success([0x02, 0x61, UInt8(code)]), text)
            // Decoded back to the same text.
            XCTAssertEqual(EddystoneURLFrame(encoded: [0x02, 0x61, UInt8(code)], power0m: 0).url, "http://a" + text)
        }
        // The slash form first; the bare form when no slash follows; in the middle too.
        XCTAssertEqual(enc("https://a.com/b.org"), .success(bytes("03 61 00 62 08")))
        XCTAssertEqual(enc("https://a.infox"), .success(bytes("03 61 0b 78")))
        XCTAssertEqual(enc("https://a.co"), .success(bytes("03 61 2e 63 6f")))
        XCTAssertEqual(enc("https://www.b.gov/x?y=1#z"), .success(bytes("01 62 06 78 3f 793d31 23 7a")))
    }

    func testURLLength() {
        // 17 encoded bytes after the scheme: accepted; 18: refused, with the count.
        XCTAssertEqual(enc("https://abcdefghijklmnopq"), .success([0x03] + Array("abcdefghijklmnopq".utf8)))
        XCTAssertEqual(enc("https://abcdefghijklmnopqr"), .failure(.tooLong(encodedBytes: 18)))
        // Expansions count one byte each.
        XCTAssertEqual(enc("https://www.abcdefghijklmnop.com/"), .success([0x01] + Array("abcdefghijklmnop".utf8) + [0x00]))
        XCTAssertEqual(enc("https://www.abcdefghijklmnopq.com/"), .failure(.tooLong(encodedBytes: 18)))
        XCTAssertEqual(enc("http://a.com/a.com/a.com/a.com/a.com/a.com/a.com/a.com/a.com/"), .failure(.tooLong(encodedBytes: 18)))
        XCTAssertEqual(enc("http://"), .success([0x02]))
    }

    func testURLCharacters() {
        XCTAssertEqual(enc("http://a b"), .failure(.character(offset: 8)))
        XCTAssertEqual(enc("https://caf\u{e9}.fr"), .failure(.character(offset: 11)))
        XCTAssertEqual(enc("https://\u{1F600}"), .failure(.character(offset: 8)))
        XCTAssertEqual(enc("http://a\tb"), .failure(.character(offset: 8)))
        XCTAssertEqual(enc("http://a\u{7f}"), .failure(.character(offset: 8)))
        XCTAssertEqual(enc("http://a\n"), .failure(.character(offset: 8)))
        XCTAssertEqual(enc("http://a\u{0}"), .failure(.character(offset: 8)))
        // Printable ASCII is all fine, quotes and backslashes included.
        XCTAssertEqual(enc("http://\"\\'~!"), .success([0x02, 0x22, 0x5c, 0x27, 0x7e, 0x21]))
    }

    func testDecodedURLTextIsSafe() {
        // Any nearby device can send these: reserved codes and bytes outside printable ASCII.
        let odd = EddystoneURLFrame(encoded: [0x03, 0x0e, 0x20, 0x22, 0x5c, 0x7f, 0xff, 0x07], power0m: 0)
        XCTAssertEqual(odd.url, "https://\\x0e\\x20\"\\\\x7f\\xff.com")
        XCTAssertFalse(odd.url.unicodeScalars.contains { $0.value < 0x20 || $0.value >= 0x7f })
        XCTAssertEqual(EddystoneURLFrame(encoded: [], power0m: 0).url, "")
        XCTAssertEqual(EddystoneURLFrame(encoded: [0x04, 0x61], power0m: 0).url, "")
    }

    // MARK: - Decoding

    func testRoundTrips() throws {
        for (frame, hex) in Self.samples {
            let found = BeaconFrames.decode(bytes(hex)[...])
            XCTAssertEqual(found.map(\.name), [frame.name], hex)
            XCTAssertEqual(found.first.map { hexString($0.advertisingData(Self.telemetry)) }, bytes(hex).hexText, frame.name)
        }
        XCTAssertEqual(AltBeaconFrame.decode(bytes(Self.altbeaconHex)[...]), Self.altbeacon)
        XCTAssertEqual(IBeaconFrame.decode(bytes(Self.ibeaconHex)[...]), Self.ibeacon)
        XCTAssertEqual(EddystoneUIDFrame.decode(bytes(Self.uidHex)[...]), Self.uid)
        XCTAssertEqual(EddystoneURLFrame.decode(bytes(Self.urlHex)[...]), Self.url)
        XCTAssertEqual(EddystoneTLMFrame.decode(bytes(Self.tlmHex)[...]), EddystoneTLMFrame(received: Self.telemetry))
        // Eddystone-UID without the two reserved bytes (as some beacons send it).
        let short = bytes("020106 0303aafe 1516aafe 00 ee edd1ebeac04e5defa017 0123456789ab")
        XCTAssertEqual(EddystoneUIDFrame.decode(short[...]), Self.uid)
        // The Eddystone frames without the service UUID list, and within a larger buffer (a slice
        // whose indices do not start at 0), followed by zero padding.
        let bare = bytes("020106 1716aafe 00 ee edd1ebeac04e5defa017 0123456789ab 0000")
        XCTAssertEqual(EddystoneUIDFrame.decode(bare[...]), Self.uid)
        let padded = [0xee, 0xee] + bytes(Self.urlHex) + [0, 0, 0]
        XCTAssertEqual(EddystoneURLFrame.decode(padded[2...]), Self.url)
        XCTAssertEqual(IBeaconFrame.decode((bytes("0000") + bytes(Self.ibeaconHex) + [0])[2...]), Self.ibeacon)
        // Every URL of the encoding tests survives the trip.
        for u in ["http://www.a", "https://a.com/b.org", "https://abcdefghijklmnopq", "http://\"\\'~!", "https://www.b.gov/x?y=1#z"] {
            let e = try enc(u).get()
            let f = try XCTUnwrap(EddystoneURLFrame.decode(EddystoneURLFrame(encoded: e, power0m: -3).advertisingData(.zero)[...]))
            XCTAssertEqual(f.url, u)
            XCTAssertEqual(f.power0m, -3)
        }
    }

    func testDecodersRefuseLookalikes() {
        // iBeacon with a wrong company, type or length; AltBeacon's layout is not an iBeacon.
        for (at, value) in [(5, UInt8(0x4d)), (6, 0x01), (7, 0x01), (8, 0x16)] {
            var b = bytes(Self.ibeaconHex); b[at] = value
            XCTAssertNil(IBeaconFrame.decode(b[...]), "\(at)")
        }
        XCTAssertNil(IBeaconFrame.decode(bytes(Self.altbeaconHex)[...]))
        XCTAssertNil(AltBeaconFrame.decode(bytes(Self.ibeaconHex)[...]))
        // Eddystone with another service UUID, another frame type, a bad length or scheme.
        var svc = bytes(Self.uidHex); svc[10] = 0xfd
        XCTAssertTrue(BeaconFrames.decode(svc[...]).isEmpty)
        var eid = bytes(Self.uidHex); eid[11] = 0x30
        XCTAssertTrue(BeaconFrames.decode(eid[...]).isEmpty)
        XCTAssertNil(EddystoneUIDFrame.decode(bytes("020106 0303aafe 1616aafe 00 ee edd1ebeac04e5defa017 0123456789ab 00")[...]))
        XCTAssertNil(EddystoneURLFrame.decode(bytes("020106 0303aafe 0516aafe 10 ee")[...]))
        XCTAssertNil(EddystoneURLFrame.decode(bytes("020106 0303aafe 0716aafe 10 ee 04 61")[...]))
        XCTAssertNil(EddystoneURLFrame.decode(bytes("020106 0303aafe 1816aafe 10 ee 03 6162636465666768696a6b6c6d6e6f707172")[...]))
        XCTAssertNil(EddystoneTLMFrame.decode(bytes("020106 0303aafe 1016aafe 20 00 0000 8000 00000000 000000")[...]))
    }

    /// Every cut of every valid frame: nothing decoded (each cut leaves an AD structure running
    /// off the end or missing), and no trap.
    func testEveryPrefixDecodesNothing() {
        for (frame, hex) in Self.samples {
            let b = bytes(hex)
            for cut in 0..<b.count {
                let found = BeaconFrames.decode(b[..<cut])
                XCTAssertTrue(found.isEmpty, "\(frame.name) cut at \(cut): \(found.map(\.name))")
                // The same prefix at an offset inside a larger array.
                _ = BeaconFrames.decode(([0x55] + b)[1..<(cut + 1)])
            }
        }
    }

    /// Random mutations of valid frames (changed, inserted, removed bytes): no trap, and what
    /// does decode encodes back to a payload that decodes to the same fields.
    func testRandomMutationsNeverTrap() {
        var g = XorShift64(seed: 0x5eed_beac_0118_2f23)
        var decoded = 0
        for (_, hex) in Self.samples {
            let valid = bytes(hex)
            for _ in 0..<4000 {
                var b = valid
                for _ in 0...Int.random(in: 0...3, using: &g) {
                    switch Int.random(in: 0...5, using: &g) {
                    case 0 where !b.isEmpty: b.remove(at: Int.random(in: 0..<b.count, using: &g))
                    case 1: b.insert(UInt8.random(in: 0...255, using: &g), at: Int.random(in: 0...b.count, using: &g))
                    case 2 where !b.isEmpty:
                        // Length bytes are the interesting ones: off by one.
                        let i = Int.random(in: 0..<b.count, using: &g)
                        b[i] = Bool.random(using: &g) ? b[i] &+ 1 : b[i] &- 1
                    case 3: b = Array(b.prefix(Int.random(in: 0...b.count, using: &g)))
                    case _ where !b.isEmpty: b[Int.random(in: 0..<b.count, using: &g)] = UInt8.random(in: 0...255, using: &g)
                    default: break
                    }
                }
                for f in BeaconFrames.decode(b[...]) {
                    decoded += 1
                    let again = BeaconFrames.decode(f.advertisingData(.zero)[...]).filter { $0.name == f.name }
                    XCTAssertEqual(again.count, 1, "\(f.name) from \(hexString(b))")
                    if f.name != EddystoneTLMFrame.name { XCTAssertEqual(again.first?.fields, f.fields, hexString(b)) }
                    XCTAssertLessThanOrEqual(f.advertisingData(Self.telemetry).count, 31)
                }
            }
        }
        // Random bytes, including long ones and AD structures claiming more than is there.
        for _ in 0..<4000 {
            let n = Int.random(in: 0...80, using: &g)
            let b = (0..<n).map { _ in UInt8.random(in: 0...255, using: &g) }
            for f in BeaconFrames.decode(b[...]) { _ = f.fields; _ = f.advertisingData(.zero) }
            _ = adStructures(b[...])
        }
        XCTAssertGreaterThan(decoded, 1000)   // the mutations do leave many valid frames
    }

    func testADStructures() {
        let ads = adStructures(bytes(Self.uidHex)[...])
        XCTAssertEqual(ads.map(\.type), [0x01, 0x03, 0x16])
        XCTAssertEqual(ads.map { $0.data.count }, [1, 2, 22])
        XCTAssertEqual(adStructures(bytes("020106 00 0303aafe")[...]).map(\.type), [0x01])   // padding ends it
        XCTAssertEqual(adStructures(bytes("020106 05ff0102")[...]).map(\.type), [0x01])      // runs off the end
        XCTAssertTrue(adStructures([][...]).isEmpty)
        XCTAssertTrue(adStructures([0x01][...]).isEmpty)
        XCTAssertEqual(adStructures([0x01, 0x09][...]).map { $0.data.count }, [0])
    }
}

extension Array where Element == UInt8 {
    var hexText: String { hexString(self) }
}

/// `[ibeacon]`, `[eddystone]`, `beacon.altbeacon` and `bluetooth.rotation_ms` (SPEC §2).
final class FrameConfigTests: XCTestCase {
    static let eddystoneUID = "[eddystone]\nnamespace = \"edd1ebeac04e5defa017\"\ninstance = \"0123456789ab\"\n"

    func frames(_ text: String, file: StaticString = #filePath, line: UInt = #line) -> [any BeaconFrame] {
        config(text, file: file, line: line)?.frames.map(\.frame) ?? []
    }

    func testDefaultIsAltBeaconAlone() throws {
        let c = try XCTUnwrap(config(minimalBeacon))
        XCTAssertEqual(c.frames.map(\.name), ["altbeacon"])
        XCTAssertEqual(c.frames.first?.frame as? AltBeaconFrame, FrameTests.altbeacon)
        XCTAssertEqual(c.bluetooth.rotationMs, 1000)
    }

    func testIBeaconDefaultsFromBeacon() throws {
        let f = frames(minimalBeacon + "power = -65\n[ibeacon]\n")
        XCTAssertEqual(f.map(\.name), ["altbeacon", "ibeacon"])
        XCTAssertEqual(f.last as? IBeaconFrame, IBeaconFrame(uuid: studyGuideUUID, major: 1, minor: 2, power: -65))
        // Each key on its own overrides only itself.
        XCTAssertEqual(frames(minimalBeacon + "[ibeacon]\nminor = 7\n").last as? IBeaconFrame,
                       IBeaconFrame(uuid: studyGuideUUID, major: 1, minor: 7, power: -59))
        XCTAssertEqual(frames(minimalBeacon + "[ibeacon]\nuuid = 'FFFFFFFF-0000-0000-0000-000000000001'\nmajor = 65535\npower = -127\n").last as? IBeaconFrame,
                       IBeaconFrame(uuid: bytes("ffffffff000000000000000000000001"), major: 65535, minor: 2, power: -127))
        // The company ID and reserved byte of [beacon] are AltBeacon's only.
        XCTAssertEqual(hexString(frames(minimalBeacon + "company_id = 0x1234\nreserved = 9\n[ibeacon]\n").last?.advertisingData(.zero) ?? []),
                       bytes(FrameTests.ibeaconHex).hexText)
        XCTAssertEqual(configError(minimalBeacon + "[ibeacon]\nuuid = 'x'"),
                       "config.toml:7:8: ibeacon.uuid must be 32 hex digits, plain or grouped 8-4-4-4-12 with hyphens (like \"2f234454-cf6d-4a0f-adf2-f4911ba9ffa6\")")
        XCTAssertEqual(configError(minimalBeacon + "[ibeacon]\nmajor = 65536"),
                       "config.toml:7:9: ibeacon.major must be between 0 and 65535, found 65536")
        XCTAssertEqual(configError(minimalBeacon + "[ibeacon]\npower = 1"),
                       "config.toml:7:9: ibeacon.power must be between -127 and 0, found 1")
    }

    func testAllFramesInFixedOrder() throws {
        let f = frames(minimalBeacon + Self.eddystoneUID + "url = 'https://www.example.com/'\ntlm = true\n[ibeacon]\n")
        XCTAssertEqual(f.map(\.name), ["altbeacon", "ibeacon", "eddystone-uid", "eddystone-url", "eddystone-tlm"])
        XCTAssertEqual(f[2] as? EddystoneUIDFrame, FrameTests.uid)
        XCTAssertEqual(f[3] as? EddystoneURLFrame, FrameTests.url)
        XCTAssertEqual(f[4] as? EddystoneTLMFrame, EddystoneTLMFrame())
    }

    func testEddystoneUIDNeedsBoth() {
        XCTAssertEqual(configError(minimalBeacon + "[eddystone]\nnamespace = \"edd1ebeac04e5defa017\""),
                       "config.toml:7:1: eddystone.namespace needs eddystone.instance (12 hex digits) too: the UID frame sends both")
        XCTAssertEqual(configError(minimalBeacon + "[eddystone]\ninstance = \"0123456789ab\"\ntlm = true"),
                       "config.toml:7:1: eddystone.instance needs eddystone.namespace (20 hex digits) too: the UID frame sends both")
        XCTAssertEqual(frames(minimalBeacon + Self.eddystoneUID).map(\.name), ["altbeacon", "eddystone-uid"])
        // Any case.
        XCTAssertEqual(frames(minimalBeacon + "[eddystone]\nnamespace = 'EDD1EBEAC04E5DEFA017'\ninstance = '0123456789AB'").last as? EddystoneUIDFrame,
                       FrameTests.uid)
    }

    func testEddystoneBadHex() {
        let ns = "eddystone.namespace must be exactly 20 hex digits, like \"edd1ebeac04e5defa017\""
        for bad in ["edd1ebeac04e5defa01g", "edd1ebeac04e5defa01", "edd1ebeac04e5defa0171", "", "edd1ebeac0-4e5defa017", " dd1ebeac04e5defa017",
                    "edd1ebeac04e5defa01\u{e9}", "0xd1ebeac04e5defa017"] {
            XCTAssertEqual(configError(minimalBeacon + "[eddystone]\nnamespace = \"\(bad)\"\ninstance = \"0123456789ab\""),
                           "config.toml:7:13: " + ns, bad)
        }
        let inst = "eddystone.instance must be exactly 12 hex digits, like \"0123456789ab\""
        for bad in ["0123456789a", "0123456789abc", "0123456789ax", "01234 6789ab"] {
            XCTAssertEqual(configError(minimalBeacon + "[eddystone]\nnamespace = \"edd1ebeac04e5defa017\"\ninstance = \"\(bad)\""),
                           "config.toml:8:12: " + inst, bad)
        }
        XCTAssertEqual(configError(minimalBeacon + "[eddystone]\nnamespace = 1\ninstance = \"0123456789ab\""),
                       "config.toml:7:13: expected a string for eddystone.namespace, found an integer")
    }

    func testEddystoneURL() {
        XCTAssertEqual(frames(minimalBeacon + "[eddystone]\nurl = 'https://www.example.com/'").last as? EddystoneURLFrame, FrameTests.url)
        XCTAssertEqual(frames(minimalBeacon + "[eddystone]\nurl = 'https://abcdefghijklmnopq'").last.map { hexString($0.advertisingData(.zero)) },
                       bytes("020106 0303aafe 1716aafe 10 ee 03 6162636465666768696a6b6c6d6e6f7071").hexText)
        XCTAssertEqual(configError(minimalBeacon + "[eddystone]\nurl = 'https://abcdefghijklmnopqr'"),
                       "config.toml:7:7: eddystone.url encodes to 18 bytes after its scheme; Eddystone-URL carries at most 17 (use a shorter URL)")
        XCTAssertEqual(configError(minimalBeacon + "[eddystone]\nurl = 'HTTPS://example.com'"),
                       "config.toml:7:7: eddystone.url must start with http:// or https:// (lowercase), like \"https://example.com\"")
        XCTAssertEqual(configError(minimalBeacon + "[eddystone]\nurl = 'https://a b'"),
                       "config.toml:7:7: eddystone.url has a character Eddystone cannot send at byte 10 (only printable ASCII, no spaces)")
        XCTAssertEqual(configError(minimalBeacon + "[eddystone]\nurl = 'https://\u{e9}'"),
                       "config.toml:7:7: eddystone.url has a character Eddystone cannot send at byte 9 (only printable ASCII, no spaces)")
    }

    func testEddystoneWithNoFrameIsRefused() {
        let message = "[eddystone] turns on no frame: set namespace and instance (UID), url (URL) or tlm = true (TLM)"
        XCTAssertTrue(configError(minimalBeacon + "[eddystone]\n").hasSuffix(message), configError(minimalBeacon + "[eddystone]\n"))
        XCTAssertTrue(configError(minimalBeacon + "[eddystone]\npower_0m = 0").hasSuffix(message))
        XCTAssertEqual(configError(minimalBeacon + "[eddystone]\ntlm = false"), "config.toml:6:1: " + message)
        XCTAssertEqual(frames(minimalBeacon + "[eddystone]\ntlm = true").map(\.name), ["altbeacon", "eddystone-tlm"])
        XCTAssertEqual(configError(minimalBeacon + "[eddystone]\ntlm = 1"),
                       "config.toml:7:7: expected a boolean (true or false) for eddystone.tlm, found an integer")
    }

    func testAltBeaconOff() {
        XCTAssertEqual(configError(minimalBeacon + "altbeacon = false"),
                       "config.toml:6:13: beacon.altbeacon = false needs another frame: add an [ibeacon] or [eddystone] table")
        XCTAssertEqual(frames(minimalBeacon + "altbeacon = false\n[ibeacon]\n").map(\.name), ["ibeacon"])
        XCTAssertEqual(frames(minimalBeacon + "altbeacon = false\n[eddystone]\ntlm = true").map(\.name), ["eddystone-tlm"])
        XCTAssertEqual(frames(minimalBeacon + "altbeacon = true").map(\.name), ["altbeacon"])
        XCTAssertEqual(configError(minimalBeacon + "altbeacon = 0"),
                       "config.toml:6:13: expected a boolean (true or false) for beacon.altbeacon, found an integer")
    }

    func testPower0m() {
        func power(_ text: String, file: StaticString = #filePath, line: UInt = #line) -> Int8? {
            (frames(text + "[eddystone]\ntlm = true\nurl = 'http://a'", file: file, line: line).first { $0 is EddystoneURLFrame } as? EddystoneURLFrame)?.power0m
        }
        // beacon.power + 41: the usual 41 dB between 1 m and 0 m.
        XCTAssertEqual(power(minimalBeacon), -18)
        XCTAssertEqual(power(minimalBeacon + "power = -127\n"), -86)
        XCTAssertEqual(power(minimalBeacon + "power = -21\n"), 20)
        XCTAssertEqual(power(minimalBeacon + "power = -20\n"), 20)   // 21 clamped to 20
        XCTAssertEqual(power(minimalBeacon + "power = 0\n"), 20)     // 41 clamped to 20
        XCTAssertEqual(frames(minimalBeacon + "power = 0\n" + Self.eddystoneUID).compactMap { ($0 as? EddystoneUIDFrame)?.power0m }, [20])
        XCTAssertEqual((frames(minimalBeacon + "[eddystone]\nurl = 'http://a'\npower_0m = -100").last as? EddystoneURLFrame)?.power0m, -100)
        XCTAssertEqual((frames(minimalBeacon + "[eddystone]\nurl = 'http://a'\npower_0m = 20").last as? EddystoneURLFrame)?.power0m, 20)
        XCTAssertEqual(configError(minimalBeacon + "[eddystone]\npower_0m = 21\ntlm = true"),
                       "config.toml:7:12: eddystone.power_0m must be between -100 and 20, found 21")
        XCTAssertEqual(configError(minimalBeacon + "[eddystone]\npower_0m = -101\ntlm = true"),
                       "config.toml:7:12: eddystone.power_0m must be between -100 and 20, found -101")
    }

    func testRotationRange() {
        XCTAssertEqual(config(minimalBeacon + "[bluetooth]\nrotation_ms = 100")?.bluetooth.rotationMs, 100)
        XCTAssertEqual(config(minimalBeacon + "[bluetooth]\nrotation_ms = 10_000")?.bluetooth.rotationMs, 10000)
        XCTAssertEqual(configError(minimalBeacon + "[bluetooth]\nrotation_ms = 99"),
                       "config.toml:7:15: bluetooth.rotation_ms must be between 100 and 10000, found 99")
        XCTAssertEqual(configError(minimalBeacon + "[bluetooth]\nrotation_ms = 10001"),
                       "config.toml:7:15: bluetooth.rotation_ms must be between 100 and 10000, found 10001")
    }

    func testUnknownKeysSuggest() {
        XCTAssertEqual(configError(minimalBeacon + "[eddystone]\nnamspace = \"edd1ebeac04e5defa017\"\ninstance = \"0123456789ab\""),
                       "config.toml:7:1: unknown key `eddystone.namspace`; did you mean `eddystone.namespace`?")
        XCTAssertEqual(configError(minimalBeacon + "[eddystone]\nurll = 'https://a'"),
                       "config.toml:7:1: unknown key `eddystone.urll`; did you mean `eddystone.url`?")
        XCTAssertEqual(configError(minimalBeacon + "[eddystone]\ntlm = true\npower0m = 0"),
                       "config.toml:8:1: unknown key `eddystone.power0m`; did you mean `eddystone.power_0m`?")
        XCTAssertEqual(configError(minimalBeacon + "[ibeacon]\nmajr = 1"),
                       "config.toml:7:1: unknown key `ibeacon.majr`; did you mean `ibeacon.major`?")
        XCTAssertEqual(configError(minimalBeacon + "[edystone]\ntlm = true"),
                       "config.toml:6:2: unknown table [edystone]; did you mean [eddystone]?")
        XCTAssertEqual(configError(minimalBeacon + "[eddystone]\ntlm = true\nfoo = 1"),
                       "config.toml:8:1: unknown key `eddystone.foo`; [eddystone] takes namespace, instance, url, tlm, power_0m")
        XCTAssertEqual(configError(minimalBeacon + "[beacon.x]\n").contains("altbeacon"), true)
    }

    /// The typo is the real mistake, not the frame it fails to turn on.
    func testTyposComeBeforeWhatTheyLeaveOut() {
        func all(_ text: String) -> [String] {
            guard case .failure(let e) = ConfigFile.parseAll(Array(text.utf8), path: "c.toml") else { XCTFail("accepted"); return [] }
            return e.all.map(\.headline)
        }
        XCTAssertEqual(all(minimalBeacon + "[eddystone]\nnamespace = \"edd1ebeac04e5defa017\"\ninstanc = \"0123456789ab\""),
                       ["c.toml:8:1: unknown key `eddystone.instanc`; did you mean `eddystone.instance`?"])
        XCTAssertEqual(all(minimalBeacon + "[eddystone]\nnamepsace = \"edd1ebeac04e5defa017\"\ninstance = \"0123456789ab\""),
                       ["c.toml:7:1: unknown key `eddystone.namepsace`; did you mean `eddystone.namespace`?"])
        XCTAssertEqual(all(minimalBeacon + "[eddystone]\nurll = 'https://a'"), [
            "c.toml:7:1: unknown key `eddystone.urll`; did you mean `eddystone.url`?",
            "c.toml:6:1: [eddystone] turns on no frame: set namespace and instance (UID), url (URL) or tlm = true (TLM)",
        ])
        XCTAssertEqual(all(minimalBeacon + "altbeacon = false\n[ibecon]\n"), [
            "c.toml:7:2: unknown table [ibecon]; did you mean [ibeacon]?",
            "c.toml:6:13: beacon.altbeacon = false needs another frame: add an [ibeacon] or [eddystone] table",
        ])
    }
}

/// `altbeacond check` with every frame: each `advertising-data[<name>]:` line, byte for byte.
final class FrameCheckReportTests: XCTestCase {
    func lines(_ text: String, file: StaticString = #filePath, line: UInt = #line) -> [String] {
        guard let c = config(text, file: file, line: line) else { return [] }
        return CheckReport.render(c, path: "/c.toml").split(separator: "\n").map(String.init)
    }

    func testEveryFrameLine() {
        let out = lines(minimalBeacon + FrameConfigTests.eddystoneUID + "url = 'https://www.example.com/'\ntlm = true\n[ibeacon]\nmajor = 7\n")
        let data = out.filter { $0.hasPrefix("advertising-data") }
        XCTAssertEqual(data, [
            "advertising-data: 0201061bff1801beac2f234454cf6d4a0fadf2f4911ba9ffa600010002c500",
            "advertising-data[altbeacon]: 0201061bff1801beac2f234454cf6d4a0fadf2f4911ba9ffa600010002c500",
            "advertising-data[ibeacon]: 0201061aff4c0002152f234454cf6d4a0fadf2f4911ba9ffa600070002c5",
            "advertising-data[eddystone-uid]: 0201060303aafe1716aafe00eeedd1ebeac04e5defa0170123456789ab0000",
            "advertising-data[eddystone-url]: 0201060303aafe0e16aafe10ee016578616d706c6500",
            "advertising-data[eddystone-tlm]: 0201060303aafe1116aafe2000000080000000000000000000",
        ])
        XCTAssertTrue(out.contains("frames:             altbeacon, ibeacon, eddystone-uid, eddystone-url, eddystone-tlm"), out.joined(separator: "\n"))
        XCTAssertTrue(out.contains("  url:              https://www.example.com/"))
        XCTAssertTrue(out.contains("  namespace:        edd1ebeac04e5defa017"))
        // The hand-typed lines of each frame: LE Set Advertising Data, length byte, data, zero padding.
        XCTAssertTrue(out.contains("  hcitool -i hci0 cmd 0x08 0x0008 1e 02 01 06 1a ff 4c 00 02 15 2f 23 44 54 cf 6d 4a 0f ad f2 f4 91 1b a9 ff a6 00 07 00 02 c5 00   # ibeacon"),
                      out.joined(separator: "\n"))
    }

    /// With AltBeacon off, the plain `advertising-data:` line is the first frame on air.
    func testPrimaryLineWithoutAltBeacon() {
        let data = lines(minimalBeacon + "altbeacon = false\n[eddystone]\nurl = 'http://a.org'\n").filter { $0.hasPrefix("advertising-data") }
        XCTAssertEqual(data, ["advertising-data: 0201060303aafe0816aafe10ee026108",
                              "advertising-data[eddystone-url]: 0201060303aafe0816aafe10ee026108"])
    }

    func testAltBeaconAloneHasOneFrameLine() {
        let data = lines(minimalBeacon).filter { $0.hasPrefix("advertising-data") }
        XCTAssertEqual(data, ["advertising-data: 0201061bff1801beac2f234454cf6d4a0fadf2f4911ba9ffa600010002c500",
                              "advertising-data[altbeacon]: 0201061bff1801beac2f234454cf6d4a0fadf2f4911ba9ffa600010002c500"])
    }
}
