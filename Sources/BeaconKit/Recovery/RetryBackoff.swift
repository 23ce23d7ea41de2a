/// Trying again after failures, as the monitor does with its scan and its broker: the wait
/// doubles from the range's lower bound to its upper one, and each cause is said once (a cause
/// repeated, attempt after attempt, is not said again until something else happened). Pure.
public struct RetryBackoff: Sendable {
    public let range: ClosedRange<Int64>
    /// The wait before the next attempt, should this one fail.
    public private(set) var delayMs: Int64
    /// Why the last attempt failed; nil after a success.
    public private(set) var problem: String?

    public init(range: ClosedRange<Int64>) {
        self.range = range
        delayMs = range.lowerBound
    }

    /// An attempt failed: whether to say `why` (not the cause said last) and how long to wait.
    public mutating func failed(_ why: String) -> (say: Bool, afterMs: Int64) {
        let say = problem != why
        problem = why
        let wait = delayMs
        delayMs = min(delayMs * 2, range.upperBound)
        return (say, wait)
    }

    /// An attempt worked: the wait back to its lower bound. Returns the problem it ended (nil
    /// when there was none), for lines such as "connected again".
    @discardableResult
    public mutating func succeeded() -> String? {
        defer { problem = nil; delayMs = range.lowerBound }
        return problem
    }

    /// The shortest wait again, the problem kept (the cause may be gone: no need to wait long).
    public mutating func shorten() { delayMs = range.lowerBound }
}
