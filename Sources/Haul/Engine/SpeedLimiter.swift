import NIOConcurrencyHelpers

/// A speed limit shared by several transfers (the manager's global limit, or one shared by
/// several managers through `DownloadManager.Configuration.sharedSpeedLimiter`), changeable
/// while they run. Nil means unlimited, and then taking costs one uncontended lock and nothing
/// else.
package final class SpeedLimiter: Sendable {
    private let bucket: NIOLockedValueBox<TokenBucket?>

    /// A limiter of `bytesPerSecond` (nil, or less than 1, for none).
    package init(bytesPerSecond: Int64?) {
        bucket = NIOLockedValueBox(bytesPerSecond.flatMap(Self.bucket))
    }

    /// The limit in bytes per second, nil when unlimited.
    package var bytesPerSecond: Int64? { bucket.withLockedValue { $0?.bytesPerSecond } }

    /// Sets (or with nil or a value below 1, removes) the limit; transfers waiting on the old
    /// one see the new one within `SpeedThrottle.slice`.
    package func setLimit(_ bytesPerSecond: Int64?) {
        bucket.withLockedValue { bucket in
            guard let rate = bytesPerSecond, rate > 0 else {
                bucket = nil
                return
            }
            if bucket == nil {
                bucket = TokenBucket(bytesPerSecond: rate, now: .now)
            } else {
                bucket!.setRate(rate, now: .now)
            }
        }
    }

    /// Takes `count` bytes; returns how long to wait before reading more, nil for no wait.
    func take(_ count: Int) -> Duration? {
        bucket.withLockedValue { bucket in
            guard bucket != nil else { return nil }
            let delay = bucket!.take(count, now: .now)
            return delay > .zero ? delay : nil
        }
    }

    /// How long until the shared debt is repaid; nil for no wait.
    func pendingDelay() -> Duration? {
        bucket.withLockedValue { bucket in
            guard bucket != nil else { return nil }
            let delay = bucket!.delay(now: .now)
            return delay > .zero ? delay : nil
        }
    }

    private static func bucket(_ rate: Int64) -> TokenBucket? {
        rate > 0 ? TokenBucket(bytesPerSecond: rate, now: .now) : nil
    }
}

/// Waiting on a download's own limit and the manager's global one, after a transfer took bytes.
enum SpeedThrottle {
    /// A wait is slept in slices of at most this, re-reading the limits after each, so that a
    /// limit raised or removed while a transfer waits takes effect at once, not after the
    /// debt computed at the old rate.
    static let slice: Duration = .milliseconds(200)

    /// Counts `count` received bytes against both limits (and the download's progress) and
    /// returns once both allow more. Without limits this takes two locks and never suspends.
    static func account(_ count: Int, live: LiveTransfer, global: SpeedLimiter) async throws(HaulError) {
        let own = live.add(count)
        let shared = global.take(count)
        guard own != nil || shared != nil else { return }
        try await live.holdingReads { () async throws(HaulError) in
            var wait = max(own ?? .zero, shared ?? .zero)
            while wait > .zero {
                do {
                    try await Task.sleep(for: min(wait, slice))
                } catch {
                    throw HaulError(.canceled, "stopped while waiting for the speed limit")
                }
                wait = max(live.pendingDelay() ?? .zero, global.pendingDelay() ?? .zero)
            }
        }
    }
}
