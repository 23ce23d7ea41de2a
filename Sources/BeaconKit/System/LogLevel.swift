/// How much a log line matters (syslog priorities): what the procedures here say, and what
/// BeaconLinux's `Logger` writes.
public enum LogLevel: Int, Comparable, Sendable {
    case error = 3, warning = 4, notice = 5, info = 6, debug = 7
    public static func < (a: LogLevel, b: LogLevel) -> Bool { a.rawValue < b.rawValue }
    public var word: String {
        switch self {
        case .error: "error"; case .warning: "warning"; case .notice: "notice"
        case .info: "info"; case .debug: "debug"
        }
    }
}
