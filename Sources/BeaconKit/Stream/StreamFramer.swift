/// Cuts a byte stream (a socket's reads) into whole frames, for any protocol whose frame says its
/// own length in its first bytes: D-Bus messages and MQTT packets. Pure: bytes in, frames out.
/// Bounded: a frame longer than `maximumFrameSize` is an error as soon as its length is known, so
/// the buffer never holds more than one frame's worth plus the last read.
public struct StreamFramer: Sendable {
    public let maximumFrameSize: Int
    private var buffer: [UInt8] = []
    /// Where the next frame starts in `buffer`: taking a frame moves this, not the bytes.
    private var start = 0
    /// Bytes still to come of a frame being dropped (`next(frameLength:skippingUpTo:)`).
    private var skipping = 0
    /// Past this many taken bytes the buffer is compacted (fewer copies than once per frame).
    static let compactAfter = 4096

    public init(maximumFrameSize: Int) { self.maximumFrameSize = maximumFrameSize }

    /// Bytes received and not yet part of a frame taken.
    public var bufferedCount: Int { buffer.count - start }

    public mutating func append(_ bytes: ArraySlice<UInt8>) { buffer.append(contentsOf: bytes) }
    public mutating func append(_ bytes: [UInt8]) { buffer.append(contentsOf: bytes) }

    /// The next whole frame, or nil until more bytes arrive. `frameLength` reads the length of
    /// the frame at the start of what it is given (nil: not enough bytes to tell) and throws on
    /// bytes that cannot start a frame; a length over the maximum throws `tooLarge(length)`.
    public mutating func next<E: Error>(frameLength: (ArraySlice<UInt8>) throws(E) -> Int?,
                                        tooLarge: (Int) -> E) throws(E) -> ArraySlice<UInt8>? {
        let rest = buffer[start...]
        guard let n = try frameLength(rest) else { return nil }
        guard n <= maximumFrameSize else { throw tooLarge(n) }
        guard rest.count >= n else { return nil }
        let frame = rest.prefix(n)
        start += n
        compact()
        return frame
    }

    public enum Item: Equatable, Sendable {
        case frame(ArraySlice<UInt8>)
        /// A frame of this length, over `maximumFrameSize`, is being dropped as it arrives.
        case skipped(Int)
    }

    /// As `next`, but a frame over the maximum and up to `hardLimit` is dropped as its bytes
    /// arrive (`.skipped`, once, when it starts), never buffered whole: a peer's oversized message
    /// costs a read, not the connection. Longer than `hardLimit` throws as `next` does.
    public mutating func next<E: Error>(frameLength: (ArraySlice<UInt8>) throws(E) -> Int?, tooLarge: (Int) -> E,
                                        skippingUpTo hardLimit: Int) throws(E) -> Item? {
        guard dropPending() else { return nil }
        let rest = buffer[start...]
        guard let n = try frameLength(rest) else { return nil }
        if n > maximumFrameSize, n <= hardLimit {
            skipping = n
            _ = dropPending()
            return .skipped(n)
        }
        // Within the maximum (or past the hard limit, which `next` throws on).
        return try next(frameLength: frameLength, tooLarge: tooLarge).map(Item.frame)
    }

    /// Drops what is buffered of a frame being skipped; true when none is left to drop.
    private mutating func dropPending() -> Bool {
        guard skipping > 0 else { return true }
        let n = min(skipping, buffer.count - start)
        skipping -= n
        start += n
        compact()
        return skipping == 0
    }

    private mutating func compact() {
        if start == buffer.count {
            buffer.removeAll(keepingCapacity: buffer.count <= Self.compactAfter)
            start = 0
        } else if start >= Self.compactAfter, start * 2 >= buffer.count {
            buffer.removeFirst(start)
            start = 0
        }
    }

    /// Drops whatever is buffered (the stream is out of step, or a new connection starts).
    public mutating func reset() {
        buffer = []
        start = 0
        skipping = 0
    }
}
