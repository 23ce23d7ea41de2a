/// Centrals connected to our connectable advertising (the GATT identity's turn), by connection
/// handle: which connection is ours, and how one is ended (what serves it lets go first).
public struct CentralLinks: Equatable, Sendable {
    public struct Link: Equatable, Sendable {
        public var address: [UInt8]
        public var random: Bool
    }

    public private(set) var byHandle: [UInt16: Link] = [:]

    public var isEmpty: Bool { byHandle.isEmpty }

    /// A connection completed; ours (and kept) only if `ours` (connectable advertising of ours
    /// was on: another program's GATT server on this adapter keeps its centrals).
    mutating func connected(handle: UInt16, peer: [UInt8], random: Bool, ours: Bool) -> Bool {
        guard ours else { return false }
        byHandle[handle] = Link(address: peer, random: random)
        return true
    }

    /// A link ended; true when it was ours.
    mutating func disconnected(handle: UInt16) -> Bool { byHandle.removeValue(forKey: handle) != nil }

    /// Ending link `handle` through the kernel, what serves it told first; nil when not ours.
    func release(handle: UInt16) -> [AdvertiserAction]? {
        guard let l = byHandle[handle] else { return nil }
        return [.event(.releasingCentral(l.address)), .disconnect(address: l.address, random: l.random)]
    }
}
