/// Google's Eddystone: a Complete 16-bit Service UUIDs AD naming 0xFEAA, then a Service Data AD
/// for 0xFEAA whose first byte is the frame type (SPEC §3).
enum Eddystone {
    static let serviceUUIDsAD: [UInt8] = [0x03, 0x03, 0xaa, 0xfe]
    static let uid: UInt8 = 0x00, url: UInt8 = 0x10, tlm: UInt8 = 0x20
    /// `[eddystone] enabled`: the UID and URL frames go on and off together (TLM has `tlm` too).
    static let switchedBy = FrameSwitch(setting: "eddystone", displayName: "Eddystone frame", table: "eddystone")

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

    /// The usual loss over the first metre, in dB (Google's own guidance; `power_0m` defaults
    /// from `beacon.power` by it).
    static let firstMetreLossDb = 41

    /// The TX power at 0 m as a 1 m figure: rougher than a power measured at 1 m, but acceptable
    /// for a distance that is a rough guide anyway.
    static func powerAt1m(_ power0m: Int8) -> Int { Int(power0m) - firstMetreLossDb }

    /// `calibrate`'s line for UID and URL: the 1 m figure plus the first metre's loss, within
    /// `power_0m`'s range.
    @Sendable static func calibrationLine(_ rssiAt1m: Int) -> String {
        configLine("power_0m", rssiAt1m + firstMetreLossDb, powerRange, "[eddystone]")
    }

    /// What `power_0m` takes.
    static let powerRange: ClosedRange<Int64> = -100...20

    /// `[eddystone] power_0m`, which UID and URL share; by default `beacon.power` plus the first
    /// metre's loss, within the range.
    static func power0m(_ config: inout ConfigValidator, _ t: TOMLTable, _ b: BeaconIdentity) -> Int8 {
        let derived = min(max(Int64(b.power) + Int64(firstMetreLossDb), powerRange.lowerBound), powerRange.upperBound)
        return Int8(truncatingIfNeeded: config.integer(t, "eddystone", "power_0m", powerRange) ?? derived)
    }
}
