import XCTest
@testable import BeaconKit

/// The bytes on air of every frame (SPEC §3), checked against vectors written out by hand from
/// the published formats (AltBeacon spec, Apple's iBeacon layout, google/eddystone
/// protocol-specification), never computed by the encoders under test.
final class FrameTests: XCTestCase {
    static let uuid = bytes("2f234454 cf6d 4a0f adf2 f4911ba9ffa6")
    static let namespace = bytes("edd1ebeac04e5defa017")
    static let instance = bytes("0123456789ab")

    static let altbeacon = AltBeaconFrame(BeaconIdentity(uuid: uuid, major: 1, minor: 2, power: -59))
    static let ibeacon = IBeaconFrame(uuid: uuid, major: 1, minor: 2, power: -59)
    static let overflow = OverflowAreaFrame(major: 1, minor: 2)
    static let uid = EddystoneUIDFrame(namespace: namespace, instance: instance, power0m: -18)
    static let url = EddystoneURLFrame(encoded: bytes("01 6578616d706c65 00"), power0m: -18)   // https://www.example.com/
    static let telemetry = Telemetry(uptimeDeciseconds: 3600, advertisingCount: 10_000, temperature: 0x1980, batteryMillivolts: 3000)

    // Hand-written golden vectors.
    static let altbeaconHex = "020106 1bff 1801 beac 2f234454cf6d4a0fadf2f4911ba9ffa6 0001 0002 c5 00"
    static let ibeaconHex = "020106 1aff 4c00 0215 2f234454cf6d4a0fadf2f4911ba9ffa6 0001 0002 c5"
    // Overflow Area, position 0: flags, length 0x14, Apple 4c00, type 01; then the 16-byte area:
    // 01 (bit 0), aa (matching byte), major 0001, minor 0002, ten bytes of 00.
    static let overflowHex = "020106 14ff 4c00 01 01 aa 0001 0002 00000000000000000000"
    static let uidHex = "020106 0303aafe 1716aafe 00 ee edd1ebeac04e5defa017 0123456789ab 0000"
    static let urlHex = "020106 0303aafe 0e16aafe 10 ee 01 6578616d706c65 00"
    static let tlmHex = "020106 0303aafe 1116aafe 20 00 0bb8 1980 00002710 00000e10"
    static let tlmZeroHex = "020106 0303aafe 1116aafe 20 00 0000 8000 00000000 00000000"

    /// Every frame type with a valid payload of it.
    static let samples: [(frame: any BeaconFrame, hex: String)] = [
        (altbeacon, altbeaconHex), (ibeacon, ibeaconHex), (overflow, overflowHex), (uid, uidHex), (url, urlHex),
        (EddystoneTLMFrame(), tlmHex),
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

    func testOverflowAreaGolden() {
        XCTAssertEqual(air(Self.overflow), bytes(Self.overflowHex).hexText)
        XCTAssertEqual(bytes(Self.overflowHex).count, 24)
        XCTAssertEqual(hexString(Self.overflow.overflowArea), "01aa0001000200000000000000000000")
        // Another matching byte and numbers with every byte distinct (big-endian).
        let other = OverflowAreaFrame(major: 0xabcd, minor: 0xef01, matchingByte: 0x5a)
        XCTAssertEqual(air(other), bytes("020106 14ff 4c00 01 01 5a abcd ef01 00000000000000000000").hexText)
        let edge = OverflowAreaFrame(major: 0xffff, minor: 0, matchingByte: 0)
        XCTAssertEqual(air(edge), bytes("020106 14ff 4c00 01 01 00 ffff 0000 00000000000000000000").hexText)
        // Position 1 (the reference app's other position; the daemon sends 0): matching byte at
        // byte 9 of the area, the payload at 10-13, bit 0 still set.
        let p1 = OverflowAreaFrame(major: 1, minor: 2, position: 1)
        XCTAssertEqual(air(p1), bytes("020106 14ff 4c00 01 01 0000000000 000000 aa 0001 0002 0000").hexText)
        XCTAssertEqual(OverflowAreaFrame(major: 1, minor: 2, position: 7).position, 0)
        XCTAssertEqual(Self.overflow.fields, [FrameField("matching_byte", "170", number: true, text: "0xaa"), FrameField("major", "1", number: true),
                                              FrameField("minor", "2", number: true), FrameField("position", "0", number: true)])
        XCTAssertEqual(Self.overflow.fields.first?.text, "0xaa")
    }

    func testOverflowAreaDecodesEitherPosition() throws {
        let p0 = try XCTUnwrap(OverflowAreaFrame.decode(bytes(Self.overflowHex)[...]))
        XCTAssertEqual(p0, Self.overflow)
        let p1 = try XCTUnwrap(OverflowAreaFrame.decode(bytes("020106 14ff 4c00 01 01 0000000000 000000 5a 1234 5678 0000")[...]))
        XCTAssertEqual(p1, OverflowAreaFrame(major: 0x1234, minor: 0x5678, matchingByte: 0x5a, position: 1))
        // As an iPhone sends it: no flags AD, other apps' hashed service bits around the payload
        // (bit 0 of byte 0 among others), and inside a slice that does not start at 0.
        let busy = bytes("0000 14ff 4c00 01 83 aa 0001 0002 40 00 10 00 00 00 00 00 00 80")
        XCTAssertEqual(OverflowAreaFrame.decode(busy[2...]), Self.overflow)
        let busy1 = bytes("14ff 4c00 01 01 0000000000 08 00 00 aa 0007 0009 00 01")
        XCTAssertEqual(OverflowAreaFrame.decode(busy1[...]), OverflowAreaFrame(major: 7, minor: 9, position: 1))
        // Position 0 wins while anything of it is set, even with byte 9 set too.
        let both = bytes("14ff 4c00 01 01 00 0000 0001 000000 aa 0001 0002 0000")
        XCTAssertEqual(OverflowAreaFrame.decode(both[...]), OverflowAreaFrame(major: 0, minor: 1, matchingByte: 0))
        // Matching byte 0 with major and minor 0 is position 0 (both positions empty).
        XCTAssertEqual(OverflowAreaFrame.decode(bytes("14ff 4c00 01 01 000000000000000000000000000000")[...]),
                       OverflowAreaFrame(major: 0, minor: 0, matchingByte: 0))
    }

    func testOverflowAreaRefusesLookalikes() {
        // Bit 0 clear (an iPhone's overflow area that is not the reference app's), another
        // company, another Apple type (02: iBeacon's), one byte short or long.
        XCTAssertNil(OverflowAreaFrame.decode(bytes("020106 14ff 4c00 01 00 aa 0001 0002 00000000000000000000")[...]))
        XCTAssertNil(OverflowAreaFrame.decode(bytes("020106 14ff 4c00 01 fe aa 0001 0002 00000000000000000000")[...]))
        XCTAssertNil(OverflowAreaFrame.decode(bytes("020106 14ff 4d00 01 01 aa 0001 0002 00000000000000000000")[...]))
        XCTAssertNil(OverflowAreaFrame.decode(bytes("020106 14ff 4c00 02 01 aa 0001 0002 00000000000000000000")[...]))
        XCTAssertNil(OverflowAreaFrame.decode(bytes("020106 13ff 4c00 01 01 aa 0001 0002 000000000000000000")[...]))
        XCTAssertNil(OverflowAreaFrame.decode(bytes("020106 15ff 4c00 01 01 aa 0001 0002 0000000000000000000000")[...]))
        XCTAssertNil(OverflowAreaFrame.decode(bytes("020106 14fe 4c00 01 01 aa 0001 0002 00000000000000000000")[...]))
        // iBeacon is not an overflow area, nor the other way round.
        XCTAssertNil(OverflowAreaFrame.decode(bytes(Self.ibeaconHex)[...]))
        XCTAssertNil(IBeaconFrame.decode(bytes(Self.overflowHex)[...]))
        XCTAssertEqual(BeaconFrames.decode(bytes(Self.overflowHex)[...]).map(\.name), ["overflow-area"])
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
        XCTAssertEqual(BeaconFrames.names, ["altbeacon", "ibeacon", "overflow-area", "eddystone-uid", "eddystone-url", "eddystone-tlm"])
        XCTAssertEqual(Self.samples.map(\.frame.name), BeaconFrames.names)
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
        XCTAssertEqual(OverflowAreaFrame.decode(bytes(Self.overflowHex)[...]), Self.overflow)
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
            let e = try EddystoneURLFrame.encode(u).get()
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
