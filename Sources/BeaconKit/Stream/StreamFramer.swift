/// Cuts a byte stream (a socket's reads) into whole frames, for any protocol whose frame says its
/// own length in its first bytes: D-Bus messages and MQTT packets. Pure: bytes in, frames out.
/// Bounded: a frame longer than `maximumFrameSize` is an error as soon as its length is known, so
/// the buffer never holds more than one frame's worth plus the last read.
public struct StreamFramer: Sendable {
    public let maximumFrameSize: Int
    private var buffer: [UInt8] = []
    /// Where the next frame starts in `buffer`: taking a frame moves this, not the bytes.
    private var start = 0
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
        if start == buffer.count {
            buffer.removeAll(keepingCapacity: buffer.count <= Self.compactAfter)
            start = 0
        } else if start >= Self.compactAfter, start * 2 >= buffer.count {
            buffer.removeFirst(start)
            start = 0
        }
        return frame
    }

    /// Drops whatever is buffered (the stream is out of step, or a new connection starts).
    public mutating func reset() {
        buffer = []
        start = 0
    }
}
