/// The leases one daemon holds, and when it must stop trusting each, as a value without I/O:
/// the manager's renewal task feeds it what it sent and what the store answered, and does what
/// it returns (see `docs/fleet.md`, "Failover").
///
/// The store decides expiry by the server's clock; a daemon cannot read that clock, so it keeps
/// a local deadline per lease on its monotonic clock: the instant it *sent* the claim or
/// renewal, plus the lease's duration, minus a margin. The server read `now()` after that
/// instant, so its expiry comes later than the local deadline as long as both clocks run at
/// about the same rate (their offsets do not matter). At the local deadline, without a renewal
/// (the database unreachable, the daemon paused), the daemon stops the transfer: by the time
/// another daemon can claim the download, this one no longer touches its files.
struct LeaseBook: Sendable {
    typealias Instant = ContinuousClock.Instant

    /// Why a daemon must stop a transfer.
    enum StopReason: Sendable, Hashable {
        /// The store said the lease is gone (taken over, released, the download deleted).
        case lost
        /// No renewal came back before the local deadline.
        case expiredLocally
    }

    struct Stop: Sendable, Hashable {
        var lease: DownloadLease
        var reason: StopReason
    }

    /// The leases' duration, as claims and renewals ask for it.
    let duration: Duration
    private var held: [DownloadID: (lease: DownloadLease, deadline: Instant)] = [:]

    init(duration: Duration) {
        precondition(duration > .zero, "a lease must last")
        self.duration = duration
    }

    /// How often to renew: three times per lease, so one slow or failed renewal loses nothing.
    var renewalInterval: Duration { duration / 3 }
    /// Taken off each local deadline, for clocks that run at slightly different rates.
    var margin: Duration { duration / 10 }

    var count: Int { held.count }
    /// Every lease held, for a renewal (in ID order, as the store locks them).
    var leases: [DownloadLease] { held.values.map(\.lease).sorted { $0.id < $1.id } }
    /// The lease a write about `id` must carry (`LeaseFence`), nil when this daemon does not hold it.
    func lease(of id: DownloadID) -> DownloadLease? { held[id]?.lease }
    /// Whether `id` is held and its local deadline has not passed at `now`: what a daemon checks
    /// right before it renames the download's file into place.
    func holds(_ id: DownloadID, at now: Instant) -> Bool { held[id].map { now < $0.deadline } ?? false }
    /// The earliest local deadline: when `expire(now:)` has something to stop, if no renewal comes.
    var nextDeadline: Instant? { held.values.map(\.deadline).min() }

    /// A claim sent at `sent` returned these downloads.
    mutating func claimed(_ downloads: [ClaimedDownload], sentAt sent: Instant) {
        for download in downloads {
            held[download.lease.id] = (download.lease, deadline(from: sent))
        }
    }

    /// A renewal sent at `sent` came back: the renewed leases get a later deadline; the lost
    /// ones are dropped and their transfers must stop. Leases released while it was in flight
    /// are left alone.
    mutating func renewed(_ renewal: LeaseRenewal, sentAt sent: Instant) -> [Stop] {
        let extended = deadline(from: sent)
        for lease in renewal.renewed where held[lease.id]?.lease == lease {
            held[lease.id]?.deadline = extended
        }
        return renewal.lost.compactMap { lease in
            guard held[lease.id]?.lease == lease else { return nil }
            held[lease.id] = nil
            return Stop(lease: lease, reason: .lost)
        }
    }

    /// The download ended here (its fenced, releasing write committed) or its release was sent.
    mutating func released(_ id: DownloadID) {
        held[id] = nil
    }

    /// Drops and returns the leases whose local deadline has passed at `now`.
    mutating func expire(now: Instant) -> [Stop] {
        let expired = held.values.filter { $0.deadline <= now }.map(\.lease).sorted { $0.id < $1.id }
        for lease in expired { held[lease.id] = nil }
        return expired.map { Stop(lease: $0, reason: .expiredLocally) }
    }

    private func deadline(from sent: Instant) -> Instant {
        sent.advanced(by: duration - margin)
    }
}
