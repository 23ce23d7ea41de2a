// The frames beside AltBeacon (SPEC §2, §3): `beacon.altbeacon`, `[ibeacon]`, `[overflow]` and
// `[eddystone]`; and `[gatt_identity]`, which is no frame but is read here beside them.

extension ConfigValidator {
    static let eddystoneDefaultPowerOffset = Int64(Eddystone.firstMetreLossDb)
    static let eddystonePowerRange: ClosedRange<Int64> = -100...20

    /// The frames to send, in `BeaconFrames.types` order; nil (with problems reported) if refused.
    mutating func readFrames(_ beacon: BeaconIdentity, _ tables: [String: TOMLTable]) -> [ConfiguredFrame]? {
        var frames: [ConfiguredFrame] = []
        let altbeacon = tables["beacon"].flatMap { boolean($0, "beacon", "altbeacon") } ?? true
        if altbeacon { frames.append(ConfiguredFrame(AltBeaconFrame(beacon))) }
        let before = problems.count
        // A table with `enabled = false` sends nothing, but its keys are still read and judged:
        // switching it back on (from afar too) must not uncover a mistake.
        let ibeacon = tables["ibeacon"].flatMap { readIBeacon($0, beacon) }
        if let t = tables["ibeacon"], enabled(t, "ibeacon"), let ibeacon { frames.append(ConfiguredFrame(ibeacon)) }
        if let t = tables["overflow"] {
            // Defaults to the iBeacon table's numbers even when that frame is off: switching one
            // frame must not change another.
            let f = readOverflow(t, major: ibeacon?.major ?? beacon.major, minor: ibeacon?.minor ?? beacon.minor)
            if enabled(t, "overflow") { frames.append(ConfiguredFrame(f)) }
        }
        if let t = tables["eddystone"] {
            let on = enabled(t, "eddystone")
            let eddystone = readEddystone(t, beacon, enabled: on)
            if on { frames += eddystone }
        }
        guard problems.count == before else { return nil }
        if frames.isEmpty, let e = tables["beacon"]?.entry("altbeacon") {
            // Ranked as a missing key: a misspelt [ibeacon] or [eddystone] header is the real mistake.
            // Refused with `beacon.advertising = false` too: a config always says what it sends
            // once advertising is on again, so that switching it on cannot be refused.
            let switchedOff = ["ibeacon", "overflow", "eddystone"].filter { tables[$0]?["enabled"] == .bool(false) }
            let turnOn = switchedOff.isEmpty ? "" : " (or set enabled = true in [\(switchedOff.joined(separator: "], ["))])"
            let off = tables["beacon"]?["advertising"] == .bool(false) ? ", even with beacon.advertising = false: the config must say what goes on air once advertising is on again" : ""
            report("beacon.altbeacon = false needs another frame: add an [ibeacon], [overflow] or [eddystone] table\(turnOn)\(off)", at: e.valuePosition, rank: .missing)
            return nil
        }
        return frames
    }

    /// A frame table's `enabled` (true when absent: the table's presence turns its frames on).
    mutating func enabled(_ t: TOMLTable, _ table: String) -> Bool {
        boolean(t, table, "enabled") ?? true
    }

    /// `[ibeacon]`: every key defaults to the `[beacon]` value; the table's presence turns it on.
    mutating func readIBeacon(_ t: TOMLTable, _ b: BeaconIdentity) -> IBeaconFrame? {
        let uuid = t.entry("uuid") == nil ? b.uuid : readUUID(t, table: "ibeacon", required: false)
        let major = integer(t, "ibeacon", "major", 0...65535) ?? Int64(b.major)
        let minor = integer(t, "ibeacon", "minor", 0...65535) ?? Int64(b.minor)
        let power = integer(t, "ibeacon", "power", -127...0) ?? Int64(b.power)
        guard let uuid else { return nil }
        return IBeaconFrame(uuid: uuid, major: UInt16(truncatingIfNeeded: major), minor: UInt16(truncatingIfNeeded: minor),
                            power: Int8(truncatingIfNeeded: power))
    }

    /// `[overflow]`: the Overflow Area frame; major and minor default to the iBeacon frame's (the
    /// reference app sends both with the same numbers), else to `[beacon]`'s. A refused value is
    /// reported and the frame built with the default (the config is refused anyway).
    mutating func readOverflow(_ t: TOMLTable, major: UInt16, minor: UInt16) -> OverflowAreaFrame {
        let major = integer(t, "overflow", "major", 0...65535) ?? Int64(major)
        let minor = integer(t, "overflow", "minor", 0...65535) ?? Int64(minor)
        let matching = integer(t, "overflow", "matching_byte", 0...255) ?? Int64(OverflowAreaFrame.defaultMatchingByte)
        return OverflowAreaFrame(major: UInt16(truncatingIfNeeded: major), minor: UInt16(truncatingIfNeeded: minor),
                                 matchingByte: UInt8(truncatingIfNeeded: matching))
    }

    /// `[gatt_identity]`: the identifier defaults to the beacon UUID (uppercase, hyphenated), the
    /// name to "AltBeacon". Nil (with the problem reported) when a value is refused.
    mutating func readGATTIdentity(_ t: TOMLTable, _ b: BeaconIdentity) -> GATTIdentity? {
        var out = GATTIdentity(identifier: GATTIdentity.defaultIdentifier(uuid: b.uuid))
        let before = problems.count
        if let (s, p) = string(t, "gatt_identity", "identifier") {
            let u = s.utf8
            let range = GATTIdentity.identifierLengths
            if let bad = u.firstIndex(where: { $0 < 0x20 || $0 > 0x7e }) {
                // A byte outside ASCII starts a scalar: count scalars up to it.
                let at = s.unicodeScalars.distance(from: s.unicodeScalars.startIndex, to: bad) + 1
                report("gatt_identity.identifier must be printable ASCII (letters, digits, punctuation, spaces): character \(at) is not", at: p)
            } else if !range.contains(u.count) {
                report("gatt_identity.identifier must be \(range.lowerBound) to \(range.upperBound) characters, found \(u.count)", at: p)
            } else {
                out.identifier = s
            }
        }
        if let (s, p) = string(t, "gatt_identity", "name") {
            let n = s.utf8.count
            let range = GATTIdentity.nameLengths
            if s.unicodeScalars.contains(where: \.isControlCharacter) {
                report("gatt_identity.name must not hold control characters", at: p)
            } else if !range.contains(n) {
                report("gatt_identity.name must be \(range.lowerBound) to \(range.upperBound) bytes of UTF-8 (what the scan response has room for), found \(n)", at: p)
            } else {
                out.name = s
            }
        }
        return problems.count == before ? out : nil
    }

    /// `[beacon] name`: "" (no name) or 1-29 bytes of UTF-8 without control characters; nil when
    /// absent (the hostname) or refused (reported).
    mutating func readBeaconName(_ t: TOMLTable) -> String? {
        guard let (s, p) = string(t, "beacon", "name") else { return nil }
        let n = s.utf8.count
        if s.unicodeScalars.contains(where: BeaconName.isControl) {
            report("beacon.name must not hold control characters", at: p)
        } else if n > BeaconName.maxBytes {
            report("beacon.name must be at most \(BeaconName.maxBytes) bytes of UTF-8 (what the scan response has room for), or \"\" for none, found \(n)", at: p)
        } else {
            return s
        }
        return nil
    }

    /// `[eddystone]`: UID with namespace + instance, URL with url, TLM with tlm = true.
    mutating func readEddystone(_ t: TOMLTable, _ b: BeaconIdentity, enabled: Bool = true) -> [ConfiguredFrame] {
        let derived = min(max(Int64(b.power) + Self.eddystoneDefaultPowerOffset, Self.eddystonePowerRange.lowerBound),
                          Self.eddystonePowerRange.upperBound)
        let power = Int8(truncatingIfNeeded: integer(t, "eddystone", "power_0m", Self.eddystonePowerRange) ?? derived)
        var out: [ConfiguredFrame] = []
        let before = problems.count
        let namespace = hexDigits(t, "eddystone", "namespace", digits: 20, example: "\"edd1ebeac04e5defa017\"")
        let instance = hexDigits(t, "eddystone", "instance", digits: 12, example: "\"0123456789ab\"")
        switch (namespace, instance) {
        case (let n?, let i?):
            out.append(ConfiguredFrame(EddystoneUIDFrame(namespace: n, instance: i, power0m: power)))
        case (_?, nil) where t.entry("instance") == nil:
            // Missing keys: a misspelt `instanc = ...` explains them and is reported instead.
            if let e = t.entry("namespace") { report("eddystone.namespace needs eddystone.instance (12 hex digits) too: the UID frame sends both", at: e.keyPosition, rank: .missing, key: "eddystone.instance") }
        case (nil, _?) where t.entry("namespace") == nil:
            if let e = t.entry("instance") { report("eddystone.instance needs eddystone.namespace (20 hex digits) too: the UID frame sends both", at: e.keyPosition, rank: .missing, key: "eddystone.namespace") }
        default: break
        }
        if let (url, p) = string(t, "eddystone", "url") {
            if let encoded = encodedURL(url, at: p, table: "eddystone", tooLong: " (use a shorter URL)") {
                out.append(ConfiguredFrame(EddystoneURLFrame(encoded: encoded, power0m: power)))
            }
        }
        if boolean(t, "eddystone", "tlm") == true { out.append(ConfiguredFrame(EddystoneTLMFrame())) }
        // Unless a problem of this table already says why (`tlm = false` alone turns on nothing
        // either), or the table is switched off on purpose.
        if out.isEmpty, enabled, problems.count == before {
            report("[eddystone] turns on no frame: set namespace and instance (UID), url (URL) or tlm = true (TLM)", at: t.position, rank: .missing)
        }
        return out
    }

    /// Exactly `digits` hex digits, any case (`[eddystone]`, and the monitor's `[expect.NAME]`).
    mutating func hexDigits(_ t: TOMLTable, _ table: String, _ key: String, digits: Int, example: String,
                            required: Bool = false) -> [UInt8]? {
        guard let (s, p) = string(t, table, key, required: required) else { return nil }
        let u = Array(s.utf8)
        var out: [UInt8] = []
        if u.count == digits {
            var k = 0
            while k + 1 < u.count, let hi = hexValue(u[k]), let lo = hexValue(u[k + 1]) {
                out.append(hi << 4 | lo)
                k += 2
            }
        }
        guard out.count == digits / 2 else {
            report("\(table).\(key) must be exactly \(digits) hex digits, like \(example)", at: p)
            return nil
        }
        return out
    }

    /// `url` as Eddystone-URL encodes it, or nil with why not reported at `p` (`tooLong`: the
    /// advice after the length).
    mutating func encodedURL(_ url: String, at p: SourcePosition, table: String, tooLong: String) -> [UInt8]? {
        switch EddystoneURLFrame.encode(url) {
        case .success(let encoded): return encoded
        case .failure(.scheme):
            report("\(table).url must start with http:// or https:// (lowercase), like \"https://example.com\"", at: p)
        case .failure(.character(let offset)):
            report("\(table).url has a character Eddystone cannot send at byte \(offset + 1) (only printable ASCII, no spaces)", at: p)
        case .failure(.tooLong(let n)):
            report("\(table).url encodes to \(n) bytes after its scheme; Eddystone-URL carries at most \(EddystoneURLFrame.maxEncodedLength)\(tooLong)", at: p)
        }
        return nil
    }
}
