// `[mqtt] host` written as a URL or with a port (issue 30: "1.2.3.4:1883" passed the check and
// then failed at every connect): refused with what to write instead.

extension MQTTSettings {
    /// Why `host` is not a bare name or address, with the fix; nil when it is one. An IPv6
    /// literal has two colons or more, so one colon is a port.
    public static func portInHost(_ host: String) -> String? {
        let colons = host.utf8.count { $0 == UInt8(ascii: ":") }
        let u = Array(host.utf8)
        if let i = u.indices.first(where: { u[$0...].starts(with: "://".utf8) }) {
            let rest = String(decoding: u[(i + 3)...].prefix { $0 != UInt8(ascii: "/") && $0 != UInt8(ascii: ":") }, as: UTF8.self)
            return "is a URL: give the host alone, like host = \"\(rest.isEmpty ? "broker.lan" : rest)\", and put the port in mqtt.port"
        }
        if host.hasPrefix("[") {
            let inside = host.dropFirst().prefix { $0 != "]" }
            return "has brackets: write the IPv6 address bare, like host = \"\(inside.isEmpty ? "::1" : inside)\", and put the port in mqtt.port"
        }
        if colons == 1 {
            let parts = host.split(separator: ":", omittingEmptySubsequences: false)
            let port = parts[1].isEmpty ? "1883" : parts[1]
            return "has a port in it: put the port in mqtt.port, like host = \"\(parts[0])\" and port = \(port)"
        }
        return nil
    }
}
