/// How the configured frames share the controller (SPEC §3): with LE extended advertising, one
/// advertising set ("slot") per frame, all on air at once; with legacy commands there is one
/// slot, and the frames take turns in it. When a controller has fewer sets than frames, the
/// last set takes the remaining frames in turn. Pure: the advertiser performs it.
public struct AirPlan: Equatable, Sendable {
    /// nil: legacy commands (one slot). Else the extended advertising set handle of each slot.
    public let handles: [UInt8]?
    public let frameCount: Int

    public init(handles: [UInt8]?, frameCount: Int) {
        self.handles = handles.map { $0.isEmpty ? [0] : $0 }
        self.frameCount = max(1, frameCount)
    }

    /// Set handles for `frames` frames on a controller with `supportedSets` sets: counted down
    /// from the highest usable handle (the kernel and bluetoothd start from the low ones).
    public static func handles(frames: Int, supportedSets: UInt8) -> [UInt8] {
        let top = supportedSets > 0 ? Int(min(supportedSets - 1, 0xef)) : 0
        let n = max(1, min(frames, top + 1))
        return (0..<n).map { UInt8(top - $0) }
    }

    public var slotCount: Int { min(handles?.count ?? 1, frameCount) }

    /// The frames (indices) that slot `s` carries: one each, the last slot the rest in turn.
    public func frames(inSlot s: Int) -> Range<Int> {
        s < slotCount - 1 ? s..<(s + 1) : min(s, frameCount)..<frameCount
    }

    /// True when some slot carries more than one frame: a timer switches them every rotation_ms.
    public var rotates: Bool { frameCount > slotCount }

    /// The slot that carries frame `i`.
    public func slot(ofFrame i: Int) -> Int { min(i, slotCount - 1) }

    public func handle(ofSlot s: Int) -> UInt8? { handles.map { $0[min(s, $0.count - 1)] } }
}
