import Foundation

/// Putting verified files in place, a batch at a time.
///
/// Where a file goes must be durable before it is renamed there, so that a crash right after
/// the rename is recognised as a completed download (found by its inode) and not fetched a
/// second time. That one write records the download completed as well, at the path the rename
/// is expected to give: when the rename does give it (nearly always), nothing more is
/// written for the file, so a download costs two row writes in all (added, completed). A crash
/// between that write and the rename leaves the verified file as `.haul-KEY.done`, which a
/// later process puts in place (`DownloadManager+Recovery`). Written one transaction per file, as it first was, the intents of thousands of
/// 16 KiB files cost more than fetching them, and each file held its connection slot while its
/// transaction committed. So a transfer hands its verified file to the manager and ends: the
/// intents of all the files verified while one write is on its way (or within a few
/// milliseconds) go in the next write, then those files are renamed and concluded together.
/// A batch shares one store write, one rename pass off the actor and one turn of the actor,
/// instead of each file waiting for its own; and the file's slot goes to the next download as
/// soon as its bytes are verified, since what is left needs no connection.
///
/// A fleet member (`DownloadManager+FleetPlacement`) writes the intent alone, renames, then
/// writes the completion: other daemons read the store, and must not see a download completed
/// (or its group complete) before its file is in place.
extension DownloadManager {
    /// How long the first verified file waits for others, while downloads are still fetching.
    /// Measured on 5,000 × 16 KiB at 16 at once: without a wait, intents went about 7 to a
    /// transaction and cost a quarter of the run; from 1 ms on, the cost is gone (it was
    /// flat up to 30 ms). A lone download never waits.
    static let placementBatchWindow: Duration = .milliseconds(5)

    /// A file verified by its transfer and waiting for its intent to be written.
    struct PendingPlacement: Sendable {
        let id: DownloadID
        let file: VerifiedFile
    }

    /// Records where `file` goes and the download completed there (written with the next
    /// placement batch) and hands the download's slot over; the file is renamed once that is
    /// in the store.
    func placeAfterRecording(_ id: DownloadID, _ file: VerifiedFile) {
        guard let completion = records.update(id, { record -> StoredDownload in
            record.details.durable.placement = file.intent
            return completedRow(record, file)
        }) else { return }
        // In a fleet the intent goes alone and the completion after the rename (see
        // `DownloadManager+FleetPlacement`): the store must not call a download completed, or
        // its group complete, before its file is in place.
        let placement = StoredPlacement(id: id, intent: file.intent, completion: fleet == nil ? completion : nil)
        let action = writes.placementRecorded(placement, othersFetching: scheduler.runningCount > 0)
        handOverSlot(id)
        pendingPlacements.append(PendingPlacement(id: id, file: file))
        carryOut(action)
    }

    /// The row of `record` as it will be once `file` is renamed to its expected path.
    private func completedRow(_ record: Record, _ file: VerifiedFile) -> StoredDownload {
        var row = storedDownload(record)
        row.state = .completed
        row.expectedLength = file.bytes
        row.durableOffset = file.bytes
        row.filePath = file.expectedPath
        row.fileSize = file.stamp.size
        row.fileModified = Date(timeIntervalSince1970: file.stamp.modified)
        row.skipped = false
        row.verifiedChecksums = file.checksums
        row.error = nil
        return row
    }

    /// Writes the waiting intents (chained after any write on its way, which may have taken
    /// some of them already), renames those files, and concludes their downloads. A file whose
    /// intent could not be written is not renamed: while the store cannot be reached it waits
    /// and is tried again; otherwise its download ends with the store's error (paused, its
    /// bytes kept, when that is a file-system error, as it usually is).
    func writePlacements() async {
        let taken = pendingPlacements
        pendingPlacements = []
        let written = await flushDirty()
        // A fleet member whose completion the store refused (its lease lost) renames nothing:
        // the download is the next owner's.
        let batch = fleet == nil || fleet?.refusedPlacements.isEmpty == true ? taken : fleetPlacementsAccepted(taken)
        guard written else {
            let error = lastWriteError ?? HaulError(.fileSystem, "the download store could not be written")
            if error.code == .connectionFailed, !isShutDown {
                // The store is away for a while (a database restarting): the files stay
                // verified, their intents owed, and are placed once it answers again.
                pendingPlacements = batch + pendingPlacements
                carryOut(writes.placementsDeferred())
                return
            }
            for pending in batch {
                // A fleet member whose lease ended while this was written gives the download up.
                if let fleet, fleet.book.lease(of: pending.id) == nil, fleet.ending[pending.id] != nil {
                    abandon(pending.id, evenWhilePlacing: true)
                    continue
                }
                pending.file.keepAsPart()
                if let kept = pending.file.currentStatus() {
                    records[pending.id]?.details.transfer?.part.lastSeen = kept
                }
                // The row is owed again in full: the failed batch may have carried this
                // download's completion, which must not be written after all.
                writes.dropCompletion(of: pending.id)
                conclude(pending.id, .failed(HaulError(error.code, "cannot record where \(pending.file.intent.name) goes: \(error.message)")))
            }
            return
        }
        // In a fleet, only files whose lease still holds are renamed.
        let placing = fleet == nil ? batch : placementsStillHeld(batch)
        let results = await Self.place(placing)
        for (pending, result) in zip(placing, results) {
            if fleet == nil, case .completed(let placed, _, _) = result, !placed.skipped, placed.path == pending.file.expectedPath {
                // The store says so already (`completedRow`). (Through `update`: a write through
                // the table's subscript allocates its accessor's frame.)
                records.update(pending.id) { $0.details.completionStored = true }
            } else if case .failed = result, let kept = pending.file.currentStatus() {
                // Renamed back to its part file (`keepAsPart`): still the file this transfer left.
                records[pending.id]?.details.transfer?.part.lastSeen = kept
            }
            conclude(pending.id, result)
        }
        // A fleet member writes the completions now, each releasing its lease and checking its
        // group: the lease counts against the session's limits until then.
        if fleet != nil, !placing.isEmpty { await flushDirty() }
    }

    /// The renames of a batch, off the actor: the other transfers' bookkeeping goes on meanwhile.
    private nonisolated static func place(_ batch: [PendingPlacement]) async -> [TransferResult] {
        batch.map { $0.file.place() }
    }

    /// The download's bytes are verified: its slot goes to the next queued download now.
    private func handOverSlot(_ id: DownloadID) {
        guard let action = records.update(id, { $0.machine.placementStarted() }) else { return }
        perform(action, for: id)
    }
}
