import XCTest
@testable import BeaconKit

/// The Eddystone-TLM advertising count (SPEC §3): events scheduled while each set was on air.
final class AdvertisingCounterTests: XCTestCase {
    func testOneSlotCountsOneEventAtEnableThenOnePerInterval() {
        var c = AdvertisingCounter()
        XCTAssertEqual(c.count(at: 0), 0)
        c.enabled(slot: 0, intervalMs: 100, at: 1000)
        XCTAssertEqual(c.count(at: 1000), 1)
        XCTAssertEqual(c.count(at: 1099), 1)
        XCTAssertEqual(c.count(at: 1100), 2)
        XCTAssertEqual(c.count(at: 2000), 11)
        // Off at 2050: floor(1050 / 100) + 1 = 11 events, kept.
        c.disabled(slot: 0, at: 2050)
        XCTAssertEqual(c.count(at: 2050), 11)
        XCTAssertEqual(c.count(at: 60_000), 11)
        XCTAssertFalse(c.isEnabled(slot: 0))
        // Disabling a slot that is off changes nothing.
        c.disabled(slot: 0, at: 70_000)
        XCTAssertEqual(c.count(at: 80_000), 11)
    }

    func testThreeSlotsAddUp() {
        var c = AdvertisingCounter()
        c.enabled(slot: 0, intervalMs: 100, at: 0)
        c.enabled(slot: 1, intervalMs: 250, at: 100)
        c.enabled(slot: 2, intervalMs: 1000, at: 500)
        // 1000/100+1 = 11, 900/250+1 = 4, 500/1000+1 = 1.
        XCTAssertEqual(c.count(at: 1000), 16)
        // Slot 1 closes at 1200 with 1100/250+1 = 5.
        c.disabled(slot: 1, at: 1200)
        XCTAssertEqual(c.count(at: 1200), 13 + 5 + 1)
        // At 3000: 31 + 5 + (2500/1000+1 = 3).
        XCTAssertEqual(c.count(at: 3000), 39)
        XCTAssertTrue(c.isEnabled(slot: 0))
        XCTAssertFalse(c.isEnabled(slot: 1))
        XCTAssertTrue(c.isEnabled(slot: 2))
    }

    func testAGrowingIntervalNeverTakesTheCountBack() {
        var c = AdvertisingCounter()
        c.enabled(slot: 0, intervalMs: 100, at: 0)
        XCTAssertEqual(c.count(at: 1000), 11)
        // The old formula, time since start / interval, would say 1000/1000 = 1 here.
        c.enabled(slot: 0, intervalMs: 1000, at: 1000)
        XCTAssertEqual(c.count(at: 1000), 12, "the old stretch's 11, then the new stretch's first event")
        XCTAssertEqual(c.count(at: 1999), 12)
        XCTAssertEqual(c.count(at: 2000), 13)
        XCTAssertEqual(c.count(at: 10_000), 21)
        // And back to a short interval: the new stretch counts from its own start.
        c.enabled(slot: 0, intervalMs: 100, at: 10_000)
        XCTAssertEqual(c.count(at: 10_000), 22)
        XCTAssertEqual(c.count(at: 10_500), 27)
        var last: UInt32 = 0
        for t in stride(from: Int64(10_000), through: 20_000, by: 7) {
            XCTAssertGreaterThanOrEqual(c.count(at: t), last)
            last = c.count(at: t)
        }
    }

    func testTheSameIntervalAgainKeepsTheStretch() {
        var c = AdvertisingCounter()
        c.enabled(slot: 3, intervalMs: 100, at: 0)
        c.enabled(slot: 3, intervalMs: 100, at: 550)
        XCTAssertEqual(c.count(at: 1000), 11)
    }

    func testTimeOffAirIsNotCounted() {
        var c = AdvertisingCounter()
        c.enabled(slot: 0, intervalMs: 100, at: 0)
        c.disabled(slot: 0, at: 1000)
        XCTAssertEqual(c.count(at: 1000), 11)
        XCTAssertEqual(c.count(at: 61_000), 11, "a minute off air adds nothing")
        c.enabled(slot: 0, intervalMs: 100, at: 61_000)
        XCTAssertEqual(c.count(at: 61_000), 12)
        XCTAssertEqual(c.count(at: 62_000), 22, "the old formula would say 620")
    }

    func testAllDisabledClosesEverySlot() {
        var c = AdvertisingCounter()
        c.enabled(slot: 0, intervalMs: 100, at: 0)
        c.enabled(slot: 1, intervalMs: 200, at: 0)
        c.enabled(slot: 2, intervalMs: 500, at: 0)
        c.allDisabled(at: 1000)
        // 11 + 6 + 3.
        XCTAssertEqual(c.count(at: 1000), 20)
        XCTAssertEqual(c.count(at: 100_000), 20)
        XCTAssertFalse((0..<3).contains { c.isEnabled(slot: $0) })
        c.enabled(slot: 1, intervalMs: 200, at: 2000)
        XCTAssertEqual(c.count(at: 2000), 21)
        XCTAssertEqual(c.count(at: 2400), 23)
        // Nothing on air: allDisabled again is harmless.
        c.allDisabled(at: 2400)
        c.allDisabled(at: 3000)
        XCTAssertEqual(c.count(at: 5000), 23)
    }

    func testCountWrapsAsTLMDoesWhileTheTotalKeepsGoing() {
        var c = AdvertisingCounter()
        c.enabled(slot: 0, intervalMs: 20, at: 0)
        let wrap = Int64(UInt32.max) + 1
        // total = t / 20 + 1.
        XCTAssertEqual(c.count(at: (wrap - 2) * 20), UInt32.max)
        XCTAssertEqual(c.count(at: (wrap - 1) * 20), 0)
        XCTAssertEqual(c.count(at: (wrap + 4) * 20), 5)
        XCTAssertEqual(c.total(at: (wrap + 4) * 20), UInt64(wrap) + 5)
    }

    func testIntervalsBelowTheSpecMinimumCountAsTwentyMilliseconds() {
        var c = AdvertisingCounter()
        c.enabled(slot: 0, intervalMs: 0, at: 0)
        c.enabled(slot: 1, intervalMs: 5, at: 0)
        XCTAssertEqual(c.count(at: 1000), 51 + 51)
    }

    func testOutOfRangeSlotsAreIgnored() {
        var c = AdvertisingCounter()
        for slot in [-1, 256, 1000, Int.max, Int.min] {
            c.enabled(slot: slot, intervalMs: 100, at: 0)
            c.disabled(slot: slot, at: 500)
        }
        XCTAssertEqual(c, AdvertisingCounter())
        XCTAssertEqual(c.count(at: 10_000), 0)
        c.enabled(slot: 255, intervalMs: 100, at: 0)
        XCTAssertEqual(c.count(at: 100), 2)
    }

    func testClockGlitchesNeverMakeAStretchNegativeOrTakeTheCountBack() {
        var c = AdvertisingCounter()
        c.enabled(slot: 0, intervalMs: 100, at: 1000)
        c.disabled(slot: 0, at: 900)
        XCTAssertEqual(c.count(at: 900), 1, "a stretch of negative length is one event")
        XCTAssertEqual(c.count(at: 5000), 1)

        var d = AdvertisingCounter()
        d.enabled(slot: 0, intervalMs: 100, at: 1000)
        d.enabled(slot: 1, intervalMs: 100, at: 2000)
        XCTAssertEqual(d.count(at: 2000), 12)
        // A stale timestamp: taken as the latest time seen, 2000.
        d.disabled(slot: 0, at: 1500)
        XCTAssertEqual(d.count(at: 2000), 12)
        // A query before the latest change is answered as of that change.
        XCTAssertEqual(d.count(at: 0), 12)
    }

    func testExtremeTimesNeitherTrapNorWrap() {
        var c = AdvertisingCounter()
        for slot in 0..<256 { c.enabled(slot: slot, intervalMs: 20, at: .min) }
        XCTAssertEqual(c.total(at: .max), .max, "saturates")
        c.allDisabled(at: .max)
        XCTAssertEqual(c.total(at: .max), .max)
        c.enabled(slot: 0, intervalMs: 20, at: .min)
        XCTAssertEqual(c.total(at: .max), .max)
    }

    // MARK: - pseudo-random sequences

    /// A 64-bit LCG (Knuth's MMIX constants): the same sequence on every run.
    struct LCG {
        var state: UInt64
        mutating func next(_ bound: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((state >> 33) % UInt64(bound))
        }
    }

    /// An independent model: every stretch kept, summed from scratch.
    struct Model {
        var stretches: [(slot: Int, since: Int64, until: Int64?, interval: Int64)] = []
        mutating func enabled(_ slot: Int, _ interval: UInt16, _ t: Int64) {
            guard slot >= 0, slot < 256 else { return }
            let i = Int64(max(interval, 20))
            if let k = stretches.firstIndex(where: { $0.slot == slot && $0.until == nil }) {
                if stretches[k].interval == i { return }
                stretches[k].until = t
            }
            stretches.append((slot, t, nil, i))
        }
        mutating func disabled(_ slot: Int, _ t: Int64) {
            for k in stretches.indices where stretches[k].slot == slot && stretches[k].until == nil {
                stretches[k].until = t
            }
        }
        mutating func allDisabled(_ t: Int64) {
            for k in stretches.indices where stretches[k].until == nil { stretches[k].until = t }
        }
        func total(_ t: Int64) -> UInt64 {
            var sum: UInt64 = 0
            for s in stretches {
                let end = s.until ?? t
                sum += UInt64(max(0, end - s.since) / s.interval + 1)
            }
            return sum
        }
    }

    private static let intervals: [UInt16] = [0, 20, 100, 152, 1000, 1022, 10_240]

    /// Calls in time order (as the daemon makes them), often several at the same millisecond:
    /// after every call the count at that time is at least the one before, and matches the model.
    func testRandomCallsInTimeOrderNeverTakeTheCountBack() {
        for seed: UInt64 in [1, 2, 42, 0xfeed] {
            var rng = LCG(state: seed)
            var c = AdvertisingCounter()
            var model = Model()
            var now: Int64 = Int64(rng.next(1_000_000))
            var last: UInt64 = 0
            for step in 0..<4000 {
                if rng.next(3) > 0 { now += Int64(rng.next(rng.next(10) == 0 ? 600_000 : 2500)) }
                let slot = rng.next(20) == 0 ? 256 + rng.next(10) : rng.next(6) - 1
                switch rng.next(10) {
                case 0..<4:
                    let interval = Self.intervals[rng.next(Self.intervals.count)]
                    c.enabled(slot: slot, intervalMs: interval, at: now)
                    model.enabled(slot, interval, now)
                case 4..<7:
                    c.disabled(slot: slot, at: now)
                    model.disabled(slot, now)
                case 7:
                    c.allDisabled(at: now)
                    model.allDisabled(now)
                default:
                    break   // only time passes
                }
                let total = c.total(at: now)
                XCTAssertGreaterThanOrEqual(total, last, "seed \(seed) step \(step)")
                XCTAssertEqual(total, model.total(now), "seed \(seed) step \(step)")
                XCTAssertEqual(c.count(at: now), UInt32(truncatingIfNeeded: total))
                last = total
            }
            XCTAssertGreaterThan(last, 0, "seed \(seed): the sequence did put something on air")
        }
    }

    /// Changes reported with stale timestamps (up to 5 s late, sometimes far in the past) among
    /// ones stamped on time: the count as of the latest change never decreases, and a query for
    /// an earlier time is answered as of that change.
    func testRandomCallsWithClockGlitchesNeverTakeTheCountBack() {
        for seed: UInt64 in [7, 99, 12345] {
            var rng = LCG(state: seed)
            var c = AdvertisingCounter()
            var clock: Int64 = 0
            var seen: Int64 = .min
            var last: UInt64 = 0
            for step in 0..<4000 {
                clock += Int64(rng.next(3000))
                let stale = rng.next(4) == 0
                let t = stale ? clock - Int64(rng.next(rng.next(10) == 0 ? 1_000_000 : 5000)) : clock
                let slot = rng.next(5)
                switch rng.next(8) {
                case 0..<3: c.enabled(slot: slot, intervalMs: Self.intervals[rng.next(Self.intervals.count)], at: t)
                case 3..<6: c.disabled(slot: slot, at: t)
                case 6: c.allDisabled(at: t)
                default: continue
                }
                seen = max(seen, t)
                let now = c.total(at: seen)
                XCTAssertGreaterThanOrEqual(now, last, "seed \(seed) step \(step)")
                XCTAssertEqual(c.total(at: t), now, "seed \(seed) step \(step)")
                last = now
            }
            XCTAssertGreaterThan(last, 0)
        }
    }
}
