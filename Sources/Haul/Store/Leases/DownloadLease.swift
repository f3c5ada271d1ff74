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
    /// A pause or cancel asked through another daemon that its previous owner did not carry
    /// out before it died: the claimer carries it out instead of running the download.
    var control: FleetControl? = nil

    /// Whether this claim took the download from a daemon that stopped renewing (killed,
    /// paused, cut off): the new owner continues it from the store's durable state.
    var isTakeover: Bool { previousOwner != nil }
}

/// What a renewal found: leases extended, and leases the daemon no longer holds (expired and
/// taken over, released, or the download deleted), whose transfers it must stop.
struct LeaseRenewal: Sendable, Hashable {
    var renewed: [DownloadLease]
    var lost: [DownloadLease]
    /// Pauses and cancels asked through other daemons of downloads whose lease was renewed:
    /// their owner stops them (`DownloadManager+FleetControl`).
    var controls: [DownloadID: FleetControl] = [:]
}

/// What a control of a download (`DownloadLeasing.control`) did in the store.
enum ControlOutcome: Sendable, Hashable {
    /// No such download in the session.
    case unknown
    /// Refused for the download's state, nothing written.
    case refused(HaulError)
    /// Done in the store: nothing was needed, a request was recorded for the daemon running
    /// the download (and that daemon woken), or an earlier one withdrawn.
    case recorded(FleetControlPlan)
    /// Nobody held the download: the caller holds it now, under this lease, to carry the
    /// control out as its owner and give the lease back with that write.
    case leased(DownloadLease)
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
    /// A client's pause, resume or cancel of `id` (of `session`) through a daemon that does not
    /// hold it: decided from its row, locked (`FleetControlPlan`), and carried out in one
    /// transaction; a lease for `owner` of `duration` when the caller must act as the owner.
    func control(
        _ control: FleetControl, of id: DownloadID, session: String, for owner: String, leaseFor duration: Duration
    ) async throws(HaulError) -> ControlOutcome
    /// The controls asked of downloads under `leases` (still held), not carried out yet.
    func requestedControls(_ leases: [DownloadLease]) async throws(HaulError) -> [DownloadID: FleetControl]
}
