// toml-test decoder: TOML on stdin, toml-test tagged JSON on stdout (exit 0), or the
// diagnostic on stderr (exit 1). Test helper only; not installed.
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import BeaconKit

func readAllStdin() -> [UInt8]? {
    var data: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65536)
    while true {
        let n = buffer.withUnsafeMutableBytes { read(0, $0.baseAddress, $0.count) }
        if n == 0 { return data }
        if n < 0 {
            if errno == EINTR { continue }
            return nil
        }
        data.append(contentsOf: buffer[0..<n])
    }
}

func writeAll(_ fd: Int32, _ s: String) {
    let bytes = Array(s.utf8)
    var off = 0
    while off < bytes.count {
        let n = bytes[off...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        if n < 0 {
            if errno == EINTR { continue }
            return
        }
        off += n
    }
}

func tagged(_ type: String, _ value: String) -> String {
    "{\"type\": \"\(type)\", \"value\": \(jsonString(value))}"
}

func json(_ table: TOMLTable, indent: String = "") -> String {
    if table.isEmpty { return "{}" }
    let inner = indent + "  "
    var parts: [String] = []
    for e in table.entries {
        let v: String
        switch e.value {
        case .string(let s): v = tagged("string", s)
        case .integer(let n): v = tagged("integer", String(n))
        case .bool(let b): v = tagged("bool", b ? "true" : "false")
        case .table(let t): v = json(t, indent: inner)
        }
        parts.append(inner + jsonString(e.key) + ": " + v)
    }
    return "{\n" + parts.joined(separator: ",\n") + "\n" + indent + "}"
}

guard let input = readAllStdin() else {
    writeAll(2, "toml-test-decoder: cannot read stdin\n")
    exit(2)
}
switch TOML.parse(input, path: "<stdin>") {
case .success(let table):
    writeAll(1, json(table) + "\n")
    exit(0)
case .failure(let diagnostic):
    writeAll(2, diagnostic.description + "\n")
    exit(1)
}
