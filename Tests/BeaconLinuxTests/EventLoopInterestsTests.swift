import BeaconKit
import Glibc
import XCTest
@testable import BeaconLinux

/// Several interests in one descriptor (issue 40): input, kept until unwatched, beside a one-shot
/// writable interest; and the stream socket that waits for writability instead of a retry timer.
final class EventLoopInterestsTests: XCTestCase {
    private func socketPair() -> (FileDescriptor, FileDescriptor) {
        var fds: [Int32] = [0, 0]
        XCTAssertEqual(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds), 0)
        return (FileDescriptor(fds[0]), FileDescriptor(fds[1]))
    }

    func testInputAndAOneShotWritableInterestOnOneDescriptor() throws {
        let (a, b) = socketPair()
        defer { a.close(); b.close() }
        let loop = EventLoop()
        var reads = 0, writables = 0
        loop.watch(a) {
            var buf = [UInt8](repeating: 0, count: 16)
            while let n = try? a.read(into: &buf), n > 0 { reads += 1 }
        }
        loop.watchWritable(a) { writables += 1 }
        _ = try b.write([1])
        loop.runOnce(maxWaitMs: 100)
        XCTAssertEqual(writables, 1, "writable: its handler ran")
        XCTAssertEqual(reads, 1, "the input handler ran in the same turn: neither interest replaced the other")
        // The writable interest was one-shot (the socket is still writable); the input one stays.
        _ = try b.write([2])
        loop.runOnce(maxWaitMs: 100)
        XCTAssertEqual(writables, 1)
        XCTAssertEqual(reads, 2)
        // A new input handler keeps a writable interest; unwatch drops both.
        loop.watchWritable(a) { writables += 1 }
        loop.watch(a) { reads += 100 }
        loop.runOnce(maxWaitMs: 100)
        XCTAssertEqual(writables, 2)
        loop.watchWritable(a) { writables += 1 }
        loop.unwatch(a)
        _ = try b.write([3])
        let before = loop.wakeups
        loop.runOnce(maxWaitMs: 30)
        XCTAssertEqual(loop.wakeups - before, 1)
        XCTAssertEqual(writables, 2)
        XCTAssertEqual(reads, 2)
    }

    /// A stream given more than its socket takes holds the rest and writes it when the loop says
    /// the socket is writable: no timer, whole and in order, then `streamDrained`.
    func testAFullStreamSocketIsWrittenWhenWritableNotOnATimer() throws {
        let (a, b) = socketPair()
        defer { b.close() }
        var small: Int32 = 4096
        setsockopt(a.rawValue, SOL_SOCKET, SO_SNDBUF, &small, socklen_t(MemoryLayout<Int32>.size))
        let loop = EventLoop()
        let peer = Peer()
        let stream = StreamSocket(loop: loop, fd: a, peer: "the test's peer", delegate: peer)
        stream.watch()
        let sent = (0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        stream.send(sent)
        XCTAssertTrue(stream.isBacklogged, "1 MiB is more than the socket takes at once")
        XCTAssertEqual(loop.scheduledTimerCount, 0, "no retry timer")
        var got: [UInt8] = []
        var buf = [UInt8](repeating: 0, count: 65536)
        var turns = 0
        while got.count < sent.count, turns < 10_000 {
            while let n = try? b.read(into: &buf), n > 0 { got += buf[0..<n] }
            loop.runOnce(maxWaitMs: 200)
            turns += 1
        }
        while let n = try? b.read(into: &buf), n > 0 { got += buf[0..<n] }
        XCTAssertEqual(got.count, sent.count)
        XCTAssertTrue(got == sent, "whole and in order")
        XCTAssertFalse(stream.isBacklogged)
        XCTAssertEqual(peer.drained, 1)
        XCTAssertNil(peer.failure)
        stream.close()
    }
}

private final class Peer: StreamSocketDelegate {
    var drained = 0
    var failure: String?
    func stream(_ stream: StreamSocket, received bytes: [UInt8]) {}
    func stream(_ stream: StreamSocket, failed why: String) { failure = why }
    func streamDrained(_ stream: StreamSocket) { drained += 1 }
}
