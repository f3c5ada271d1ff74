@testable import Haul
import Testing

@Suite("Token bucket")
struct TokenBucketTests {
    let start = ContinuousClock.now

    func at(_ milliseconds: Int) -> ContinuousClock.Instant { start + .milliseconds(milliseconds) }

    /// A full bucket lets its capacity through without a wait, then asks the taker to repay the debt at the rate.
    @Test func burstThenDebt() {
        var bucket = TokenBucket(bytesPerSecond: 100_000, now: at(0))
        #expect(bucket.capacity == 25_000)
        #expect(bucket.take(25_000, now: at(0)) == .zero)
        #expect(bucket.take(10_000, now: at(0)) == .milliseconds(100))
        #expect(bucket.delay(now: at(60)) == .milliseconds(40))
        #expect(bucket.delay(now: at(100)) == .zero)
    }

    /// Idle time refills the bucket, but never beyond its capacity.
    @Test func refillIsCapped() {
        var bucket = TokenBucket(bytesPerSecond: 100_000, now: at(0))
        _ = bucket.take(25_000, now: at(0))
        _ = bucket.delay(now: at(10_000))
        #expect(bucket.tokens == 25_000)
        #expect(bucket.take(30_000, now: at(10_000)) == .milliseconds(50))
    }

    /// A new rate repays an existing debt at the new speed, from the moment it is set.
    @Test func rateChangeRepaysDebtAtTheNewRate() {
        var bucket = TokenBucket(bytesPerSecond: 100_000, now: at(0))
        _ = bucket.take(125_000, now: at(0))   // 100 KB of debt: 1 s at the old rate
        bucket.setRate(1_000_000, now: at(0))
        #expect(bucket.delay(now: at(0)) == .milliseconds(100))
        bucket.setRate(50_000, now: at(50))    // 50 KB repaid, 50 KB left at 50 KB/s
        #expect(bucket.delay(now: at(50)) == .seconds(1))
    }

    /// Takers that always wait what they are told move, over a long time, no more than the rate allows plus one burst and one buffer.
    @Test(arguments: [1_000, 64 * 1024, 1 << 20])
    func longRunKeepsToTheRate(chunk: Int) {
        let rate: Int64 = 500_000
        var bucket = TokenBucket(bytesPerSecond: rate, now: at(0))
        var now = at(0)
        var moved: Int64 = 0
        let end = at(20_000)
        // Two takers sharing the bucket, taking turns.
        while now < end {
            moved += Int64(chunk)
            now = now + bucket.take(chunk, now: now)
            moved += Int64(chunk)
            now = now + bucket.take(chunk, now: now)
        }
        let elapsed = at(0).duration(to: now).inSeconds
        let allowed = Double(rate) * elapsed + bucket.capacity + Double(2 * chunk)
        #expect(Double(moved) <= allowed)
        #expect(Double(moved) >= Double(rate) * elapsed * 0.99, "the limit must not slow a taker below the rate either")
    }
}
