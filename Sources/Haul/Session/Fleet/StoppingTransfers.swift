/// Transfers a fleet member stopped because their lease was lost (`DownloadManager.abandon`)
/// and whose end the lane has not reported yet, and claims of the same downloads that wait for
/// that end: a value without I/O, kept in `FleetState`.
///
/// Why: a download this daemon gave up can come back to it (its lease expired in the store and
/// the next claim, this daemon's own, takes it again). Everything the stopped transfer still
/// reports is keyed by the same `DownloadID` as the new one: its last checkpoints and its end
/// must not be taken for the new transfer's (an end `stopped` would reach a download that
/// nobody asked to stop), and a new transfer started while the old one still holds the part
/// file's lock would find the file busy. So reports of a stopping transfer are dropped, and a
/// claim of its download is taken only once that transfer has ended.
struct StoppingTransfers: Sendable {
    /// Downloads whose stopped transfer has not reported its end yet.
    private var stopping: Set<DownloadID> = []
    /// Claims that arrived while their download's old transfer was still stopping.
    private var waiting: [DownloadID: ClaimedDownload] = [:]

    /// What to do with a transfer's end the lane reported.
    enum End: Sendable, Hashable {
        /// The end of the download's current transfer: concluded as usual.
        case current
        /// The end of a transfer stopped for a lost lease: dropped. `take` is a claim of the
        /// same download that waited for it, to be taken now.
        case stale(take: ClaimedDownload?)
    }

    var isEmpty: Bool { stopping.isEmpty && waiting.isEmpty }

    /// The download's lease was lost and its transfer told to stop; `endComing`: the lane still
    /// has that transfer (running, queued, or its end not yet taken), so its end will come.
    /// A claim of the download that was waiting goes with the lease.
    mutating func abandoned(_ id: DownloadID, endComing: Bool) {
        waiting[id] = nil
        if endComing { stopping.insert(id) }
    }

    /// Whether what the lane or the transfer reports about `id` (checkpoints, its end) comes
    /// from a transfer stopped for a lost lease.
    func isStopping(_ id: DownloadID) -> Bool { stopping.contains(id) }

    /// A claim of `claim`'s download: true when it can be taken now; false when the download's
    /// old transfer is still stopping (the claim is kept and `transferEnded` hands it back).
    mutating func claimed(_ claim: ClaimedDownload) -> Bool {
        guard stopping.contains(claim.lease.id) else { return true }
        waiting[claim.lease.id] = claim
        return false
    }

    /// The lane reported the end of a transfer of `id`.
    mutating func transferEnded(_ id: DownloadID) -> End {
        guard stopping.remove(id) != nil else { return .current }
        return .stale(take: waiting.removeValue(forKey: id))
    }
}
