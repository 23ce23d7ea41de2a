/// The beacon's name (`[beacon] name`, default the hostname), carried by the scan response of
/// every non-connectable frame, which then goes out scannable (ADV_SCAN_IND): what BlueZ reads
/// into `Device1.Name` and Home Assistant's iBeacon Tracker needs to create a device (SPEC §12).
/// Pure: the daemon resolves the hostname (at start and at each reload) and hands it in.
public enum BeaconName {
    /// What a 31-byte legacy scan response holds after the AD's length and type bytes.
    public static let maxBytes = 29
    public static let completeLocalName: UInt8 = 0x09
    public static let shortenedLocalName: UInt8 = 0x08

    /// `name` cut to `maxBytes` bytes of UTF-8 on a scalar boundary; `cut`: something was left out.
    public static func fitted(_ name: String) -> (bytes: [UInt8], cut: Bool) {
        var out: [UInt8] = []
        for scalar in name.unicodeScalars {
            let u = Array(String(scalar).utf8)
            guard out.count + u.count <= maxBytes else { return (out, true) }
            out += u
        }
        return (out, false)
    }

    /// The scan response for `name`: `<n+1> 09 <name>` (`08`, Shortened Local Name, when it had to
    /// be cut); empty for an empty name (or a hostname that is nothing but control characters).
    public static func scanResponse(_ name: String) -> [UInt8] {
        // Control characters (`isControlCharacter`: refused in a configured name) dropped from a hostname.
        let clean = String(String.UnicodeScalarView(name.unicodeScalars.filter { !$0.isControlCharacter }))
        let (bytes, cut) = fitted(clean)
        guard !bytes.isEmpty else { return [] }
        return [UInt8(bytes.count + 1), cut ? shortenedLocalName : completeLocalName] + bytes
    }
}
