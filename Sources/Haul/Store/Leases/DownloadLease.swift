/// A daemon's right to run one download, as the fleet's store granted it.
///
/// `epoch` is the fencing token: every claim of the download increments it, so a lease whose
/// epoch is no longer the row's was taken over (or released) since. Writes about the download
/// carry the lease (`LeaseFence`) and the store refuses them once it is stale: a daemon that
/// paused past its lease, or lost its network, cannot overwrite the new owner's rows or
/// complete the file a second time.
///
/// When the lease ends is not here: it is the database's clock that decides (`leaseUntil`,
/// compared with `now()` in the server), never a daemon's.
struct DownloadLease: Sendable, Hashable, CustomStringConvertible {
    var id: DownloadID
    /// The daemon that holds it (its fleet ID, new at every start).
    var owner: String
    var epoch: Int64

    var description: String { "\(id) leased to \(owner) at epoch \(epoch)" }
}

/// A download a claim gave to a daemon.
struct ClaimedDownload: Sendable, Hashable {
    var lease: DownloadLease
    /// The host its per-host limit counts it for (as the store derives it from the URL).
    var host: String
    /// The daemon whose lease had expired when this claim took the download over; nil when
    /// nobody held it (queued, released, or never leased).
    var previousOwner: String?

    /// Whether this claim took the download from a daemon that stopped renewing (killed,
    /// paused, cut off): the new owner continues it from the store's durable state.
    var isTakeover: Bool { previousOwner != nil }
}

/// What a renewal found: leases extended, and leases the daemon no longer holds (expired and
/// taken over, released, or the download deleted), whose transfers it must stop.
struct LeaseRenewal: Sendable, Hashable {
    var renewed: [DownloadLease]
    var lost: [DownloadLease]
}

/// The store side of a fleet: claiming a session's runnable downloads under leases, renewing
/// them while they run, and giving them back. Implemented by `PostgresStore`; see
/// `docs/fleet.md`.
protocol DownloadLeasing: Sendable {
    /// Takes up to `limit` runnable downloads of `session` for `owner`, in queue order, within
    /// the session's limits counted across every daemon, each under a lease of `duration`.
    func claim(session: String, for owner: String, upTo limit: Int, leaseFor duration: Duration) async throws(HaulError) -> [ClaimedDownload]
    /// Extends each of `leases` still held (unexpired, same epoch) to `duration` from now.
    func renew(_ leases: [DownloadLease], for duration: Duration) async throws(HaulError) -> LeaseRenewal
    /// Gives leases back (a download ended, was paused, or the daemon stops); returns those
    /// that were still held. Stale ones are ignored: someone else holds them now.
    @discardableResult
    func release(_ leases: [DownloadLease]) async throws(HaulError) -> [DownloadLease]
}
