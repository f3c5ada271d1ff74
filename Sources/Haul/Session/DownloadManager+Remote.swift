import Foundation

/// What a remote-control front end (the daemon's aria2-compatible JSON-RPC) needs beyond the
/// in-process API: the waiting queue in start order and moves within it, adding at a queue
/// position or paused, the concurrency limit at run time, pausing and resuming everything at
/// once, changing a download's request before it runs, and forgetting finished downloads.
///
/// These are written against the manager's internals (records, `order`, the scheduler); each
/// function's doc comment is its contract.
extension DownloadManager {
    /// How many downloads are in each state, and the speed of those running.
    package struct StateCounts: Sendable, Hashable {
        package var queued = 0
        package var running = 0
        package var paused = 0
        package var completed = 0
        package var failed = 0
        package var canceled = 0
        /// Sum of the smoothed speeds of running downloads, in bytes per second.
        package var bytesPerSecond: Double = 0
    }

    // MARK: Reading

    /// Counts downloads by state, in one pass and without copying their infos.
    package func stateCounts() -> StateCounts {
        var counts = StateCounts()
        records.scan { _, _, state, _, progress in
            switch state {
            case .queued: counts.queued += 1
            case .running:
                counts.running += 1
                counts.bytesPerSecond += progress.bytesPerSecond
            case .paused: counts.paused += 1
            case .completed: counts.completed += 1
            case .failed: counts.failed += 1
            case .canceled: counts.canceled += 1
            }
        }
        return counts
    }

    /// The IDs of downloads in any of `states`, in the order they were added.
    package func downloadIDs(inStates states: Set<DownloadState>) -> [DownloadID] {
        // Added order is position order; only the matches are sorted.
        var found: [(position: Int64, id: DownloadID)] = []
        records.scan { id, position, state, _, _ in
            if states.contains(state) { found.append((position, id)) }
        }
        return found.sorted { $0.position < $1.position }.map(\.id)
    }

    /// State, group and progress of every download, in no particular order: what totals per
    /// state or per group need, without building each download's `DownloadInfo`.
    package func briefs() -> [DownloadBrief] {
        var briefs: [DownloadBrief] = []
        briefs.reserveCapacity(records.count)
        records.scan { id, _, state, group, progress in
            briefs.append(DownloadBrief(id: id, state: state, group: group, progress: progress))
        }
        return briefs
    }

    /// Infos of the downloads from `offset` (in the order they were added), at most `limit`:
    /// a window of a listing, at a cost that follows the offset and the window.
    package func downloads(offset: Int, limit: Int) -> [DownloadInfo] {
        var skipped = 0
        var window: [DownloadInfo] = []
        for id in order where window.count < limit && records.contains(id) {
            // An info is built only for the window, not for the downloads before it.
            if skipped < offset {
                skipped += 1
            } else if let info = records[id]?.info {
                window.append(info)
            }
        }
        return window
    }

    /// Infos of the given downloads, in the given order; unknown IDs are skipped. One call for
    /// a page of a listing, instead of one `info(_:)` per download.
    package func infos(_ ids: [DownloadID]) -> [DownloadInfo] {
        ids.compactMap { records[$0]?.info }
    }

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

    // MARK: Adding

    /// Like `add(_:)`, and then: with `paused`, the download is stored paused and waits for
    /// `resume(_:)` (events: `.queued`, then `.paused`) at its place in the queue; with
    /// `queueIndex`, it is moved to that index of `waitingInQueueOrder()` (clamped) before any
    /// slot is handed out, paused or not.
    @discardableResult
    package func add(_ request: DownloadRequest, queueIndex: Int?, paused: Bool) async throws(HaulError) -> DownloadID {
        try await addNew([request], group: nil, paused: paused, queueIndex: queueIndex)[0]
    }

    // MARK: The queue and its limit

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
        if scheduler.isReturning(id) {
            throw HaulError(.invalidState, "download \(id) is waiting for its server; it takes the next free slot once its retry is due, ahead of the queue, so it cannot be moved in it (pause it first)")
        }
        guard record.machine.state == .queued || record.machine.state == .paused, scheduler.hasPlace(id) else {
            throw HaulError(.invalidState, "download \(id) is \(record.machine.publicState.rawValue), not waiting in the queue")
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
        scheduler.limits.global = limit
        admitQueued()
    }

    // MARK: Everything at once

    /// Pauses every queued and running download, keeping bytes and resume state, and returns
    /// once all of them have stopped. Admission is suspended meanwhile, so that no slot a
    /// stopping download frees (and no group a paused one ends) starts a download on the way.
    /// All keep their places in the queue; those that ran (waiting for their server included)
    /// go to the front, in the order they were added.
    package func pauseAll() async {
        admissionSuspended = true
        defer {
            admissionSuspended = false
            admitQueued()
        }
        var stopping: [DownloadID] = []
        var ran: Set<DownloadID> = []
        for id in order where [.queued, .running].contains(records[id]?.machine.publicState) {
            guard var record = records[id] else { continue }
            // Those waiting for their server (shown queued) ran too.
            let wasUnderway = record.machine.isUnderway
            let action = record.machine.pause()
            records[id] = record
            if case .rejected = action { continue }
            perform(action, for: id)
            if wasUnderway { ran.insert(id) }
            if case .stopTransfer = action { stopping.append(id) }
        }
        for id in stopping { await waitUntilStopped(id) }
        // Each went to the front of its priority as it stopped, in whatever order they
        // stopped; as a batch they take the front in the order they were added.
        for id in order.reversed() where ran.contains(id) && scheduler.isHeld(id) {
            guard let record = records[id] else { continue }
            scheduler.dequeue(id)
            enqueueForScheduling(record, held: true, atFront: true)
        }
    }

    /// Queues every paused download again (not failed ones), in the order they were added,
    /// and returns their IDs.
    @discardableResult
    package func resumeAllPaused() -> [DownloadID] {
        let paused = order.filter { records[$0]?.machine.state == .paused }
        for id in paused { try? resume(id) }
        return paused
    }

    // MARK: Changing and forgetting

    /// Replaces the request of a download that has not finished (queued, running or paused):
    /// URL, directory, file name, headers, checksums, conflict policy, metadata, priority,
    /// connections and limit. The new request is validated like `add`; nothing changes when
    /// it is refused. A running download is stopped and started again with the new request in
    /// the slot it holds (it continues from its bytes when the resume rules allow), unless its
    /// URL moves to another host: then it queues again for a slot of that host. Changes asked
    /// while such a restart is under way replace its request: the last one wins. A queued
    /// one keeps its place. A new directory means the part file in the old one is deleted and
    /// the download starts over. Throws `.unknownDownload`, or `.invalidState` for a
    /// completed, failed or canceled download, or one that is being paused or canceled.
    package func replaceRequest(_ id: DownloadID, with request: DownloadRequest) async throws(HaulError) {
        try Self.validate(request)
        guard let record = records[id] else { throw unknown(id) }
        let new = request.normalized
        let sameHost = internedHost(of: new.url) == record.host
        switch (record.machine.state, sameHost) {
        case (.running, true), (.stopping(.restart), true):
            try await restartInSlot(id, with: new)
        case (.running, false), (.waitingToRetry, false), (.waitingForServer, false), (.dueForSlot, false):
            // The new host's limit must count: it queues again for a slot there.
            try await pause(id)
            try replaceIdle(id, with: new)
            try resume(id)
        default:
            try replaceIdle(id, with: new)
        }
    }

    /// Stops the running transfer (or joins a restart under way) and has the next one start
    /// from `request` in the same slot.
    private func restartInSlot(_ id: DownloadID, with request: DownloadRequest) async throws(HaulError) {
        let token = UUID()
        records[id]?.details.replacement = PendingReplacement(token: token, request: request)
        if records[id]?.machine.state == .stopping(.restart) {
            await waitUntilStopped(id)
        } else {
            try await self.request(id) { $0.restart() }
        }
        // Still ours and pending when the transfer ended otherwise: completed, or paused or
        // canceled by another caller meanwhile. (Applied, or replaced by a later change: done.)
        if let pending = records[id]?.details.replacement, pending.token == token {
            records[id]?.details.replacement = nil
            try replaceIdle(id, with: pending.request)
        }
    }

    /// `replaceRequest` for a download that runs no transfer (queued, paused, waiting to retry).
    private func replaceIdle(_ id: DownloadID, with request: DownloadRequest) throws(HaulError) {
        guard let record = records[id] else { throw unknown(id) }
        switch record.machine.state {
        case .queued, .paused, .waitingToRetry, .waitingForServer, .dueForSlot:
            break
        case .completed, .failed, .canceled:
            throw HaulError(.invalidState, "a \(record.machine.publicState.rawValue) download cannot be changed")
        case .running, .stopping:
            throw HaulError(.invalidState, "download \(id) is starting or stopping; change it once it has")
        }
        // Queued and paused ones keep their place (its host may change with the request).
        let queueIndex = scheduler.hasPlace(id) ? waitingInQueueOrder().firstIndex(of: id) : nil
        let held = scheduler.isHeld(id)
        if queueIndex != nil { scheduler.dequeue(id) }
        swapRequest(of: id, for: request)
        if let queueIndex, let updated = records[id] {
            enqueueForScheduling(updated, held: held)
            _ = try? moveInQueue(id, toIndex: queueIndex)
        }
    }

    /// Puts `request` (normalized and validated) in place of the download's request while no
    /// transfer runs; the next transfer starts from it and the durable bytes.
    func swapRequest(of id: DownloadID, for request: DownloadRequest) {
        guard var updated = records[id] else { return }
        let oldDirectory = updated.kept.directory.path
        updated.kept = KeptRequest(request)
        updated.host = internedHost(of: request.url)
        updated.details.transfer = nil
        if request.directory.path != oldDirectory {
            PartFile(directory: oldDirectory, key: updated.partKey.description).discard()
            updated.details.durable = DurableFields()
            updated.details.progress = TransferProgress()
        }
        records[id] = updated
        markWholeRowDirty(id)
    }

    /// Forgets finished downloads (completed, failed or canceled) from memory and from the
    /// store in one transaction, and returns the IDs forgotten; `ids` nil means all finished
    /// ones. Other and unknown IDs are skipped. Placed files stay; a failed download's part
    /// file is deleted, unless a newer download of the same request now uses it.
    @discardableResult
    package func forgetFinished(_ ids: [DownloadID]? = nil) async throws(HaulError) -> [DownloadID] {
        let candidates = ids ?? order
        var forgotten: [DownloadID] = []
        for id in candidates {
            guard let record = records[id], record.machine.publicState.isTerminal else { continue }
            if record.machine.publicState == .failed, ownsPartFile(record) {
                (record.details.transfer?.part ?? PartFile(directory: record.kept.directory.path, key: record.partKey.description)).discard()
            }
            forget(id)
            forgotten.append(id)
        }
        guard !forgotten.isEmpty else { return [] }
        try await store.delete(forgotten)
        return forgotten
    }

    /// Writes every pending change of the downloads' rows now (they are otherwise written in
    /// batches within `storeFlushInterval`). Durable offsets are written at checkpoints anyway.
    package func flushStore() async {
        await flushDirty()
    }

    /// Writes every pending change now, and fails unless the downloads are then saved: when the
    /// store lives in memory (`init(configuration:)`: nothing survives the process), or when the
    /// write failed (a full disk, say), with why. What aria2's `saveSession` promises.
    package func saveStore() async throws(HaulError) {
        guard store.path != nil else {
            throw HaulError(.invalidState, "this manager keeps its downloads in memory; there is no store to save them to")
        }
        guard await flushDirty() else {
            throw lastWriteError ?? HaulError(.fileSystem, "the download store could not be written")
        }
    }
}
