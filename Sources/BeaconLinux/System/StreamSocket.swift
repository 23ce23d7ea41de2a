import BeaconKit
import Glibc

/// Whoever owns a `StreamSocket` hears it here, at once.
protocol StreamSocketDelegate: AnyObject {
    /// Bytes as they arrived.
    func stream(_ stream: StreamSocket, received bytes: [UInt8])
    /// The first failure (the socket is closed), in words that name the peer.
    func stream(_ stream: StreamSocket, failed why: String)
    /// The outbox emptied after the socket was full: the owner may write what it held back.
    func streamDrained(_ stream: StreamSocket)
}

extension StreamSocketDelegate {
    func streamDrained(_ stream: StreamSocket) {}
}

/// What one read or write on a stream's transport came to.
enum TransportIO: Equatable {
    /// Bytes read or taken (reads: at least one).
    case moved(Int)
    /// Nothing now: try again when the socket is readable or writable (a TLS session may need
    /// to read before it can write).
    case wouldBlock(Readiness)
    /// The peer closed the stream.
    case closed
    case failed(String)
}

/// What a stream waits for when it cannot go on now.
enum Readiness: Equatable { case readable, writable }

/// How a `StreamSocket`'s bytes cross: the socket itself, or a TLS session over it.
protocol StreamTransport: AnyObject {
    func receive(into buf: inout [UInt8]) -> TransportIO
    func transmit(_ bytes: UnsafeRawBufferPointer) -> TransportIO
    /// Bytes wait beyond the socket, where poll cannot see them (inside a TLS session).
    var hasPending: Bool { get }
    /// Last words before the socket closes (TLS's close_notify), never blocking.
    func closing()
}

/// The socket itself (EINTR retried by `syscall`; no SIGPIPE).
final class PlainTransport: StreamTransport {
    private let fd: FileDescriptor
    init(_ fd: FileDescriptor) { self.fd = fd }

    func receive(into buf: inout [UInt8]) -> TransportIO {
        do throws(Errno) {
            guard let n = try readUnlessWouldBlock(fd, &buf) else { return .wouldBlock(.readable) }
            return n == 0 ? .closed : .moved(n)
        } catch {
            return .failed("\(error)")
        }
    }

    func transmit(_ bytes: UnsafeRawBufferPointer) -> TransportIO {
        let raw = fd.rawValue
        do throws(Errno) {
            return .moved(try syscall { Glibc.send(raw, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL)) })
        } catch where error == .wouldBlock {
            return .wouldBlock(.writable)
        } catch {
            return .failed("\(error)")
        }
    }

    var hasPending: Bool { false }
    func closing() {}
}

/// A connected, non-blocking stream socket on the event loop (the D-Bus system bus, an MQTT
/// broker): bytes out through an outbox written as fast as the socket takes them (a full socket
/// is written again when the loop says it is writable), bytes in handed over as they arrive, through a `StreamTransport` (plain, or TLS). The first failure closes it and is reported once to the delegate, in words that name
/// `peer` ("the broker closed the connection").
final class StreamSocket {
    private let loop: EventLoop
    private let fd: FileDescriptor
    private let transport: StreamTransport
    private let peer: String
    /// See `EventLoop.watch(_:coalesceMs:lost:_:)`: input read in batches, not per message.
    private let coalesceMs: Int64
    private var outbox: [UInt8] = []
    /// Kept between turns: allocating and zeroing 64 KiB at every wakeup was work on the loop's
    /// hot path (the heap kept the freed block resident anyway).
    private var readBuffer = [UInt8](repeating: 0, count: StreamSocket.readSize)
    /// The transport needs input before it can write (TLS): the next input flushes too.
    private var flushOnInput = false
    private(set) var isOpen = true
    weak var delegate: StreamSocketDelegate?

    init(loop: EventLoop, fd: FileDescriptor, transport: StreamTransport? = nil, peer: String, coalesceMs: Int64 = 0,
         delegate: StreamSocketDelegate) {
        self.loop = loop; self.fd = fd; self.peer = peer; self.coalesceMs = coalesceMs
        self.transport = transport ?? PlainTransport(fd)
        self.delegate = delegate
    }

    /// Starts reading.
    func watch() {
        loop.watch(fd, coalesceMs: coalesceMs, lost: { [weak self] e in self?.fail("the connection to \(self?.peer ?? "") broke (\(e))") }) { [weak self] in
            self?.readAvailable()
        }
    }

    /// Bytes wait for the socket (it took less than it was given).
    var isBacklogged: Bool { !outbox.isEmpty }

    func send(_ bytes: [UInt8]) {
        guard isOpen else { return }
        outbox += bytes
        flush()
    }

    /// Closes without a word: what is still in the outbox is dropped.
    func close() {
        guard isOpen else { return }
        isOpen = false
        loop.unwatch(fd)
        transport.closing()
        fd.close()
        outbox = []
    }

    private func fail(_ why: String) {
        guard isOpen else { return }
        close()
        delegate?.stream(self, failed: why)
    }

    private func flush() {
        while isOpen, !outbox.isEmpty {
            switch outbox.withUnsafeBytes({ transport.transmit($0) }) {
            case .moved(let n):
                outbox.removeFirst(n)
            case .wouldBlock(.writable):
                loop.watchWritable(fd) { [weak self] in self?.flushAgain() }
                return
            case .wouldBlock(.readable):
                flushOnInput = true
                return
            case .closed:
                return fail("\(peer) closed the connection")
            case .failed(let why):
                return fail("writing to \(peer) failed (\(why))")
            }
        }
    }

    private func flushAgain() {
        flush()
        if isOpen && outbox.isEmpty { delegate?.streamDrained(self) }
    }

    /// Reads per wakeup, at most: a peer that floods us (a local program on the bus) is read in
    /// turns with everything else on the loop, never until it stops (poll wakes us again).
    static let readsPerTurn = 4
    /// Bytes per read: a turn takes up to 256 KiB in 4 system calls (16 reads of 8 KiB took 128).
    static let readSize = 65536

    private func readAvailable() {
        if flushOnInput {
            flushOnInput = false
            flushAgain()
        }
        for _ in 0..<Self.readsPerTurn where isOpen {
            switch transport.receive(into: &readBuffer) {
            case .moved(let n): delegate?.stream(self, received: Array(readBuffer[0..<n]))
            case .wouldBlock: return
            case .closed: return fail("\(peer) closed the connection")
            case .failed(let why): return fail("reading from \(peer) failed (\(why))")
            }
        }
        // What a TLS session holds already decrypted wakes no poll: read on, next turn.
        if isOpen && transport.hasPending { loop.post { [weak self] in self?.readAvailable() } }
    }
}
