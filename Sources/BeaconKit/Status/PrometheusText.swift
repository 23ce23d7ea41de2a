/// The Prometheus text exposition format (0.0.4), one metric family at a time: what the beacon's
/// (`StatusExport`) and the monitor's (`MonitorExport`) text files are written with.
struct PrometheusText {
    typealias Sample = (labels: String, value: String)

    private(set) var text = ""
    /// A family without samples is left out instead of written bare (HELP and TYPE only).
    let omitsEmptyFamilies: Bool

    init(omitsEmptyFamilies: Bool = false) { self.omitsEmptyFamilies = omitsEmptyFamilies }

    /// `# HELP`, `# TYPE`, then one line per sample (`labels` without braces, "" for none).
    mutating func family(_ name: String, _ type: String, _ help: String, _ samples: [Sample]) {
        if omitsEmptyFamilies && samples.isEmpty { return }
        text += "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n"
        for s in samples { text += name + (s.labels.isEmpty ? "" : "{\(s.labels)}") + " " + s.value + "\n" }
    }

    /// A label value: `"..."` with backslash, quote and newline escaped.
    static func label(_ s: String) -> String {
        var out = "\""
        for c in s.unicodeScalars {
            switch c {
            case "\\": out += "\\\\"
            case "\"": out += "\\\""
            case "\n": out += "\\n"
            default: out.unicodeScalars.append(c)
            }
        }
        return out + "\""
    }
}
