import NIOConcurrencyHelpers

/// The numbers of a running transfer that change with every chunk. The transfer task writes
/// them under a lock and the progress ticker reads them, so neither hops onto the manager per
/// chunk: progress costs one uncontended lock per buffer, not an actor round trip.
///
/// The download's own speed limit lives here too, under the same lock: the object is shared
/// by the manager (which changes the limit) and the transfer (which counts bytes against it),
/// and an unlimited transfer pays nothing beyond the lock it already takes for progress.
///
/// So does the read timeout's clock. The HTTP client's own read timeout counts every second
/// without a byte, including those a speed limit makes the transfer wait before it reads more:
/// at a low limit, one large read costs longer than the timeout, and every attempt failed.
/// Here only silence counts: time since the last byte, while the transfer is not holding its
/// reads back (a limit's wait, a checkpoint's flush, hashing, placement). The manager's
/// ticker checks it.
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
        /// When a byte (or the response, or the attempt) last arrived, or a hold ended.
        var lastHeard = ContinuousClock.now
        /// Connections of the transfer holding their reads back on purpose right now.
        var holds = 0
        /// Set by the watchdog when it stopped the attempt for silence.
        var timedOut = false
        /// The URIs fetched from right now (see `servers`).
        var servers: (@Sendable () -> [DownloadServer])?
        /// Received bytes not yet taken by `takeReceivedBytes`, up to `snapshot` as of `countedFrom`.
        var uncounted: Int64 = 0
        var countedFrom: Int64 = 0
    }

    private let box = NIOLockedValueBox(State())

    func reset(completedBytes: Int64, expectedBytes: Int64?) {
        box.withLockedValue {
            $0.uncounted += $0.snapshot.completedBytes - $0.countedFrom
            $0.countedFrom = completedBytes
            $0.snapshot = Snapshot(completedBytes: completedBytes, expectedBytes: expectedBytes)
            $0.lastHeard = .now
        }
    }

    /// The runner began the attempt submitted last: the silence clock starts again from now
    /// (time spent waiting for a worker is not silence). A timeout the watchdog declared
    /// meanwhile stands: the attempt then ends as a timeout, not as a stop nobody asked for.
    func runnerBegan() {
        box.withLockedValue { $0.lastHeard = .now }
    }

    /// An attempt is submitted (`TransferLane.submit`): the silence clock starts from now,
    /// with no hold and no timeout.
    func attemptStarted() {
        box.withLockedValue { state in
            state.lastHeard = .now
            state.holds = 0
            state.timedOut = false
            state.servers = nil
        }
    }

    /// Counts received bytes; returns how long the download's limit asks to wait, nil for no wait.
    @discardableResult
    func add(_ count: Int) -> Duration? {
        box.withLockedValue { state in
            state.snapshot.completedBytes += Int64(count)
            state.lastHeard = .now
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

    /// Bytes received since the last call (across attempts, though `reset` moves the progress
    /// back to a resume offset): what the metrics count, read at a progress tick or the end of
    /// an attempt, so that no received buffer pays for it.
    func takeReceivedBytes() -> Int64 {
        box.withLockedValue { state in
            let received = state.uncounted + state.snapshot.completedBytes - state.countedFrom
            state.uncounted = 0
            state.countedFrom = state.snapshot.completedBytes
            return received
        }
    }

    /// Runs `body` while the transfer holds its reads back on purpose: the time it takes is
    /// not silence from the server.
    func holdingReads<T>(_ body: () async throws(HaulError) -> T) async throws(HaulError) -> T {
        box.withLockedValue { $0.holds += 1 }
        defer {
            box.withLockedValue { state in
                state.holds -= 1
                state.lastHeard = .now
            }
        }
        return try await body()
    }

    /// The process did not run for `span` (see `DownloadManager.starvation`): that span is
    /// not silence from the server, so the silence clock moves on by it (never past `now`).
    func excuseSilence(_ span: Duration, now: ContinuousClock.Instant) {
        box.withLockedValue { state in
            state.lastHeard = min(now, state.lastHeard + span)
        }
    }

    /// The watchdog's check: true (once, and remembered in `timedOut`) when nothing arrived for
    /// longer than `limit` while no read was held back.
    func timeOutIfSilent(longerThan limit: Duration, now: ContinuousClock.Instant) -> Bool {
        box.withLockedValue { state in
            guard !state.timedOut, state.holds == 0, state.lastHeard.duration(to: now) > limit else { return false }
            state.timedOut = true
            return true
        }
    }

    /// Where the attempt fetches from: the transfer sets how to tell (its one URI, or the
    /// mirrors its connections use) and `DownloadManager.servers(of:)` asks.
    func setServers(_ servers: (@Sendable () -> [DownloadServer])?) {
        box.withLockedValue { $0.servers = servers }
    }

    /// The URIs fetched from right now; empty between attempts.
    var servers: [DownloadServer] {
        let probe = box.withLockedValue { $0.servers }
        return probe?() ?? []
    }

    /// Whether the watchdog stopped the current attempt for silence.
    var timedOut: Bool { box.withLockedValue { $0.timedOut } }

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
