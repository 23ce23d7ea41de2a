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

    /// `calibrate`'s line for UID and URL: the TX power at 0 m, the 1 m figure plus the first
    /// metre's loss, within `power_0m`'s range.
    static func calibrationLine(rssiAt1m: Int) -> String {
        let range = ConfigValidator.eddystonePowerRange
        let power = min(Int(range.upperBound), max(Int(range.lowerBound), rssiAt1m + ReferencePower.firstMetreLossDb))
        return "power_0m = \(power)   # [eddystone]"
    }
}
