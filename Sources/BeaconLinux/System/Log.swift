import BeaconKit
/// One line per event on stderr. Under systemd (JOURNAL_STREAM set) each line carries the
/// sd-daemon priority prefix so the journal files it at the right level.
public struct Logger: Sendable {
    public var journal: Bool
    public var threshold: LogLevel
    /// Where lines go; stderr unless a test captures them.
    public var sink: @Sendable (String) -> Void

    public init(journal: Bool = environment("JOURNAL_STREAM") != nil,
                threshold: LogLevel = environment("ALTBEACOND_DEBUG") != nil ? .debug : .info,
                sink: @escaping @Sendable (String) -> Void = writeStandardError) {
        self.journal = journal; self.threshold = threshold; self.sink = sink
    }

    public func log(_ level: LogLevel, _ message: String) {
        guard level <= threshold else { return }
        // One event, one line: fold embedded newlines so the journal keeps it whole. Byte-wise,
        // so logging never pulls in the stdlib's grapheme-breaking tables.
        var bytes: [UInt8] = []
        bytes.reserveCapacity(message.utf8.count)
        for b in message.utf8 {
            if b == 0x0a { bytes += [0x20, 0x7c, 0x20] } else { bytes.append(b) }
        }
        let text = String(decoding: bytes, as: UTF8.self)
        sink(journal ? "<\(level.rawValue)>\(text)\n" : "altbeacond: \(level.word): \(text)\n")
    }
    public func error(_ m: String) { log(.error, m) }
    public func warning(_ m: String) { log(.warning, m) }
    public func notice(_ m: String) { log(.notice, m) }
    public func info(_ m: String) { log(.info, m) }
    public func debug(_ m: String) { log(.debug, m) }
}
