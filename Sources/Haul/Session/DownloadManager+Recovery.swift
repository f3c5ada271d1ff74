import Foundation

/// Finding downloads again after a restart, and reconciling each with what is on disk:
/// - a placement intent whose file exists (same device and inode) → the rename happened: completed;
/// - a part file missing, or shorter than the recorded offset → start again from zero;
/// - a part file longer than the recorded offset → the excess is cut before appending;
/// - a changed file on the server → If-Range gets the whole new file (the resume rules).
/// Downloads that were running or queued are queued in their old order; paused stay paused.
extension DownloadManager {
    /// `pruning` false: the caller prunes, or pruned already (`EarlierRunStore`).
    func restore(continueInterrupted: Bool, pruning: Bool = true) async throws(HaulError) {
        let retentionRule = configuration.retention
        // History beyond the retention rule goes first, so that it is never loaded.
        if pruning { try await store.prune(session: session, retention: retentionRule) }
        var rows = try await store.loadAll(session: session, includingFinished: retentionRule.loadsEarlierFinished)
        // New downloads are numbered above the store's newest row, not only above the
        // unfinished rows loaded here. Why: numbered from 1 again at each run, the finished
        // downloads of every run shared the same positions, so the (session, state, priority,
        // position) index interleaved them all. Each completion then moved an entry to a random
        // page of that index, and each prune deleted entries from all of its pages. With 100,000
        // finished downloads kept, a run of 5,000 made 12,596 writes to the WAL, against 8,156
        // with this numbering (`strace`, the prune by runs of rowids in both).
        lastPosition = try await store.positionFloor()
        // Files a dead process verified and did not place are placed first, as it would have.
        let verifiedLeft = Self.rowsWithVerifiedFiles(rows)
        let movedOnPlacement = verifiedLeft.isEmpty || fleet != nil ? [] : await finishInterruptedPlacements(&rows) { verifiedLeft.contains($0.id) }
        if !retentionRule.loadsEarlierFinished {
            finishedLeftInStore = try await store.hasFinished(session: session)
        }
        for name in try await store.groups(session: session) { createGroupIfNeeded(name) }
        // Downloads found placed although the store did not say so: the process died between
        // the rename and the write that would have reported them.
        var foundCompleted: [DownloadID] = []
        var abandoned: [DownloadID] = []
        // Downloads whose part file lost bytes the store counts as durable.
        var lostBytes: [DownloadID] = []
        let abandonedBefore = retentionRule.abandonsUnfinishedAfter.map { Date().addingTimeInterval(-$0.inSeconds) }
        for row in rows {
            lastPosition = max(lastPosition, row.position)
            var record = loadedRecord(row)
            record.machine.restored(continueInterrupted: continueInterrupted)
            var reconciled = false
            // In a fleet, an unfinished row may be another daemon's right now: it is reconciled
            // by whoever claims it (`takeClaimed`), and nothing is written about it here.
            if !row.state.isTerminal, fleet == nil { reconciled = reconcile(&record) }
            let state = record.machine.publicState
            if reconciled, state == .completed { foundCompleted.append(row.id) }
            record.isFinished = state.isTerminal
            if reconciled, state == .completed, let size = record.details.durable.expectedLength {
                record.details.progress = TransferProgress(completedBytes: size, expectedBytes: size)
            } else if reconciled {
                let durable = record.details.durable
                record.details.progress = TransferProgress(completedBytes: durable.durableOffset, expectedBytes: durable.expectedLength)
            }
            adoptLoaded(record)
            if record.details.durable.durableOffset < row.durableOffset
                || (row.segments?.isEmpty == false && record.details.durable.segments.isEmpty) {
                lostBytes.append(row.id)
            }
            if let abandonedBefore, !state.isTerminal, row.updatedAt < abandonedBefore, fleet == nil {
                abandoned.append(row.id)
                continue
            }
            if let place = record.machine.restoredPlace {
                enqueueForScheduling(record, held: place == .held)
            }
            if fleet == nil, Self.machineState(row) != record.machine.state || row.state == .running || movedOnPlacement.contains(row.id) {
                markDirty(row.id)
            }
        }
        // Their rows say so before any transfer starts: a transfer from zero rewrites the part
        // and checkpoints only later, so a crash in between would otherwise leave the old row
        // (its offset and validator) standing for bytes that were never flushed.
        if !lostBytes.isEmpty {
            for id in lostBytes { writes.note(id, .segments) }
            await flushDirty()
        }
        // Left behind for longer than the rule allows: canceled, their part files deleted.
        for id in abandoned {
            guard let action = records.update(id, { $0.machine.cancel() }) else { continue }
            perform(action, for: id)
        }
        // Finished downloads loaded may be forgotten like those finishing from now on: alone,
        // or once their group is complete, and with an outbox once the client acknowledged it.
        if outbox != nil { pins = try await store.outboxPins(session: session) }
        dueToForget += retention.mayForget(order.lazy.filter { self.mayBeForgotten($0) })
        reportFoundCompleted(foundCompleted)
        forgetDue()
        admitQueued()
    }

    /// A stored download as a record, with the state its row had (reconciling is the caller's).
    func loadedRecord(_ row: StoredDownload) -> Record {
        // Every stored key was written by `PartKey`; should one not read back, the
        // download gets a key of its own and starts its bytes again.
        let storedKey = PartKey(parsing: row.partKey)
        let partKey = storedKey ?? PartKey(for: row.request).owned(by: row.id)
        if storedKey == nil { markWholeRowDirty(row.id) }
        // The row's kept request as it is: its URL is parsed once, for the host.
        var record = Record(
            id: row.id, kept: row.kept, group: row.group, partKey: partKey,
            host: internedHost(of: URL(string: row.kept.urlText) ?? row.request.url), position: row.position, createdAt: row.createdAt)
        var details = RecordDetails()
        details.finalURL = row.finalURL
        details.fileURL = row.filePath.map { URL(fileURLWithPath: $0, isDirectory: false) }
        details.skipped = row.skipped
        details.verifiedChecksums = row.verifiedChecksums
        details.attempts = row.attempts
        details.error = row.error.map(Self.haulError)
        details.durable = DurableFields(
            validator: row.validator, expectedLength: row.expectedLength, durableOffset: row.durableOffset,
            placement: row.placement, fileSize: row.fileSize, fileModified: row.fileModified,
            segments: row.segments ?? [])
        if let size = row.expectedLength, row.state == .completed {
            details.progress = TransferProgress(completedBytes: size, expectedBytes: size)
        } else {
            details.progress = TransferProgress(completedBytes: row.durableOffset, expectedBytes: row.expectedLength)
        }
        // A queued download that never started needs no details: leaving them out keeps
        // a reopened backlog as small as a fresh one.
        if row.state != .queued || row.attempts > 0 || row.durableOffset > 0 || row.placement != nil || row.segments != nil {
            record.details = details
        }
        record.machine = DownloadStateMachine(state: Self.machineState(row))
        record.isFinished = row.state.isTerminal
        return record
    }

    /// Takes a loaded record into the table and the indexes (not the scheduler's queue).
    func adoptLoaded(_ record: Record) {
        let id = record.id
        let unfinished = !record.machine.publicState.isTerminal
        records[id] = record
        order.append(id)
        if unfinished { partKeys.hold(record.partKey, by: id) }
        if let group = record.group { groups.add(id, to: group, finished: !unfinished) }
    }

    /// Emits what the dead process could not: the completions, and the completion of each
    /// group they finished. With an outbox, a returning client learns of them too.
    private func reportFoundCompleted(_ ids: [DownloadID]) {
        var finishedGroups: Set<String> = []
        for id in ids {
            guard let record = records[id] else { continue }
            hub.emit(.completed(record.info))
            if let group = record.group, groups[group]?.unfinished == 0 { finishedGroups.insert(group) }
        }
        for name in finishedGroups.sorted() { hub.emit(.groupCompleted(summary(of: name))) }
    }

    /// The state the row's download resumes in (`DownloadStateMachine.restoredState`).
    static func machineState(_ row: StoredDownload) -> DownloadStateMachine.State {
        DownloadStateMachine.restoredState(row.state, error: row.error.map(haulError))
    }

    /// Returns whether the record changed.
    func reconcile(_ record: inout Record) -> Bool {
        let durable = record.details.durable
        if let intent = durable.placement, let placed = Self.findPlaced(intent) {
            // Renamed into place, then the process died before recording it.
            PartFile(directory: record.kept.directory.path, key: record.partKey.description).discard()
            record.details.fileURL = URL(fileURLWithPath: placed.path, isDirectory: false)
            record.details.durable.fileSize = placed.size
            record.details.durable.fileModified = Date(timeIntervalSince1970: placed.modified)
            record.details.durable.expectedLength = intent.length
            record.machine.foundPlaced()
            return true
        }
        if durable.placement != nil { record.details.durable.placement = nil }
        guard durable.durableOffset > 0 || !durable.segments.isEmpty else { return durable.placement != nil }
        let size = PartFile(directory: record.kept.directory.path, key: record.partKey.description).existingSize() ?? -1
        guard size < durable.durableOffset || size < 0 else { return durable.placement != nil }
        // The part file is gone or lost bytes: nothing of it can be trusted.
        record.details.durable.durableOffset = 0
        record.details.durable.validator = nil
        record.details.durable.segments = []
        return true
    }

    /// Looks for the file a placement intent produced, by identity, among the names the
    /// policy could have given it.
    static func findPlaced(_ intent: PlacementIntent) -> (path: String, size: Int64, modified: Double)? {
        var misses = 0
        for number in 0...Placement.maxRenameAttempts {
            let name = number == 0 ? intent.name : Placement.numbered(intent.name, number)
            let path = Placement.join(intent.directory, name)
            if let found = SystemCalls.describe(path) {
                misses = 0
                if found.identity == SystemCalls.FileIdentity(device: intent.device, inode: intent.inode), found.size == intent.length {
                    return (path, found.size, found.modified)
                }
            } else {
                misses += 1
            }
            if intent.policy != .rename || misses >= 3 { break }
        }
        return nil
    }

    static func haulError(_ stored: StoredError) -> HaulError {
        HaulError(HaulError.Code(named: stored.code) ?? .connectionFailed, stored.message, httpStatus: stored.httpStatus)
    }
}
