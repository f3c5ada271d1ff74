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
    /// Groups the store found complete by a download's end that, by the time it committed,
    /// had been started again here: announced once that download has concluded.
    var completedGroups: [DownloadID: String] = [:]
    /// Downloads this daemon took over from a daemon that stopped renewing.
    var takeovers = 0
    /// A `haul_control` notification came: the claim loop first reads the pauses and cancels
    /// other daemons' clients asked of downloads held here (`DownloadManager+FleetControl`).
    var controlsDue = false

    init(membership: FleetMembership, leasing: any DownloadLeasing) {
        self.membership = membership
        self.leasing = leasing
        self.book = LeaseBook(duration: membership.leaseDuration)
    }

    /// Downloads placing their verified file whose fenced completion the store refused: their
    /// files are not renamed (`DownloadManager.writePlacements`); taken by it.
    var refusedPlacements: Set<DownloadID> = []

    /// The lease of `id` is lost, or no longer trusted (its local deadline passed). Returns
    /// whether its transfer stops and the download is forgotten here (`abandon`).
    ///
    /// Not while the download is `placing`: its bytes are verified and its completion (with the
    /// placement intent) is written, or about to be, fenced by `lease` and giving it back. The
    /// store then decides: a fence that commits means the lease still held at that moment, the
    /// download is completed and no other daemon can claim it, so the file is renamed and the
    /// download concludes here, as a member of its group (forgetting it made a group summary
    /// leave it out, docs/fleet.md gap 8); a refused fence means another daemon owns it, and
    /// nothing is renamed (`refusedPlacements`).
    mutating func leaseLost(_ id: DownloadID, lease: DownloadLease?, placing: Bool) -> Bool {
        let held = book.lease(of: id) ?? lease
        book.released(id)
        if placing, let held = ending[id] ?? held {
            ending[id] = held
            return false
        }
        ending[id] = nil
        lost.insert(id)
        return true
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
