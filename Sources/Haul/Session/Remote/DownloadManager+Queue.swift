import Foundation

/// The waiting queue as a remote front end sees it (aria2's `tellWaiting`, `changePosition`,
/// `addUri` with a position or paused) and the concurrency limit at run time.
extension DownloadManager {
    /// Queued downloads in the order the scheduler will start them: higher priority first,
    /// then first in, first out (per-host limits aside). Paused downloads are left out (see
    /// `waitingInQueueOrder()`).
    ///
    /// Read by letting a copy of the scheduler admit everything, so the order is the
    /// scheduler's own and never a second bookkeeping that could drift from it. O(queued).
    package func queuedInStartOrder() -> [DownloadID] {
        var copy = scheduler
        copy.limits = SchedulerState.Limits(global: .max, perHost: nil, sequentialGroups: false)
        return copy.admit()
    }

    /// Queued and paused downloads in the queue's one order, as aria2's waiting queue: a
    /// paused download keeps its place (it is passed over until resumed), and one paused
    /// while running goes to the front of its priority. Failed downloads have no place.
    /// Downloads waiting for their server without a slot (`DownloadInfo.isWaitingToRetry`,
    /// state `.queued`) come first, in the order they will take a slot again: they take the
    /// next free slots before anything that never started (see `ReturningQueue`).
    /// `moveInQueue` indices refer to this order. O(queue).
    package func waitingInQueueOrder() -> [DownloadID] {
        let returning = scheduler.returningOrder()
        return returning.isEmpty ? scheduler.waitingOrder() : returning + scheduler.waitingOrder()
    }

    /// Like `add(_:)`, and then: with `paused`, the download is stored paused and waits for
    /// `resume(_:)` (events: `.queued`, then `.paused`) at its place in the queue; with
    /// `queueIndex`, it is moved to that index of `waitingInQueueOrder()` (clamped) before any
    /// slot is handed out, paused or not.
    @discardableResult
    package func add(_ request: DownloadRequest, queueIndex: Int?, paused: Bool) async throws(HaulError) -> DownloadID {
        try await addNew([request], group: nil, paused: paused, queueIndex: queueIndex)[0]
    }

    /// Moves a queued or paused download to `index` of `waitingInQueueOrder()` (clamped to
    /// the queue) and returns the index it now has; a paused one stays paused at its new
    /// place. Throws `.unknownDownload`, or `.invalidState` when the download has no place in
    /// the queue (running, failed or finished downloads, and those waiting for their server,
    /// whose precedence over the queue is not a place in it; pausing one gives it a place).
    /// Downloads waiting for their server stay ahead of every index.
    ///
    /// The rule is `QueueMove`'s: the download takes the priority of its new predecessor and
    /// those behind it in that priority are queued again after it. Its request's `priority`
    /// changes accordingly and is stored. Cost: the downloads queued again, each leaving a
    /// stale entry that the scheduler drops when it reaches it.
    @discardableResult
    package func moveInQueue(_ id: DownloadID, toIndex index: Int) throws(HaulError) -> Int {
        guard let record = records[id] else { throw unknown(id) }
        if let refusal = record.machine.queueMoveRefusal(of: id, returning: scheduler.isReturning(id), hasPlace: scheduler.hasPlace(id)) {
            throw refusal
        }
        let ahead = scheduler.returningOrder().count
        let priorityOf = { (other: DownloadID) in self.records[other]?.kept.priority ?? 0 }
        guard let move = QueueMove(moving: id, in: scheduler.waitingOrder(), to: max(0, index - ahead), priorityOf: priorityOf) else {
            throw HaulError(.invalidState, "download \(id) is not waiting in the queue")
        }
        guard !move.requeue.isEmpty else { return move.index + ahead }
        records[id]?.kept.priority = move.priority
        markWholeRowDirty(id)
        for other in move.requeue {
            guard let record = records[other] else { continue }
            let held = scheduler.isHeld(other)
            scheduler.dequeue(other)
            enqueueForScheduling(record, held: held)
        }
        return move.index + ahead
    }

    /// The global limit of downloads fetching at once, as it is now.
    package var maxConcurrentDownloads: Int { scheduler.limits.global }

    /// Changes the global limit at run time (at least 1). A higher limit starts queued
    /// downloads at once; a lower one lets running downloads finish and starts no new one
    /// until fewer than `limit` run. Not stored: a new manager starts from its configuration.
    package func setMaxConcurrentDownloads(_ limit: Int) throws(HaulError) {
        guard limit >= 1 else { throw HaulError(.invalidRequest, "the concurrency limit must be at least 1, got \(limit)") }
        // In a fleet the session's limit is the claim's (saved with the session's settings).
        guard fleet == nil else { return }
        scheduler.limits.global = limit
        admitQueued()
    }
}
