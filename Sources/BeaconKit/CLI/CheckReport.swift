/// What `altbeacond check` prints: the decoded beacon, the payload as sent, and the study-guide
/// hcitool lines that would put the same beacon on air by hand.
public enum CheckReport {
    static let companies: [UInt16: String] = [0x0118: "Radius Networks", 0x004c: "Apple", 0x00e0: "Google",
                                              0x0006: "Microsoft", 0x0059: "Nordic Semiconductor"]

    public static func render(_ config: BeaconConfig, path: String) -> String {
        let b = config.beacon, bt = config.bluetooth
        let payload = primaryPayload(config)
        let company = companies[b.companyID].map { " (\($0))" } ?? ""
        var lines: [String] = [
            "\(path): ok",
        ]
        if !config.advertising {
            // The frames are still printed below: what goes on air once it is switched on again.
            lines.append("advertising: off (beacon.advertising = false): nothing goes on air; below is what would")
        }
        lines += [
            "beacon:",
            "  uuid (ID1):       \(b.uuidString)",
            "  major (ID2):      \(b.major)",
            "  minor (ID3):      \(b.minor)",
            "  reference RSSI:   \(b.power) dBm at 1 m",
            "  company:          0x\(hex16(b.companyID))\(company)",
            "  reserved:         0x\(hexString(CollectionOfOne(b.reserved)))",
            "  name:             " + nameLine(config),
            "bluetooth:",
            "  adapter:          \(bt.adapter)",
            "  interval:         \(bt.intervalMs) ms",
            "  tx power:         " + (bt.txPowerDbm.map { "\($0) dBm (controllers with LE extended advertising only)" } ?? "controller default"),
        ]
        if let leds = config.leds {
            lines.append("leds:")
            lines.append("  chip:             " + (leds.chip ?? "the 40-pin header's (\(LEDSettings.headerChipLabels.joined(separator: ", ")))"))
            lines.append("  status line:      \(leds.status)")
            lines.append("  fault line:       " + (leds.fault.map { "\($0)" } ?? "none (status LED shows faults too)"))
            lines.append("  active low:       \(leds.activeLow ? "yes" : "no")")
        } else {
            lines.append("leds:               none")
        }
        lines.append("watchdog:           probe every \(config.watchdog.checkIntervalS) s")
        lines += frameLines(config)
        lines.append("advertising-data: \(hexString(payload))")
        for f in config.frames { lines.append("advertising-data[\(f.name)]: \(hexString(f.frame.advertisingData(.zero)))") }
        if let g = config.gattIdentity { lines.append("advertising-data[\(GATTIdentity.name)]: \(hexString(g.advertisingData))") }
        for f in config.airFrames() {
            lines.append("advertising-type[\(f.name)]: \(f.pdu.pduName)")
            lines.append("scan-response[\(f.name)]: " + (f.scanResponse.isEmpty ? "none" : hexString(f.scanResponse)))
        }
        lines.append("study-guide equivalent (legacy commands):")
        for c in studyGuideCommands(config) { lines.append("  " + c) }
        if config.frames.count > 1 {
            lines.append("each frame by hand (legacy controllers send one at a time):")
            for f in config.frames {
                lines.append("  \(LESetAdvertisingData(data: f.frame.advertisingData(.zero)).hcitoolLine(adapter: bt.adapter))   # \(f.name)")
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// The frames on air and how they share it, then each frame beside AltBeacon, decoded.
    static func frameLines(_ config: BeaconConfig) -> [String] {
        let names = config.frames.map(\.name).joined(separator: ", ")
        var lines = ["frames:             \(names)"]
        if config.frames.count > 1 {
            lines.append("  on air:           all at once (one advertising set each) where the controller has LE extended advertising; else in turn, \(config.bluetooth.rotationMs) ms each")
        }
        for f in config.frames where !(f.frame is AltBeaconFrame) {
            lines.append("\(f.name):")
            for field in f.frame.fields {
                let label = field.key + ":"
                lines.append("  " + label + String(repeating: " ", count: max(1, 18 - label.count)) + field.text)
            }
        }
        if let g = config.gattIdentity { lines += gattIdentityLines(g) }
        return lines
    }

    /// `[gatt_identity]`: what a central finds and reads.
    static func gattIdentityLines(_ g: GATTIdentity) -> [String] {
        [
            "\(GATTIdentity.name):      connectable (ADV_IND), one central at a time, each disconnected after 30 s",
            "  service:          \(GATTIdentity.uuidString(onAir: GATTIdentity.serviceUUID))",
            "  characteristic:   \(GATTIdentity.uuidString(onAir: GATTIdentity.characteristicUUID)) (read: the identifier)",
            "  identifier:       \(g.identifier)",
            "  name:             \(g.name)",
        ]
    }

    /// The payload of the `advertising-data:` line: AltBeacon, or the first frame when it is off.
    static func primaryPayload(_ config: BeaconConfig) -> [UInt8] {
        (config.frames.first?.frame.advertisingData(.zero)) ?? AltBeacon.advertisingData(config.beacon)
    }

    /// The guide's shell sequence for this config.
    public static func studyGuideCommands(_ config: BeaconConfig) -> [String] {
        let a = config.bluetooth.adapter
        let payload = primaryPayload(config)
        // With a name: ADV_SCAN_IND and the scan response (without one, the guide's bytes exactly).
        let response = config.nameResponse
        return [
            "hciconfig \(a) up",
            LESetAdvertisingParameters(intervalMs: config.bluetooth.intervalMs, pdu: response.isEmpty ? .nonConnectable : .scannable).hcitoolLine(adapter: a),
            LESetAdvertisingData(data: payload).hcitoolLine(adapter: a),
        ] + (response.isEmpty ? [] : [LESetScanResponseData(data: response).hcitoolLine(adapter: a)]) + [
            LESetAdvertiseEnable(true).hcitoolLine(adapter: a),
        ]
    }

    /// `[beacon] name` as it goes on air, and where it comes from.
    static func nameLine(_ config: BeaconConfig) -> String {
        let response = config.nameResponse
        guard response.count > 2 else {
            return config.name == nil ? "none (no hostname); frames non-connectable (ADV_NONCONN_IND), no scan response"
                : "none; frames non-connectable (ADV_NONCONN_IND), no scan response"
        }
        let sent = String(decoding: response.dropFirst(2), as: UTF8.self)
        let from = config.name == nil ? " (the hostname)" : ""
        let cut = response[1] == BeaconName.shortenedLocalName ? ", cut to \(BeaconName.maxBytes) bytes (Shortened Local Name)" : ""
        return "\(sent)\(from)\(cut); in the scan response of every non-connectable frame (ADV_SCAN_IND)"
    }

    private static func hex16(_ v: UInt16) -> String { hexString([UInt8(v >> 8), UInt8(v & 0xff)]) }
}
