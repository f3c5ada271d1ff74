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
    /// Downloads whose lease was lost while a write about them was on its way: whatever that
    /// write carried for them was refused by the store, and nothing more is written.
    var lost: Set<DownloadID> = []
    /// The claim loop, the poll that wakes it, and the renewal loop.
    var tasks: [Task<Void, Never>] = []
    /// Groups the store found complete by a download's end that, by the time it committed,
    /// had been started again here: announced once that download has concluded.
    var completedGroups: [DownloadID: String] = [:]
    /// Downloads this daemon took over from a daemon that stopped renewing.
    var takeovers = 0

    init(membership: FleetMembership, leasing: any DownloadLeasing) {
        self.membership = membership
        self.leasing = leasing
        self.book = LeaseBook(duration: membership.leaseDuration)
    }

    /// The lease a write about `id` carries, and whether that write gives it back.
    func fence(for id: DownloadID) -> (lease: DownloadLease, releasing: Bool)? {
        if let lease = ending[id] { return (lease, true) }
        return book.lease(of: id).map { ($0, false) }
    }

    /// Local slots not taken by a lease held or being given back.
    var freeSlots: Int { max(0, membership.slots - book.count - ending.count) }
}
