/// One `[expect.NAME]` table of monitor.toml as a frame type reads its IDs from it
/// (`BeaconFrame.expected`): typed readers that report each problem (at its line, ranked) to the
/// validator, as the beacon config's readers do, and return nil for a value refused.
public struct ExpectationTable {
    var validator: ConfigValidator
    let table: TOMLTable
    /// `expect.NAME`, as messages name it.
    let name: String

    init(_ validator: ConfigValidator, _ table: TOMLTable, name: String) {
        self.validator = validator; self.table = table; self.name = name
    }

    /// An integer key, within `range`.
    mutating func number(_ key: String, _ range: ClosedRange<Int64>, required: Bool = true) -> Int64? {
        validator.integer(table, name, key, range, required: required)
    }

    /// `uuid`, `major` and `minor`, all required (AltBeacon, iBeacon): each read, so each
    /// problem is reported.
    mutating func uuidMajorMinor() -> (uuid: [UInt8], major: UInt16, minor: UInt16)? {
        let uuid = validator.readUUID(table, table: name)
        let major = number("major", 0...65535)
        let minor = number("minor", 0...65535)
        guard let uuid, let major, let minor else { return nil }
        return (uuid, UInt16(truncatingIfNeeded: major), UInt16(truncatingIfNeeded: minor))
    }

    /// Exactly `digits` hex digits, any case, required.
    mutating func hexDigits(_ key: String, digits: Int, example: String) -> [UInt8]? {
        validator.hexDigits(table, name, key, digits: digits, example: example, required: true)
    }

    /// `url` as Eddystone encodes it, required: a URL it cannot carry is never heard, so it is refused.
    mutating func url() -> [UInt8]? {
        guard let (url, p) = validator.string(table, name, "url", required: true) else { return nil }
        return validator.encodedURL(url, at: p, table: name, tooLong: ", so no beacon can send it")
    }
}
