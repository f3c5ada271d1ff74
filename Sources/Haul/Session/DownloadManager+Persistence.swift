import Foundation

/// The resume and placement facts of a download that must survive the process.
struct DurableFields: Sendable, Hashable {
    var validator: Validator?
    var expectedLength: Int64?
    var durableOffset: Int64 = 0
    var placement: PlacementIntent?
    var fileSize: Int64?
    var fileModified: Date?
    /// A segmented download's ranges and durable offsets as last checkpointed (empty for one
    /// connection); what a new process continues each segment from.
    var segments: [DurableSegment] = []
}

/// Keeping the store in step with the records: new downloads are written before they can
/// start; state changes and checkpoints are batched (written at most every
/// `storeFlushInterval`, never per chunk); a placement intent is written before the rename
/// (see `DownloadManager+Placement.swift`).
extension DownloadManager {
    static let storeFlushInterval: Duration = .milliseconds(50)
    /// How many events are appended to the outbox between two trims of it.
    static let eventsBetweenTrims = 1_000
    /// From this many new downloads at once, memory is handed back after the write.
    static let bulkWriteRows = 1_000

    /// Writes new downloads in one transaction, then queues them for the scheduler (a single
    /// one at `queueIndex` of the waiting queue, when given); held back ones are reported
    /// paused and keep their place in the queue without being started.
    ///
    /// `replacing`: earlier downloads these replace, deleted in the same transaction (a re-run
    /// of 5,000 files whose files were deleted wrote its deletions and its new rows apart,
    /// each index page they share twice, before the first transfer could start).
    ///
    /// `markingInUse`: completed downloads taken in again for requests made again, which count
    /// as added at the given date from now on (`inUseToMark(among:)`), marked so in the same
    /// transaction.
    ///
    /// `recordedBy`: the batch's transaction, already open, to which the rows of `ids` and
    /// their replaced downloads went as they were made (`BatchRecording`); `replacing` is then
    /// written already.
    func persistNew(
        _ ids: [DownloadID], queueIndex: Int? = nil, replacing: [DownloadID] = [], markingInUse inUse: (ids: [DownloadID], at: Date)? = nil,
        recordedBy recording: BatchRecording? = nil
    ) async throws(HaulError) {
        var rows = recording == nil ? ids.compactMap { records[$0].map(storedDownload) } : []
        // Dated before the write, so that a row of theirs written meanwhile (a flush runs while
        // this waits) carries the new date too; dated back should the write fail.
        let earlierDates = inUse.map { inUse in inUse.ids.map { records[$0]?.createdAt } } ?? []
        if let inUse { for id in inUse.ids { records[id]?.createdAt = inUse.at } }
        do {
            let started = recording?.opened ?? ContinuousClock.now
            defer { metrics.storeWrote(.new, since: started) }
            if let recording {
                try await commit(recording, markingInUse: inUse)
            } else if replacing.isEmpty, inUse == nil {
                try await store.save(rows)
            } else {
                var writes: [StoreWrite] = []
                if !replacing.isEmpty { writes.append(.delete(replacing)) }
                if !rows.isEmpty { writes.append(.save(rows)) }
                if let inUse { writes.append(.markInUse(inUse.ids, at: inUse.at)) }
                try await store.submit(writes.count == 1 ? writes[0] : .all(writes))
            }
        } catch {
            // Not recorded, so not accepted: take them back out.
            for id in ids { forget(id) }
            if let inUse {
                for (id, date) in zip(inUse.ids, earlierDates) { if let date { records[id]?.createdAt = date } }
            }
            throw error
        }
        rows = []
        let announcesQueued = hub.wants(.queued)
        for id in ids {
            guard let record = records[id] else { continue }
            if announcesQueued { hub.emit(.queued(id)) }
            let paused = record.machine.state == .paused
            if paused { hub.emit(.paused(id, reason: nil)) }
            // Paused ones take their place in the queue too, held (aria2's one waiting queue).
            enqueueForScheduling(record, held: paused)
            if let queueIndex { _ = try? moveInQueue(id, toIndex: queueIndex) }
        }
        admitQueued()
        if ids.count >= Self.bulkWriteRows {
            // After the first transfers started, not before: handing memory back takes a
            // round trip to the store's writer and a walk of the heap.
            let store = self.store
            Task { await store.releaseMemory() }
        }
    }

    func markDirty(_ id: DownloadID) {
        carryOut(writes.changed(id, .state))
    }

    /// Like `markDirty`, for a change to what `markDirty` does not write: the download's
    /// request (priority and speed limit included), group or part key.
    func markWholeRowDirty(_ id: DownloadID) {
        carryOut(writes.changed(id, .wholeRow))
    }

    /// Arms a batching timer the write queue asked for. After shutdown the flush timer is not
    /// armed (the last write of `shutdown` takes everything); a placement is still written,
    /// since its download waits for it.
    func carryOut(_ action: StoreWriteQueue.Action) {
        guard case .armTimer(let timer, let delay) = action else { return }
        guard !isShutDown || timer == .placement else {
            writes.timerFired(timer)
            return
        }
        let clock = configuration.clock
        writeTimers[timer] = Task {
            if delay > .zero { try? await clock.sleep(for: delay) }
            await self.writeTimerFired(timer)
        }
    }

    /// The timer's write, in the timer's own task (no second task to hop through).
    private func writeTimerFired(_ timer: StoreWriteQueue.Timer) async {
        writeTimers[timer] = nil
        writes.timerFired(timer)
        if timer == .placement {
            await writePlacements()
        } else {
            await flushDirty()
        }
    }

    /// Starts the batching delay before the next write, unless one is already pending: for
    /// changes the queue holds already (events waiting in the outbox, a failed batch).
    func scheduleWrite() {
        outbox?.takeWriteRequest()
        guard !writes.isEmpty || outbox?.isEmpty == false else { return }
        carryOut(writes.flushOwed())
    }

    /// Writes every out-of-date row, and the events that explain them, in one transaction.
    /// Writes run one after another (each waits for the one before), so that the outbox's
    /// sequence follows the order of events. On failure the rows stay dirty and the events
    /// pending, and both are tried again after a delay (`StoreWriteQueue.batchFailed`) or
    /// with an earlier write; the durable bytes on disk are unaffected.
    ///
    /// Returns whether the write chained by this call succeeded: a row marked dirty before the
    /// call is then in the store (written by this write or an earlier one).
    @discardableResult
    func flushDirty() async -> Bool {
        let previous = flushChain
        let write = Task {
            _ = await previous?.value
            return await self.writeDirty()
        }
        flushChain = write
        return await write.value
    }

    private func writeDirty() async -> Bool {
        let events = outbox?.drain() ?? []
        guard !writes.isEmpty || !events.isEmpty else { return true }
        let batch = writes.takeBatch()
        var rows: [StoredDownload] = []
        var changed: [StoredDownload] = []
        for id in batch.progress {
            guard let record = records[id] else { continue }
            var row = storedDownload(record)
            if batch.segments.contains(id) { row.segments = record.details.durable.segments }
            if batch.wholeRows.contains(id) { rows.append(row) } else { changed.append(row) }
        }
        let groupMoves = batch.groupMoves.compactMap { id in records[id].map { GroupMove(id: id, group: $0.group) } }
        // Now and then, the outbox's oldest events beyond the bound go with the write.
        let trimsEvents = eventsSinceTrim + events.count >= Self.eventsBetweenTrims
        do {
            let started = ContinuousClock.now
            defer { metrics.storeWrote(.batch, since: started) }
            if fleet != nil {
                try await saveFenced(
                    rows, progressOf: changed, movingGroups: groupMoves, batch: batch, events: events,
                    trimmingEventsTo: trimsEvents ? configuration.retention.maxKeptEvents : nil)
            } else {
                try await store.save(
                    rows, progressOf: changed, movingGroups: groupMoves, placements: batch.placements, deleting: batch.deletions,
                    deletingGroups: batch.deletedGroups, events: events,
                    trimmingEventsTo: trimsEvents ? configuration.retention.maxKeptEvents : nil, session: session)
            }
            eventsSinceTrim = trimsEvents ? 0 : eventsSinceTrim + events.count
            writes.batchWritten()
            if !events.isEmpty { wakeOutboxWaiters() }
            return true
        } catch {
            outbox?.restore(events)
            lastWriteError = error
            let retry = writes.batchFailed(batch)
            configuration.logger.warning("cannot write to the download store (trying again in \(writes.retryDelay)): \(error.message)")
            carryOut(retry)
            return false
        }
    }

    /// A transfer reached a durable point: record it, then tell subscribers. Checkpoints are
    /// rare (every few MiB or seconds per download), and concurrent ones share a transaction.
    func recordCheckpoint(_ id: DownloadID, _ checkpoint: TransferCheckpoint) async {
        // A transfer a fleet member stopped for a lost lease reports nothing more.
        guard records[id] != nil, fleet?.stopping.isStopping(id) != true else { return }
        records[id]?.details.durable.durableOffset = checkpoint.durableOffset
        records[id]?.details.durable.validator = checkpoint.validator
        records[id]?.details.durable.expectedLength = checkpoint.expectedLength
        if let url = checkpoint.finalURL { records[id]?.details.finalURL = url }
        records[id]?.details.durable.segments = checkpoint.segments
        guard records[id] != nil else { return }
        // Through the serial write path, with any events pending: the outbox keeps its order.
        // Segments are written with checkpoints only (replacing the stored ones), not with
        // every state change.
        writes.note(id, .segments)
        if await flushDirty() {
            hub.emit(.checkpointed(id, durableOffset: checkpoint.durableOffset))
        } else {
            // Owed again: tried with the next write.
            scheduleWrite()
        }
    }

    func storedDownload(_ record: Record) -> StoredDownload {
        let details = record.details
        let durable = details.durable
        return StoredDownload(
            id: record.id, session: session, group: record.group, position: record.position,
            kept: record.kept, partKey: record.partKey.description, state: record.machine.publicState,
            finalURL: details.finalURL, validator: durable.validator,
            expectedLength: durable.expectedLength, durableOffset: durable.durableOffset,
            placement: durable.placement, filePath: details.fileURL?.path,
            fileSize: durable.fileSize, fileModified: durable.fileModified,
            skipped: details.skipped, verifiedChecksums: details.verifiedChecksums,
            error: details.error.map { StoredError(code: $0.code.description, message: $0.message, httpStatus: $0.httpStatus) },
            attempts: details.attempts, createdAt: record.createdAt, updatedAt: Date())
    }

    func releasePartKey(of record: Record) {
        partKeys.release(record.partKey, by: record.id)
    }

    /// Removes a record from memory and from every index (not from the store).
    func forget(_ id: DownloadID) {
        guard let record = detach(id) else { return }
        compactOrderIfWorthIt()
        if let group = record.group {
            groups.remove([id], from: group, unfinished: record.isFinished ? 0 : 1)
        }
    }

    /// Takes a record out of memory and out of the indexes kept per download (scheduler,
    /// retention, part keys; `order` is compacted later). Its group is the caller's: one
    /// forgotten alone leaves it at once, many forgotten together leave it in one pass.
    func detach(_ id: DownloadID) -> Record? {
        guard let record = records.removeValue(forKey: id) else { return nil }
        scheduler.dequeue(id)
        retention.withdraw(id)
        releasePartKey(of: record)
        droppedFromOrder += 1
        return record
    }
}
