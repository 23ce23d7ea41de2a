/// When the monitor's scan is restarted although nothing failed (SPEC §10). Some controllers'
/// scans go deaf without a word: nothing at all heard for `deafAfterMs` (the beacon daemon's own
/// probe re-sends its data every few seconds, so a live scan always hears something) means the
/// scan is restarted. With `[monitor] rescan_s`, the scan is cycled off and on that often instead
/// (a controller that reports each advertiser once per scan). Pure: checks in, verdicts out.
public struct ScanDeafness: Sendable {
    public static let deafAfterMs: Int64 = 60_000

    /// `rescan_s` in ms; nil: off (0 in the config).
    public let rescanMs: Int64?
    /// The scanner's advert count at the last check.
    private var advertsAtLastCheck: UInt64 = 0

    public init(rescanS: Int) {
        rescanMs = rescanS > 0 ? Int64(rescanS) * 1000 : nil
    }

    public enum Verdict: Sendable {
        /// `rescan_s`: scanning off and on again, then the next check after `checkAfterMs`.
        case cycle
        /// Nothing heard since the last check: restart the scan.
        case deaf
        /// Something was heard: the next check after `checkAfterMs`.
        case hearing
    }

    /// How long after a scan (re)starts, or a check, the next check is.
    public var checkAfterMs: Int64 { rescanMs ?? Self.deafAfterMs }

    /// Scanning (re)started with the scanner at `advertsTotal`.
    public mutating func scanStarted(advertsTotal: UInt64) { advertsAtLastCheck = advertsTotal }

    /// A check, `checkAfterMs` after the last one or the start.
    public mutating func check(advertsTotal: UInt64) -> Verdict {
        if rescanMs != nil { return .cycle }
        if advertsTotal == advertsAtLastCheck { return .deaf }
        advertsAtLastCheck = advertsTotal
        return .hearing
    }
}
