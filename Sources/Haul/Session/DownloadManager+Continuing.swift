import Foundation

/// Adding requests that may have been made before (a re-run of the same command, a program
/// that restarts and asks again), and removing downloads.
extension DownloadManager {
    /// Like `add(_:toGroup:)`, but a request for the same bytes and destination as an earlier
    /// download of this session (same URL, directory, file name and checksums) is not started
    /// again:
    /// - queued or running: it joins the group and goes on;
    /// - paused or failed: it joins the group and is resumed (from its durable bytes);
    /// - completed, and its file is still as it was placed (same size and modification time):
    ///   it joins the group as completed, and a `.completed` event is emitted again;
    /// - completed but the file was deleted or changed since, or canceled: a new download.
    ///
    /// `earlier`: what a look-up of the same requests found of their earlier downloads
    /// (`EarlierRunStore.lookUpEarlier`, its `rest`), so that they are not looked up again.
    @discardableResult
    package func add(
        _ requests: [DownloadRequest], toGroup name: String, continuingExisting: Bool, earlier: EarlierFinished? = nil
    ) async throws(HaulError) -> DownloadGroup {
        if continuingExisting {
            try await addContinuing(requests, toGroup: name, earlier: earlier)
        } else {
            try await addMembers(requests, toGroup: name)
        }
        return DownloadGroup(name: name, session: self)
    }

    /// `add(_:toGroup:continuingExisting:)` continuing, returning the IDs of the downloads
    /// that stand for `requests`, in their order: continued ones and new ones.
    @discardableResult
    package func addContinuing(
        _ requests: [DownloadRequest], toGroup name: String, earlier: EarlierFinished? = nil
    ) async throws(HaulError) -> [DownloadID] {
        try Self.validate(requests)
        guard !isShutDown else { throw HaulError(.shutdown, "the download manager has been shut down") }
        createGroupIfNeeded(name)
        var directories = DirectoryCache()
        let normalized = requests.map { directories.normalized($0) }
        records.reserveCapacity(normalized.count)
        // Earlier downloads only the store holds that new ones replace: never loaded.
        var spent = try await loadEarlierFinished(matching: normalized, sorted: earlier)
        var identities = IdentityCache()
        var latest: [RequestIdentity: DownloadID] = [:]
        for id in order {
            guard let record = records[id] else { continue }
            if Self.canContinue(record) {
                latest[identities.identity(of: record.kept)] = id
            } else {
                spent[identities.identity(of: record.kept), default: []].append(id)
            }
        }
        var fresh: [DownloadID] = []
        var adopted: [DownloadID] = []
        var replaced: [DownloadID] = []
        var ids: [DownloadID] = []
        ids.reserveCapacity(normalized.count)
        // A large batch's transaction starts now and takes the rows as they are made. From here
        // to its end nothing may wait for the store: its writer waits for this loop.
        let recording = openBatchRecording(forBatchOf: normalized.count)
        var newIDs = DownloadIDBatch(count: normalized.count)
        for request in normalized {
            // Nothing left to match (a fresh store, a new directory): no identity to build.
            if latest.isEmpty, spent.isEmpty {
                let id = insert(request, group: name, id: newIDs.next())
                fresh.append(id)
                ids.append(id)
                if let recording { handOver(id, replacing: [], to: recording) }
                continue
            }
            let identity = identities.identity(of: KeptRequest(request))
            if let id = latest.removeValue(forKey: identity) {
                adopted.append(id)
                ids.append(id)
            } else {
                // Earlier records of this request that can never be used again (canceled, or
                // completed but the file changed since) are replaced, so that running the same
                // command again and again does not grow the store.
                let replacing = spent.removeValue(forKey: identity) ?? []
                replaced += replacing
                let id = insert(request, group: name, id: newIDs.next())
                fresh.append(id)
                ids.append(id)
                if let recording { handOver(id, replacing: replacing, to: recording) }
            }
        }
        forgetSpent(replaced)
        move(adopted, toGroup: name)
        // Their rows go in the new downloads' transaction, and so does the marking of the
        // completed ones found in use again.
        try await persistNew(fresh, replacing: replaced, markingInUse: inUseToMark(among: adopted), recordedBy: recording)
        for id in adopted { continueAdopted(id) }
        if groups[name]?.unfinished == 0 {
            hub.emit(.groupCompleted(summary(of: name)))
        }
        return ids
    }

    /// With finished downloads left in the store (`Retention.loadsEarlierFinished` false), loads
    /// those whose URL and directory one of `requests` asks for again, so that they are recognised like the
    /// ones in memory. A lookup per distinct URL and directory in an index: the cost follows
    /// the batch, not the store's history.
    /// Those that a new download replaces for certain are not loaded (`sortEarlierFinished`):
    /// their IDs are returned, by request, to be deleted.
    /// `sorted`: the sorting a look-up made already, taken instead of making it again.
    private func loadEarlierFinished(
        matching requests: [DownloadRequest], sorted: EarlierFinished?
    ) async throws(HaulError) -> [RequestIdentity: [DownloadID]] {
        guard finishedLeftInStore, !requests.isEmpty else { return [:] }
        var earlier: EarlierFinished
        if let sorted {
            earlier = sorted
            // Sorted before this manager opened: any it holds now are its own to judge.
            for (identity, ids) in earlier.spent where ids.contains(where: { records.contains($0) }) {
                earlier.spent[identity] = ids.filter { !records.contains($0) }
            }
        } else {
            earlier = try await sortEarlierFinished(of: requests)
        }
        guard !earlier.toLoad.isEmpty else { return earlier.spent }
        var rows = try await store.finished(session: session, matching: earlier.toLoad)
        // A completed row whose file a dead process left verified and not yet renamed.
        let verifiedLeft = Self.rowsWithVerifiedFiles(rows)
        let moved = verifiedLeft.isEmpty ? [] : await finishInterruptedPlacements(&rows) { verifiedLeft.contains($0.id) }
        for row in rows where !records.contains(row.id) {
            adoptLoaded(loadedRecord(row))
            if moved.contains(row.id) { markDirty(row.id) }
        }
        return earlier.spent
    }

    /// Forgets earlier downloads that a new one replaces (canceled ones, or completed ones
    /// whose file changed since: nothing of them runs or is kept): out of memory and out of
    /// their groups at once. Their rows are deleted by the caller, in one write with the new
    /// downloads' rows (`persistNew(_:replacing:)`); one `remove` each cost a store
    /// transaction per file of a batch run again after its files were deleted.
    private func forgetSpent(_ ids: [DownloadID]) {
        guard !ids.isEmpty else { return }
        // Each group they leave is rewritten once (`forget` one by one costs a pass over the
        // group's members each).
        var leaving: [String: (ids: Set<DownloadID>, unfinished: Int)] = [:]
        for id in ids {
            guard let record = detach(id), let group = record.group else { continue }
            leaving[group, default: ([], 0)].ids.insert(id)
            if !record.isFinished { leaving[group]!.unfinished += 1 }
        }
        compactOrderIfWorthIt()
        for (group, left) in leaving { groups.remove(left.ids, from: group, unfinished: left.unfinished) }
    }

    /// Stops (if needed) and forgets a download, deleting its part file; with `deletingFile`,
    /// a completed download's file is deleted too, if it is still the file Haul placed.
    public func remove(_ id: DownloadID, deletingFile: Bool = false) async throws(HaulError) {
        await settleOwedEnd(of: id)
        if !controlsLocally(id), records[id]?.machine.publicState.isTerminal != true {
            return try await removeThroughFleet(id)
        }
        guard let record = records[id] else { throw unknown(id) }
        switch record.machine.publicState {
        case .queued, .running, .paused, .failed:
            try await cancel(id)
            // In a fleet the cancel's fenced end checks the download's group: written before
            // the row goes, so a group whose last member this was completes.
            if fleet != nil { _ = await flushDirty() }
        case .completed:
            if deletingFile, let path = record.details.fileURL?.path, Self.placedFileIsIntact(record) {
                try SystemCalls.removeFile(path)
            }
        case .canceled:
            break
        }
        forget(id)
        try await store.delete([id])
    }

    /// `remove` of a download a fleet member does not hold: canceled through the fleet (here,
    /// with its group's check, when nobody holds it; by its owner otherwise), then forgotten.
    private func removeThroughFleet(_ id: DownloadID) async throws(HaulError) {
        // The row's state, not this daemon's older view of it (another daemon may have run it).
        let stored = try? await store.load(id)
        guard let state = stored?.session == session ? stored?.state : records[id]?.machine.publicState else { throw unknown(id) }
        if !state.isTerminal { try await controlThroughFleet(.cancel, id) }
        forget(id)
        try await store.delete([id])
    }

    /// Of the downloads a batch took in, the completed ones that have counted as added for
    /// half the age rule (`Retention.maxAge`) or longer, with the date they count as added from
    /// now on; nil when there are none or no age rule.
    ///
    /// Why: a file a request made again finds in place is in use. Counted from when its
    /// download was first made, the age rule forgot it however often it was asked for, and the
    /// next request after that fetched it again and placed it beside the old one (the
    /// `rename` policy). `haul get`'s own look-up marks the files it finds
    /// (`EarlierRunStore`); this is the same for the ones it leaves to the manager (playlists,
    /// Metalink) and for an app's own rule. Marked at most once per half of the rule: a batch
    /// asked for every day writes nothing on the other days.
    private func inUseToMark(among adopted: [DownloadID]) -> (ids: [DownloadID], at: Date)? {
        guard let maxAge = configuration.retention.maxAge, !adopted.isEmpty else { return nil }
        let now = Date()
        let cutoff = now.addingTimeInterval(-maxAge.inSeconds / 2)
        let due = adopted.filter {
            guard let record = records[$0] else { return false }
            return record.machine.publicState == .completed && record.createdAt < cutoff
        }
        return due.isEmpty ? nil : (due, now)
    }

    /// Whether a record can stand for a new request equal to its own.
    private static func canContinue(_ record: Record) -> Bool {
        switch record.machine.publicState {
        case .queued, .running, .paused, .failed: return true
        case .completed: return placedFileIsIntact(record)
        case .canceled: return false
        }
    }

    /// The placed file still has the size and modification time it had when placed.
    static func placedFileIsIntact(_ record: Record) -> Bool {
        let details = record.details
        guard details.skipped || details.durable.fileSize != nil else { return false }
        guard let path = details.fileURL?.path, let now = SystemCalls.describe(path) else { return false }
        if details.skipped { return true }
        guard now.size == details.durable.fileSize, let modified = details.durable.fileModified else { return false }
        return abs(now.modified - modified.timeIntervalSince1970) < 0.001
    }

    /// Moves downloads into another group, keeping the groups' counts right.
    private func move(_ ids: [DownloadID], toGroup name: String) {
        var moves: [(id: DownloadID, from: String?, finished: Bool)] = []
        moves.reserveCapacity(ids.count)
        for id in ids {
            guard let record = records[id], record.group != name else { continue }
            moves.append((id, record.group, record.isFinished))
        }
        groups.move(moves, to: name)
        for move in moves {
            records[move.id]?.group = name
            carryOut(writes.changed(move.id, .group))
        }
    }

    private func continueAdopted(_ id: DownloadID) {
        guard let record = records[id] else { return }
        switch record.machine.publicState {
        case .paused, .failed:
            try? resume(id)
        case .completed:
            if hub.wants(.completed) { hub.emit(.completed(record.info)) }
        case .queued, .running, .canceled:
            break
        }
    }
}
