import NIOConcurrencyHelpers

/// The numbers of a running transfer that change with every chunk. The transfer task writes
/// them under a lock and the progress ticker reads them, so neither hops onto the manager per
/// chunk: progress costs one uncontended lock per buffer, not an actor round trip.
///
/// The download's own speed limit lives here too, under the same lock: the object is shared
/// by the manager (which changes the limit) and the transfer (which counts bytes against it),
/// and an unlimited transfer pays nothing beyond the lock it already takes for progress.
final class LiveTransfer: Sendable {
    struct Snapshot: Sendable, Hashable {
        var completedBytes: Int64 = 0
        var expectedBytes: Int64?
    }

    private struct State {
        var snapshot = Snapshot()
        var limit: TokenBucket?
        /// Set by `setSpeedLimit`: the manager's word wins over the request's stored value.
        var limitIsExplicit = false
    }

    private let box = NIOLockedValueBox(State())

    func reset(completedBytes: Int64, expectedBytes: Int64?) {
        box.withLockedValue { $0.snapshot = Snapshot(completedBytes: completedBytes, expectedBytes: expectedBytes) }
    }

    /// Counts received bytes; returns how long the download's limit asks to wait, nil for no wait.
    @discardableResult
    func add(_ count: Int) -> Duration? {
        box.withLockedValue { state in
            state.snapshot.completedBytes += Int64(count)
            guard state.limit != nil else { return nil }
            let delay = state.limit!.take(count, now: .now)
            return delay > .zero ? delay : nil
        }
    }

    /// How long until the download's limit allows more; nil for no wait.
    func pendingDelay() -> Duration? {
        box.withLockedValue { state in
            guard state.limit != nil else { return nil }
            let delay = state.limit!.delay(now: .now)
            return delay > .zero ? delay : nil
        }
    }

    var snapshot: Snapshot { box.withLockedValue { $0.snapshot } }

    /// The download's limit in bytes per second, nil when unlimited.
    var speedLimit: Int64? { box.withLockedValue { $0.limit?.bytesPerSecond } }

    /// Sets (nil or below 1: removes) the download's limit, from now on and for later attempts.
    func setSpeedLimit(_ bytesPerSecond: Int64?) {
        box.withLockedValue { state in
            state.limitIsExplicit = true
            Self.apply(bytesPerSecond, to: &state)
        }
    }

    /// The limit stored with the request, applied when a transfer starts unless
    /// `setSpeedLimit` has spoken since (a transfer may carry an older copy of the request).
    func adoptSpeedLimit(_ bytesPerSecond: Int64?) {
        box.withLockedValue { state in
            guard !state.limitIsExplicit else { return }
            Self.apply(bytesPerSecond, to: &state)
        }
    }

    private static func apply(_ bytesPerSecond: Int64?, to state: inout State) {
        guard let rate = bytesPerSecond, rate > 0 else {
            state.limit = nil
            return
        }
        if state.limit == nil {
            state.limit = TokenBucket(bytesPerSecond: rate, now: .now)
        } else if state.limit!.bytesPerSecond != rate {
            state.limit!.setRate(rate, now: .now)
        }
    }
}
