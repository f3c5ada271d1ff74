/// What the manager owes the store, and when to write it: one value type instead of a set of
/// actor variables, so that the batching rules can be read in one place and tested without I/O.
///
/// Why batch at all: a state change per download per transition, written one transaction each,
/// cost more than fetching thousands of small files. So changes are collected and written
/// together, at most every `flushInterval`; placement intents (which a verified file waits
/// for before its rename) are written sooner, after a short window in which the intents of
/// other files verified at the same time can join them.
///
/// The queue decides; the manager carries out what it returns (arms a timer, writes a batch)
/// and reports back (`timerFired`, `batchFailed`, `batchWritten`). A batch that fails is put
/// back whole and written again after a delay (or with an earlier write), so nothing owed is
/// ever dropped.
struct StoreWriteQueue {
    /// What changed about a download since it was last written.
    enum Change {
        /// Its state or progress: only the progress columns are rewritten.
        case state
        /// Its request, group or part key: the whole row is rewritten.
        case wholeRow
        /// Its segments (with a checkpoint): the progress columns and the segment rows.
        case segments
        /// Its group only (an earlier download taken into a new group, as a re-run of the same
        /// command does with each file it already has): the group column alone is rewritten.
        case group
    }

    /// The two batching timers: state changes wait long, placement intents briefly.
    enum Timer: Hashable {
        case flush
        case placement
    }

    /// What the manager must do after an event.
    enum Action: Equatable {
        case none
        /// Start a timer that calls `timerFired` after this long, then writes a batch.
        case armTimer(Timer, after: Duration)
    }

    /// One write's worth of changes, taken out of the queue.
    struct Batch {
        /// Downloads whose progress columns are written.
        var progress: Set<DownloadID> = []
        /// Of those, the ones written whole.
        var wholeRows: Set<DownloadID> = []
        /// Of those, the ones whose segments are written too.
        var segments: Set<DownloadID> = []
        /// Downloads whose group column alone is written (not among `wholeRows`).
        var groupMoves: Set<DownloadID> = []
        /// Intents written alone (those of downloads written whole ride in the row).
        var placements: [StoredPlacement] = []
        /// Downloads forgotten by the manager whose rows are deleted.
        var deletions: [DownloadID] = []
        /// Groups left without a download, deleted after `deletions`.
        var deletedGroups: [String] = []

        var isEmpty: Bool {
            progress.isEmpty && groupMoves.isEmpty && placements.isEmpty && deletions.isEmpty && deletedGroups.isEmpty
        }
    }

    let flushInterval: Duration
    let placementWindow: Duration

    private var pending = Batch()
    /// Writes that failed since the last one that went through.
    private(set) var failuresInARow = 0
    /// Timers armed and not yet fired: further changes join the write they will start.
    private(set) var armed: Set<Timer> = []

    init(flushInterval: Duration, placementWindow: Duration) {
        self.flushInterval = flushInterval
        self.placementWindow = placementWindow
    }

    var isEmpty: Bool { pending.isEmpty }

    /// Whether `id` has changes not yet taken into a batch.
    func owes(_ id: DownloadID) -> Bool { pending.progress.contains(id) || pending.groupMoves.contains(id) }

    /// A download changed. The first change after a write arms the batching timer.
    mutating func changed(_ id: DownloadID, _ change: Change) -> Action {
        note(id, change)
        return arm(.flush, after: flushInterval)
    }

    /// Arms the batching timer for what is owed already (events of an outbox, a failed batch).
    mutating func flushOwed() -> Action {
        arm(.flush, after: flushInterval)
    }

    /// Like `changed`, without arming a timer: the caller writes at once (a checkpoint).
    mutating func note(_ id: DownloadID, _ change: Change) {
        if change == .group {
            pending.groupMoves.insert(id)
            return
        }
        pending.progress.insert(id)
        switch change {
        case .state, .group: break
        case .wholeRow: pending.wholeRows.insert(id)
        case .segments: pending.segments.insert(id)
        }
    }

    /// A verified file's placement intent must be written before its rename. While other
    /// downloads are still fetching, it waits `placementWindow` for their intents; a lone
    /// download does not wait.
    mutating func placementRecorded(_ placement: StoredPlacement, othersFetching: Bool) -> Action {
        pending.placements.append(placement)
        return arm(.placement, after: othersFetching ? placementWindow : .zero)
    }

    /// The file of `id` was not placed after all (its write failed): the completion written
    /// with its intent must not be written later, with the failed batch.
    mutating func dropCompletion(of id: DownloadID) {
        pending.placements.removeAll { $0.id == id }
    }

    /// The manager forgot a download (removed, or beyond the retention rule): its row goes.
    mutating func forgotten(_ id: DownloadID) {
        abandon(id)
        pending.deletions.append(id)
    }

    /// The download is no longer this daemon's (its fleet lease was lost): nothing owed about
    /// it is written, and its row stays for its new owner.
    mutating func abandon(_ id: DownloadID) {
        pending.progress.remove(id)
        pending.wholeRows.remove(id)
        pending.segments.remove(id)
        pending.groupMoves.remove(id)
        pending.placements.removeAll { $0.id == id }
    }

    /// The manager forgot a group whose downloads are all gone: its row goes too.
    mutating func groupForgotten(_ name: String) {
        pending.deletedGroups.append(name)
    }

    /// An armed timer went off: the caller writes now (`takeBatch`), which takes everything
    /// owed, whichever timer it was.
    mutating func timerFired(_ timer: Timer) {
        armed.remove(timer)
    }

    /// Everything owed, for one write; the queue is empty afterwards.
    mutating func takeBatch() -> Batch {
        var batch = pending
        pending = Batch()
        // A row written whole carries its intent already (a completion is written after it),
        // and its group.
        batch.placements.removeAll { $0.completion == nil && batch.wholeRows.contains($0.id) }
        batch.groupMoves.subtract(batch.wholeRows)
        return batch
    }

    /// The write of `batch` failed: it is owed again, before what came since, and written
    /// again after a delay that doubles with each failure in a row (up to `longestRetryDelay`),
    /// whether or not anything else changes meanwhile. A store that went away for a while (a
    /// database restarted) gets everything owed once it is back: a download whose end was
    /// owed must not wait for another download's change to be written, as in a fleet, where
    /// the lease it gives back is what lets the next download be claimed.
    mutating func batchFailed(_ batch: Batch) -> Action {
        pending.progress.formUnion(batch.progress)
        pending.wholeRows.formUnion(batch.wholeRows)
        pending.segments.formUnion(batch.segments)
        pending.groupMoves.formUnion(batch.groupMoves)
        pending.placements = batch.placements + pending.placements
        pending.deletions = batch.deletions + pending.deletions
        pending.deletedGroups = batch.deletedGroups + pending.deletedGroups
        failuresInARow += 1
        return arm(.flush, after: retryDelay)
    }

    /// Verified files whose intents could not be written because the store could not be
    /// reached: their placement is tried again after the same delay as a failed batch.
    mutating func placementsDeferred() -> Action {
        arm(.placement, after: retryDelay)
    }

    /// A write went through: the next failure is retried soon again.
    mutating func batchWritten() {
        failuresInARow = 0
    }

    /// The delay before a failed write is tried again: the batching delay, doubled with
    /// each failure in a row after the first.
    var retryDelay: Duration {
        let doublings = max(0, min(failuresInARow - 1, 16))
        return min(Self.longestRetryDelay, max(flushInterval, .milliseconds(50)) * (1 << doublings))
    }

    /// The longest wait between two attempts to write to a store that keeps failing.
    static let longestRetryDelay = Duration.seconds(5)

    private mutating func arm(_ timer: Timer, after delay: Duration) -> Action {
        guard armed.insert(timer).inserted else { return .none }
        return .armTimer(timer, after: delay)
    }
}
