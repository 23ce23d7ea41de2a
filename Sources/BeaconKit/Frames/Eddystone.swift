/// Google's Eddystone: a Complete 16-bit Service UUIDs AD naming 0xFEAA, then a Service Data AD
/// for 0xFEAA whose first byte is the frame type (SPEC §3).
enum Eddystone {
    static let serviceUUIDsAD: [UInt8] = [0x03, 0x03, 0xaa, 0xfe]
    static let uid: UInt8 = 0x00, url: UInt8 = 0x10, tlm: UInt8 = 0x20

    /// The whole payload: flags, the service UUID list, then the service data `body`
    /// (frame type onwards).
    static func advertisingData(_ body: [UInt8]) -> [UInt8] {
        var out = flagsAD
        out += serviceUUIDsAD
        out += [UInt8(truncatingIfNeeded: body.count + 3), 0x16, 0xaa, 0xfe]
        out += body
        return out
    }

    /// The service data for 0xFEAA (frame type onwards) when its frame type is `type`.
    static func serviceData(_ data: ArraySlice<UInt8>, type: UInt8) -> ArraySlice<UInt8>? {
        for ad in adStructures(data) where ad.type == 0x16 && ad.data.count >= 3 {
            let d = ad.data, s = d.startIndex
            if d[s] == 0xaa, d[s + 1] == 0xfe, d[s + 2] == type { return d[(s + 2)...] }
        }
        return nil
    }
}

/// Eddystone-UID: a 10-byte namespace and a 6-byte instance, with the TX power at 0 m.
public struct EddystoneUIDFrame: BeaconFrame, Equatable {
    public static let name = "eddystone-uid"
    public var namespace: [UInt8]
    public var instance: [UInt8]
    public var power0m: Int8

    public init(namespace: [UInt8], instance: [UInt8], power0m: Int8) {
        self.namespace = namespace; self.instance = instance; self.power0m = power0m
    }

    public func advertisingData(_: Telemetry) -> [UInt8] {
        var body: [UInt8] = [Eddystone.uid, UInt8(bitPattern: power0m)]
        body += exactly(10, namespace)
        body += exactly(6, instance)
        body += [0, 0]
        return Eddystone.advertisingData(body)
    }

    public var fields: [FrameField] {
        [FrameField("namespace", hexString(namespace)), FrameField("instance", hexString(instance)), .number("power_0m", power0m)]
    }

    /// 18 bytes of frame, or 20 with the reserved two (both are seen in the wild).
    public static func decode(_ data: ArraySlice<UInt8>) -> EddystoneUIDFrame? {
        guard let d = Eddystone.serviceData(data, type: Eddystone.uid), d.count == 18 || d.count == 20 else { return nil }
        let s = d.startIndex
        return EddystoneUIDFrame(namespace: Array(d[(s + 2)..<(s + 12)]), instance: Array(d[(s + 12)..<(s + 18)]),
                                 power0m: Int8(bitPattern: d[s + 1]))
    }
}

/// Eddystone-TLM (unencrypted, version 0): battery, temperature, advertising count and uptime.
/// Its bytes change while on air: the advertiser refreshes them from `Telemetry`.
public struct EddystoneTLMFrame: BeaconFrame, Equatable {
    public static let name = "eddystone-tlm"
    /// What a received TLM frame said (nil for a frame the daemon sends: it comes from `Telemetry`).
    public var received: Telemetry?

    public init(received: Telemetry? = nil) { self.received = received }

    public static let temperatureNotSupported: UInt16 = 0x8000

    public func advertisingData(_ t: Telemetry) -> [UInt8] {
        let temp = t.temperature.map { UInt16(bitPattern: $0) } ?? Self.temperatureNotSupported
        var body: [UInt8] = [Eddystone.tlm, 0x00]
        body += be16(t.batteryMillivolts)
        body += be16(temp)
        body += be32(t.advertisingCount)
        body += be32(t.uptimeDeciseconds)
        return Eddystone.advertisingData(body)
    }

    public var fields: [FrameField] {
        guard let t = received else { return [FrameField("telemetry", "battery, temperature, count and uptime, filled in on air")] }
        return [
            t.batteryMillivolts == 0 ? FrameField("battery_mv", "null", number: true) : .number("battery_mv", t.batteryMillivolts),
            t.temperature.map { FrameField("temperature_c", Self.celsius($0), number: true) } ?? FrameField("temperature_c", "null", number: true),
            .number("adv_count", t.advertisingCount),
            FrameField("uptime_s", "\(t.uptimeDeciseconds / 10).\(t.uptimeDeciseconds % 10)", number: true),
        ]
    }

    /// 8.8 fixed point as a decimal with two places: 0x1980 -> "25.50".
    static func celsius(_ v: Int16) -> String {
        let hundredths = Int(v) * 100 / 256
        let sign = hundredths < 0 ? "-" : ""
        let a = abs(hundredths)
        return "\(sign)\(a / 100).\(a % 100 < 10 ? "0" : "")\(a % 100)"
    }

    public static func decode(_ data: ArraySlice<UInt8>) -> EddystoneTLMFrame? {
        guard let d = Eddystone.serviceData(data, type: Eddystone.tlm), d.count == 14, d[d.startIndex + 1] == 0x00 else { return nil }
        let temp = readBE16(d, 4)
        return EddystoneTLMFrame(received: Telemetry(
            uptimeDeciseconds: readBE32(d, 10), advertisingCount: readBE32(d, 6),
            temperature: temp == temperatureNotSupported ? nil : Int16(bitPattern: temp),
            batteryMillivolts: readBE16(d, 2)))
    }
}
