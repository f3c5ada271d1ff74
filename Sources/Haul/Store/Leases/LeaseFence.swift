import NIOConcurrencyHelpers

/// A condition on a batch of writes about one download: they apply only if the download is
/// still leased to the writer at the same epoch when their transaction commits
/// (`StoreWrite.fenced`).
///
/// Fenced writes go through the store's group commit like every other write, so they stay in
/// order with the daemon's earlier writes; a refused fence skips its own writes and not the
/// others' in the same transaction. The store records the refusal here, and
/// `DownloadStoring.submit(_:fencedBy:releasing:)` turns it into the caller's error.
///
/// The SQLite store has no leases (one daemon owns its file): there a fence always holds.
final class LeaseFence: Sendable {
    let lease: DownloadLease
    /// Whether the same transaction gives the lease back after the writes (a download's end:
    /// its completion and its release commit together, so no other daemon can claim it in
    /// between and no lease outlives it).
    let releasing: Bool
    /// With a releasing fence: the group of the download, whose completion the same
    /// transaction checks (`completedGroup`).
    let group: GroupOfLease?
    /// Appended to the session's outbox in the same transaction when the group completes, so
    /// that a daemon killed right after the commit cannot lose it.
    let groupEvent: StoredEvent?
    private let refusal = NIOLockedValueBox<Refusal?>(nil)
    private let groupDone = NIOLockedValueBox(false)

    /// A download's group, as the store keys it.
    struct GroupOfLease: Sendable, Hashable {
        var session: String
        var name: String
    }

    /// Who held the download instead, when the store refused the writes.
    struct Refusal: Sendable, Hashable {
        var owner: String?
        var epoch: Int64?
    }

    init(lease: DownloadLease, releasing: Bool, group: GroupOfLease? = nil, groupEvent: StoredEvent? = nil) {
        self.lease = lease
        self.releasing = releasing
        self.group = group
        self.groupEvent = groupEvent
    }

    /// Set by the store when this fence's writes left `group` with no unfinished download:
    /// the group completed in this transaction. Its check takes the group's row lock, so of
    /// two daemons finishing a group's last downloads at once exactly one sees it complete.
    func groupCompleted() {
        groupDone.withLockedValue { $0 = true }
    }

    /// Whether this fence's transaction completed its group.
    var completedGroup: Bool { groupDone.withLockedValue { $0 } }

    /// Set by the store inside the transaction that skipped the writes.
    func refuse(_ refusal: Refusal) {
        self.refusal.withLockedValue { $0 = refusal }
    }

    var refused: Refusal? { refusal.withLockedValue { $0 } }

    /// The caller's error for a refused fence.
    func error(_ refusal: Refusal) -> HaulError {
        let holder: String
        switch (refusal.owner, refusal.epoch) {
        case (let owner?, let epoch?): holder = "it is now leased to \(owner) at epoch \(epoch)"
        case (nil, let epoch?): holder = "nobody holds it now (epoch \(epoch))"
        default: holder = "it is no longer in the store"
        }
        return HaulError(.invalidState, "write refused: \(lease) is stale; \(holder)")
    }
}

extension DownloadStoring {
    /// Applies `writes` (all about `lease.id`) in the store's group commit only if the download
    /// is still leased to `lease.owner` at `lease.epoch` then; with `releasing`, gives the lease
    /// back in the same transaction. Throws `.invalidState` when the lease was lost: nothing of
    /// `writes` was applied.
    func submit(_ writes: [StoreWrite], fencedBy lease: DownloadLease, releasing: Bool = false) async throws(HaulError) {
        let fence = LeaseFence(lease: lease, releasing: releasing)
        try await submit(.fenced(fence, writes))
        if let refusal = fence.refused { throw fence.error(refusal) }
    }
}
