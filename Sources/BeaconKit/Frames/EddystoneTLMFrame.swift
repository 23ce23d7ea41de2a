/// Eddystone-TLM (unencrypted, version 0): battery, temperature, advertising count and uptime.
/// Its bytes change while on air: the advertiser refreshes them from `Telemetry`.
public struct EddystoneTLMFrame: TelemetryFrame, ConfigurableFrame, Equatable {
    /// No ID: a scan row per sender, and the monitor reads it as telemetry of the beacon last
    /// heard from the same address.
    public static let traits = FrameTraits(
        name: "eddystone-tlm", model: "Google Eddystone-TLM",
        switchedBy: FrameSwitch(setting: "eddystone_tlm", displayName: "Eddystone-TLM frame", table: "eddystone", key: "tlm", defaultOn: false),
        configHint: "tlm = true (TLM)",
        countingKeys: ["adv_count", "uptime_s"], refreshedOnAir: true,
        notExpectable: "TLM frames carry no ID. Expect the beacon's other frame (eddystone-uid, eddystone-url, ...); its TLM is read from the same address")
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

    /// `[eddystone] tlm = true` (its switch): nothing else to read.
    static func configured(_: inout ConfigValidator, _: TOMLTable, _: FrameConfigContext) -> EddystoneTLMFrame? {
        EddystoneTLMFrame()
    }
}
