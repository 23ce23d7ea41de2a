/// Frames taking turns in one slot (the last of a plan with more frames than slots): which one is
/// on air, where a legacy arm starts, and which probe re-sends the scan responses.
struct FrameRotation {
    /// The frame of the rotating slot that is on air, counted from the slot's first.
    var turn = 0
    /// Where a legacy arm starts its rotation: the first frame not on air before it (a frame
    /// switched on from afar is heard at once, not a whole rotation later), else the first.
    var legacyFirstFrame = 0
    /// Probes since the last one that re-sent the scan responses.
    var probesSinceScanResponse = 0
    static let scanResponseProbeEvery = 6

    /// An arm from frames `before` to `after` (by name).
    mutating func arming(from before: [String], to after: [String]) {
        legacyFirstFrame = after.firstIndex { !before.contains($0) } ?? 0
    }

    /// The frame a legacy arm of `frameCount` frames starts with.
    func legacyStart(frameCount: Int) -> Int { legacyFirstFrame < frameCount ? legacyFirstFrame : 0 }

    /// The frame on air in a slot carrying frames `r`.
    func frame(in r: Range<Int>) -> Int { r.count > 1 ? r.lowerBound + turn % r.count : r.lowerBound }

    /// The next turn in the rotating slot carrying frames `r`: the frame leaving and the one coming.
    mutating func advance(in r: Range<Int>) -> (from: Int, to: Int) {
        let from = r.lowerBound + turn % r.count
        turn = (turn + 1) % r.count
        return (from, r.lowerBound + turn)
    }

    /// A probe: true for every `scanResponseProbeEvery`-th. Another program's write of a scan
    /// response is seen on the HCI monitor and repaired at once; this is the slow net for one the
    /// monitor missed, and a command fewer per probe (a wakeup every 5 s).
    mutating func probeResendsScanResponses() -> Bool {
        probesSinceScanResponse = (probesSinceScanResponse + 1) % Self.scanResponseProbeEvery
        return probesSinceScanResponse == 0
    }
}
