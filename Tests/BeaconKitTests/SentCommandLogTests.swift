import XCTest
@testable import BeaconKit

/// Our own commands as the HCI monitor shows them again (`SentCommandLog`): each copy is ours
/// once, only the same opcode and parameters match, and what is old or too much is forgotten.
final class SentCommandLogTests: XCTestCase {
    func testEachCommandSentIsOursOnceAndOnlyWithTheSameParameters() {
        var log = SentCommandLog()
        log.recordSent(.leSetAdvertiseEnable, [1], at: 0)
        log.recordSent(.leSetAdvertiseEnable, [1], at: 10)
        XCTAssertFalse(log.consume(.leSetAdvertiseEnable, [0], at: 20), "another program's disable")
        XCTAssertFalse(log.consume(.leSetAdvertisingData, [1], at: 20))
        XCTAssertTrue(log.consume(.leSetAdvertiseEnable, [1], at: 20))
        XCTAssertTrue(log.consume(.leSetAdvertiseEnable, [1], at: 20), "sent twice: two copies are ours")
        XCTAssertFalse(log.consume(.leSetAdvertiseEnable, [1], at: 20), "a third is not")
        XCTAssertEqual(log.count, 0)
    }

    func testACopyPastTheHorizonIsNoLongerOurs() {
        var log = SentCommandLog()
        log.recordSent(.leSetAdvertiseEnable, [1], at: 0)
        XCTAssertFalse(log.consume(.leSetAdvertiseEnable, [1], at: SentCommandLog.horizonMs + 1))
        log.recordSent(.leSetAdvertiseEnable, [1], at: 100)
        XCTAssertTrue(log.consume(.leSetAdvertiseEnable, [1], at: 100 + SentCommandLog.horizonMs), "at the horizon: still ours")
    }

    func testTheLogHoldsAtMostItsCapacityForgettingTheOldest() {
        var log = SentCommandLog()
        for i in 0...SentCommandLog.capacity { log.recordSent(.leSetAdvertisingData, [UInt8(i)], at: 0) }
        XCTAssertEqual(log.count, SentCommandLog.capacity)
        XCTAssertFalse(log.consume(.leSetAdvertisingData, [0], at: 0), "the oldest went")
        XCTAssertTrue(log.consume(.leSetAdvertisingData, [UInt8(SentCommandLog.capacity)], at: 0))
    }
}
