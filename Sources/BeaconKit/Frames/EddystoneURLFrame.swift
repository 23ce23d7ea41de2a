/// Eddystone-URL: a compressed URL (scheme prefix byte, then the rest with common endings
/// replaced by one byte each), with the TX power at 0 m. At most 17 encoded bytes.
public struct EddystoneURLFrame: ExpectableFrame, ConfigurableFrame, Equatable {
    public static let traits = FrameTraits(
        name: "eddystone-url", model: "Google Eddystone-URL", switchedBy: Eddystone.switchedBy,
        configKeys: ["url", "power_0m"], configHint: "url (URL)", identifyingKeys: ["url"], calibrationLine: Eddystone.calibrationLine)
    public static let maxEncodedLength = 17
    /// Code 0x00-0x03, longest first where one is a prefix of another.
    static let schemes = ["http://www.", "https://www.", "http://", "https://"]
    /// Codes 0x00-0x0d.
    static let expansions = [".com/", ".org/", ".edu/", ".net/", ".info/", ".biz/", ".gov/",
                             ".com", ".org", ".edu", ".net", ".info", ".biz", ".gov"]

    /// Scheme code, then the encoded rest.
    public var encoded: [UInt8]
    public var power0m: Int8

    public init(encoded: [UInt8], power0m: Int8) { self.encoded = encoded; self.power0m = power0m }

    public enum EncodingError: Error, Equatable, Sendable {
        case scheme
        /// A byte Eddystone cannot carry (a space, a control character, non-ASCII), at this UTF-8 offset.
        case character(offset: Int)
        case tooLong(encodedBytes: Int)
    }

    /// Encodes `url`: the scheme must be one of http://, https:// (with or without www.), every
    /// other byte printable ASCII; at each position the first expansion in code order that
    /// matches replaces its text, as the Eddystone reference encoders do.
    public static func encode(_ url: String) -> Result<[UInt8], EncodingError> {
        let u = Array(url.utf8)
        // The longest matching prefix: "http://www." rather than "http://".
        guard let best = schemes.indices.filter({ u.starts(with: schemes[$0].utf8) })
            .max(by: { schemes[$0].utf8.count < schemes[$1].utf8.count }) else { return .failure(.scheme) }
        var out: [UInt8] = [UInt8(best)]
        var i = schemes[best].utf8.count
        let exp = expansions.map { Array($0.utf8) }
        while i < u.count {
            if let code = exp.firstIndex(where: { u[i...].starts(with: $0) }) {
                out.append(UInt8(code))
                i += exp[code].count
                continue
            }
            guard u[i] > 0x20, u[i] < 0x7f else { return .failure(.character(offset: i)) }
            out.append(u[i])
            i += 1
        }
        // Counted without the scheme byte, as SPEC §3's "n ≤ 17" does.
        guard out.count - 1 <= maxEncodedLength else { return .failure(.tooLong(encodedBytes: out.count - 1)) }
        return .success(out)
    }

    /// The URL as text: the scheme and expansion codes written out again.
    public var url: String {
        guard let first = encoded.first, Int(first) < Self.schemes.count else { return "" }
        var s = Self.schemes[Int(first)]
        for b in encoded.dropFirst() {
            if Int(b) < Self.expansions.count {
                s += Self.expansions[Int(b)]
            } else if b > 0x20, b < 0x7f {
                s.unicodeScalars.append(Unicode.Scalar(b))
            } else {
                s += "\\x" + hexString(CollectionOfOne(b))
            }
        }
        return s
    }

    public func advertisingData(_: Telemetry) -> [UInt8] {
        var body: [UInt8] = [Eddystone.url, UInt8(bitPattern: power0m)]
        body += encoded.prefix(1 + Self.maxEncodedLength)
        return Eddystone.advertisingData(body)
    }

    public var fields: [FrameField] { [FrameField("url", url), .number("power_0m", power0m)] }

    public static func decode(_ data: ArraySlice<UInt8>) -> EddystoneURLFrame? {
        guard let d = Eddystone.serviceData(data, type: Eddystone.url), d.count >= 3, d.count <= 3 + maxEncodedLength,
              Int(d[d.startIndex + 2]) < schemes.count else { return nil }
        return EddystoneURLFrame(encoded: Array(d.dropFirst(2)), power0m: Int8(bitPattern: d[d.startIndex + 1]))
    }

    public var powerAt1m: Int? { Eddystone.powerAt1m(power0m) }

    /// The TX power plays no part in matching; a URL Eddystone cannot carry is never heard, so
    /// it is refused.
    static func expected(_ config: inout ConfigValidator, _ table: TOMLTable, name: String) -> EddystoneURLFrame? {
        guard let (url, p) = config.string(table, name, "url", required: true) else { return nil }
        return config.encodedURL(url, at: p, table: name, tooLong: ", so no beacon can send it").map { EddystoneURLFrame(encoded: $0, power0m: 0) }
    }

    /// `[eddystone]` url (no URL frame without it).
    static func configured(_ config: inout ConfigValidator, _ t: TOMLTable, _ context: FrameConfigContext) -> EddystoneURLFrame? {
        let power = Eddystone.power0m(&config, t, context.beacon)
        guard let (url, p) = config.string(t, "eddystone", "url"),
              let encoded = config.encodedURL(url, at: p, table: "eddystone", tooLong: " (use a shorter URL)") else { return nil }
        return EddystoneURLFrame(encoded: encoded, power0m: power)
    }
}
