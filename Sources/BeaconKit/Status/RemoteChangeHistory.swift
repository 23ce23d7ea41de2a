/// The changes asked from afar and what became of each, as the status shows them: the last one,
/// the last `RemoteChangeReport.kept` oldest first, and how many there were since the daemon
/// started, so every outcome of a batch reaches Home Assistant (issue 48), not only the last one
/// the file held when the monitor read it.
public struct RemoteChangeHistory: Equatable, Sendable {
    /// nil until one came.
    public private(set) var last: RemoteChangeReport?
    public private(set) var recent: [RemoteChangeReport] = []
    public private(set) var count = 0

    public init() {}

    public mutating func record(_ change: RemoteChangeReport) {
        last = change
        recent = Array((recent + [change]).suffix(RemoteChangeReport.kept))
        count += 1
    }
}
