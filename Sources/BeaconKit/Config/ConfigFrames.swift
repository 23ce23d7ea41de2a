// The frames (SPEC §2, §3), read by each frame type from its table (`ConfigurableFrame`), and
// `[gatt_identity]`, which is no frame but is read here beside them.

extension ConfigValidator {
    /// The frames to send, in `BeaconFrames.types` order; nil (with problems reported) if refused.
    /// Every frame type of the table reads itself (`ConfigurableFrame`); a frame goes on air when
    /// its table is there, the table's `enabled` is not false and its switch is on.
    mutating func readFrames(_ beacon: BeaconIdentity, _ tables: [String: TOMLTable]) -> [ConfiguredFrame]? {
        var context = FrameConfigContext(beacon: beacon)
        var switchedOn: [ObjectIdentifier: Bool] = [:]
        var tableProblems: [String: Int] = [:]
        var tableSendsAny: Set<String> = []
        let before = problems.count
        for type in BeaconFrames.types {
            guard let s = type.traits.switchedBy, let configurable = type as? any ConfigurableFrame.Type,
                  let t = tables[s.table] else { continue }
            // Read even when switched off: switching it back on (from afar too) must not uncover
            // a mistake. Each switch is read once, and `enabled` once per table.
            let on = switchedOn[ObjectIdentifier(s)] ?? { () -> Bool in
                let v = (boolean(t, s.table, s.key) ?? s.defaultOn) && (s.key == "enabled" || s.table == "beacon" || enabled(t, s.table))
                switchedOn[ObjectIdentifier(s)] = v
                return v
            }()
            let problemsBefore = problems.count
            let frame = configurable.configured(&self, t, context)
            tableProblems[s.table, default: 0] += problems.count - problemsBefore
            if let frame { context.read.append(frame) }
            if on, let frame {
                context.onAir.append(ConfiguredFrame(frame))
                tableSendsAny.insert(s.table)
            }
        }
        // A frame table turned on that turns on no frame, unless a problem of the table already
        // says why (`tlm = false` alone turns on nothing either).
        for (table, _) in BeaconFrames.configTables {
            guard let t = tables[table], !tableSendsAny.contains(table), tableProblems[table, default: 0] == 0,
                  t["enabled"] != .bool(false) else { continue }
            let hints = BeaconFrames.types.compactMap { $0.traits.switchedBy?.table == table ? $0.traits.configHint : nil }
            guard let last = hints.last else { continue }
            let set = hints.count == 1 ? last : hints.dropLast().joined(separator: ", ") + " or " + last
            report("[\(table)] turns on no frame: set \(set)", at: t.position, rank: .missing)
        }
        guard problems.count == before else { return nil }
        if context.onAir.isEmpty, let e = tables["beacon"]?.entry("altbeacon") {
            // Ranked as a missing key: a misspelt [ibeacon] or [eddystone] header is the real mistake.
            // Refused with `beacon.advertising = false` too: a config always says what it sends
            // once advertising is on again, so that switching it on cannot be refused.
            let frameTables = BeaconFrames.configTables.map(\.name)
            let switchedOff = frameTables.filter { tables[$0]?["enabled"] == .bool(false) }
            let turnOn = switchedOff.isEmpty ? "" : " (or set enabled = true in [\(switchedOff.joined(separator: "], ["))])"
            let off = tables["beacon"]?["advertising"] == .bool(false) ? ", even with beacon.advertising = false: the config must say what goes on air once advertising is on again" : ""
            let add = frameTables.dropLast().map { "[\($0)]" }.joined(separator: ", ") + (frameTables.count > 1 ? " or " : "") + "[\(frameTables.last ?? "")]"
            report("beacon.altbeacon = false needs another frame: add an \(add) table\(turnOn)\(off)", at: e.valuePosition, rank: .missing)
            return nil
        }
        return context.onAir
    }

    /// A frame table's `enabled` (true when absent: the table's presence turns its frames on).
    mutating func enabled(_ t: TOMLTable, _ table: String) -> Bool {
        boolean(t, table, "enabled") ?? true
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
        if s.unicodeScalars.contains(where: \.isControlCharacter) {
            report("beacon.name must not hold control characters", at: p)
        } else if n > BeaconName.maxBytes {
            report("beacon.name must be at most \(BeaconName.maxBytes) bytes of UTF-8 (what the scan response has room for), or \"\" for none, found \(n)", at: p)
        } else {
            return s
        }
        return nil
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
