/// The applied config files' bytes by generation, until the controller confirms one on air: then
/// it is the last good config (SPEC §6) and the older ones are dropped. Only the newest few are
/// kept: a burst of edits confirms its last.
public struct UnconfirmedConfigs: Sendable {
    public static let kept = 4
    private var files: [(generation: Int, bytes: [UInt8])] = []

    public init() {}

    /// The file of generation `generation`, applied now.
    public mutating func applied(_ bytes: [UInt8], generation: Int) {
        files.append((generation, bytes))
        if files.count > Self.kept { files.removeFirst(files.count - Self.kept) }
    }

    /// Generation `g` is on air: the newest file of it or before, to be stored; nil when none waits.
    public mutating func confirmed(_ g: Int) -> [UInt8]? {
        guard let i = files.lastIndex(where: { $0.generation <= g }) else { return nil }
        let bytes = files[i].bytes
        files.removeFirst(i + 1)
        return bytes
    }
}
