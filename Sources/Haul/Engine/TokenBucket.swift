/// A token bucket that paces bytes to a rate: the arithmetic of a speed limit, with the time
/// passed in, so that it is tested without clocks or sleeps.
///
/// Tokens (bytes) refill at `bytesPerSecond` up to `capacity`, the burst a transfer may take
/// after being idle. A taker never waits before taking: bytes have already arrived when a
/// transfer asks, so it takes them at once and may drive the bucket into debt (negative
/// tokens). It then waits for the debt to be repaid before reading more, which keeps the
/// average rate exact whatever the size of the buffers the network delivers. Several takers
/// sharing one bucket (the global limit) share its debt, so together they keep to the rate.
struct TokenBucket: Sendable, Hashable {
    typealias Instant = ContinuousClock.Instant

    private(set) var bytesPerSecond: Int64
    /// Most tokens the bucket holds: a quarter of a second at the rate (at least 16 KiB), so
    /// that a limit takes hold within a fraction of a second and a short pause does not earn a
    /// long burst.
    private(set) var capacity: Double
    private(set) var tokens: Double
    private var updated: Instant

    /// A full bucket: the first `capacity` bytes pass without waiting.
    init(bytesPerSecond: Int64, now: Instant) {
        precondition(bytesPerSecond > 0, "a rate limit must be positive")
        self.bytesPerSecond = bytesPerSecond
        self.capacity = Self.capacity(for: bytesPerSecond)
        self.tokens = capacity
        self.updated = now
    }

    static func capacity(for bytesPerSecond: Int64) -> Double {
        max(Double(bytesPerSecond) / 4, 16 * 1024)
    }

    /// Takes `count` bytes' worth of tokens (into debt if need be) and returns how long the
    /// taker should wait before reading more; zero when the bucket still has tokens.
    mutating func take(_ count: Int, now: Instant) -> Duration {
        refill(now)
        tokens -= Double(count)
        return delay(now: now)
    }

    /// How long until the debt is repaid at the current rate; zero when there is none.
    mutating func delay(now: Instant) -> Duration {
        refill(now)
        guard tokens < 0 else { return .zero }
        return .nanoseconds(Int64((-tokens * 1e9 / Double(bytesPerSecond)).rounded(.up)))
    }

    /// Changes the rate from `now` on. Tokens earned so far are kept (up to the new capacity);
    /// a debt is kept too, and is repaid at the new rate.
    mutating func setRate(_ bytesPerSecond: Int64, now: Instant) {
        precondition(bytesPerSecond > 0, "a rate limit must be positive")
        refill(now)
        self.bytesPerSecond = bytesPerSecond
        capacity = Self.capacity(for: bytesPerSecond)
        tokens = min(tokens, capacity)
    }

    private mutating func refill(_ now: Instant) {
        guard now > updated else { return }
        tokens = min(capacity, tokens + updated.duration(to: now).inSeconds * Double(bytesPerSecond))
        updated = now
    }
}
