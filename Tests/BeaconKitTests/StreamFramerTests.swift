import XCTest
@testable import BeaconKit

/// A frame format for the tests: one length byte (the whole frame's length), then the rest; 0 is
/// not a length.
private enum ByteFrameError: Error, Equatable { case zero, tooLarge(Int) }
private func byteFrameLength(_ b: ArraySlice<UInt8>) throws(ByteFrameError) -> Int? {
    guard let n = b.first else { return nil }
    guard n > 0 else { throw .zero }
    return Int(n)
}

final class StreamFramerTests: XCTestCase {
    private func frames(_ f: inout StreamFramer) throws(ByteFrameError) -> [[UInt8]] {
        var out: [[UInt8]] = []
        while let frame = try f.next(frameLength: byteFrameLength, tooLarge: ByteFrameError.tooLarge) { out.append(Array(frame)) }
        return out
    }

    func testFramesSplitAcrossReadsAndSeveralInOneRead() throws {
        var f = StreamFramer(maximumFrameSize: 10)
        f.append([3, 0xaa])
        XCTAssertEqual(try frames(&f), [], "half a frame waits")
        XCTAssertEqual(f.bufferedCount, 2)
        f.append([0xbb, 2, 0xcc, 1, 4])
        XCTAssertEqual(try frames(&f), [[3, 0xaa, 0xbb], [2, 0xcc], [1]])
        XCTAssertEqual(f.bufferedCount, 1, "the start of the next frame is kept")
        f.append([9, 9, 9])
        XCTAssertEqual(try frames(&f), [[4, 9, 9, 9]])
        XCTAssertEqual(f.bufferedCount, 0)
    }

    func testALengthOverTheMaximumFailsBeforeItsBodyArrives() {
        var f = StreamFramer(maximumFrameSize: 10)
        f.append([11])
        XCTAssertThrowsError(try frames(&f)) { XCTAssertEqual($0 as? ByteFrameError, .tooLarge(11)) }
        var fits = StreamFramer(maximumFrameSize: 10)
        fits.append([10])
        XCTAssertEqual(try frames(&fits), [], "the maximum itself is allowed")
    }

    func testTheLengthFunctionsErrorGoesThroughAndResetEmpties() {
        var f = StreamFramer(maximumFrameSize: 10)
        f.append([0, 1, 2])
        XCTAssertThrowsError(try frames(&f)) { XCTAssertEqual($0 as? ByteFrameError, .zero) }
        f.reset()
        XCTAssertEqual(f.bufferedCount, 0)
        f.append([2, 7])
        XCTAssertEqual(try frames(&f), [[2, 7]])
    }

    /// Many small frames taken one at a time: the bytes taken are dropped from the buffer now
    /// and then, so it never grows with the stream.
    func testTheBufferDoesNotGrowWithTheStream() throws {
        var f = StreamFramer(maximumFrameSize: 255)
        for i in 0..<2000 {
            f.append([5, UInt8(i & 0xff), 0, 0, 0, 5])   // one frame and the first byte of the next
            let got = try frames(&f)
            XCTAssertEqual(got.count, 1)
            XCTAssertEqual(got.first?[1], UInt8(i & 0xff))
            f.append([1, 2, 3, 4])
            XCTAssertEqual(try frames(&f).count, 1)
        }
        XCTAssertEqual(f.bufferedCount, 0)
    }

    func testMQTTAndDBusReadersCutTheirStreamsWithIt() throws {
        var mqtt = MQTTPacketReader(maximumPacketSize: 64)
        let two = MQTTPacket.pingResp.encoded() + MQTTPacket.pubAck(packetID: 7).encoded()
        XCTAssertEqual(try mqtt.feed(two.prefix(3)), [.pingResp])
        XCTAssertEqual(try mqtt.feed(two.dropFirst(3)), [.pubAck(packetID: 7)])
        XCTAssertThrowsError(try mqtt.feed([0x30, 100])) { XCTAssertEqual($0 as? MQTTWireError, .tooLarge(102)) }
    }
}
