/// What a fleet member's manager keeps about its leases and its loops (see
/// `DownloadManager+Fleet`): the actor's one stored property for the fleet, nil with SQLite.
struct FleetState {
    let membership: FleetMembership
    /// The store, as the claims, renewals and releases see it.
    let leasing: any DownloadLeasing
    /// The leases held, with their local deadlines.
    var book: LeaseBook
    /// Leases of downloads that ended here (completed, failed, paused, canceled), given back
    /// by their next write: fenced and releasing, so no other daemon can claim the download
    /// between its end and its release.
    var ending: [DownloadID: DownloadLease] = [:]
    /// Downloads whose lease was lost (or that stop at shutdown): nothing more is written about
    /// them, until this daemon claims one again (`reclaimed`), under a new lease.
    var lost: Set<DownloadID> = []
    /// Transfers stopped for a lost lease that have not ended yet, and claims waiting for them.
    var stopping = StoppingTransfers()
    /// The claim loop, the poll that wakes it, and the renewal loop.
    var tasks: [Task<Void, Never>] = []
    /// Groups the store found complete with a download's completion written before its
    /// rename: announced once that download has concluded, after its own event.
    var completedGroups: [DownloadID: String] = [:]
    /// Downloads this daemon took over from a daemon that stopped renewing.
    var takeovers = 0

    init(membership: FleetMembership, leasing: any DownloadLeasing) {
        self.membership = membership
        self.leasing = leasing
        self.book = LeaseBook(duration: membership.leaseDuration)
    }

    /// This daemon claimed `id` again after losing it: writes about it go out again, fenced by
    /// the new lease (the old life's pending writes were dropped when it was abandoned).
    mutating func reclaimed(_ id: DownloadID) {
        lost.remove(id)
    }

    /// The lease a write about `id` carries, and whether that write gives it back.
    func fence(for id: DownloadID) -> (lease: DownloadLease, releasing: Bool)? {
        if let lease = ending[id] { return (lease, true) }
        return book.lease(of: id).map { ($0, false) }
    }

    /// Local slots not taken by a lease held or being given back.
    var freeSlots: Int { max(0, membership.slots - book.count - ending.count) }
}
