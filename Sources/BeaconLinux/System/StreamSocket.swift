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

/// A connected, non-blocking stream socket on the event loop (the D-Bus system bus, an MQTT
/// broker): bytes out through an outbox written as fast as the socket takes them (the loop
/// watches input only, so a full socket is tried again shortly), bytes in handed over as they
/// arrive. The first failure closes it and is reported once to the delegate, in words that name
/// `peer` ("the broker closed the connection").
final class StreamSocket {
    private let loop: EventLoop
    private let fd: FileDescriptor
    private let peer: String
    private var outbox: [UInt8] = []
    private let flushTimer: LoopTimer
    private(set) var isOpen = true
    weak var delegate: StreamSocketDelegate?

    init(loop: EventLoop, fd: FileDescriptor, peer: String, delegate: StreamSocketDelegate) {
        self.loop = loop; self.fd = fd; self.peer = peer
        self.delegate = delegate
        flushTimer = loop.makeTimer()
    }

    /// Starts reading.
    func watch() {
        loop.watch(fd, lost: { [weak self] e in self?.fail("the connection to \(self?.peer ?? "") broke (\(e))") }) { [weak self] in
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
        flushTimer.cancel()
        loop.unwatch(fd)
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
            let raw = fd.rawValue
            do throws(Errno) {
                let n = try syscall { outbox.withUnsafeBytes { Glibc.send(raw, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) } }
                outbox.removeFirst(n)
            } catch where error == .wouldBlock {
                flushTimer.schedule(afterMs: 20) { [weak self] in self?.flushAgain() }
                return
            } catch {
                return fail("writing to \(peer) failed (\(error))")
            }
        }
    }

    private func flushAgain() {
        flush()
        if isOpen && outbox.isEmpty { delegate?.streamDrained(self) }
    }

    /// Reads per wakeup, at most: a peer that floods us (a local program on the bus) is read in
    /// turns with everything else on the loop, never until it stops (poll wakes us again).
    static let readsPerTurn = 16

    private func readAvailable() {
        var buf = [UInt8](repeating: 0, count: 8192)
        for _ in 0..<Self.readsPerTurn where isOpen {
            let n: Int?
            do throws(Errno) {
                n = try readUnlessWouldBlock(fd, &buf)
            } catch {
                return fail("reading from \(peer) failed (\(error))")
            }
            guard let n else { return }
            if n == 0 { return fail("\(peer) closed the connection") }
            delegate?.stream(self, received: Array(buf[0..<n]))
        }
    }
}
