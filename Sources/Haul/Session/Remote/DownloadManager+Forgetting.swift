import Foundation

/// Forgetting finished downloads on request (aria2's `removeDownloadResult`,
/// `purgeDownloadResult`) and writing the store now (aria2's `saveSession`).
extension DownloadManager {
    /// Forgets finished downloads (completed, failed or canceled) from memory and from the
    /// store in one transaction, and returns the IDs forgotten; `ids` nil means all finished
    /// ones. Other and unknown IDs are skipped. Placed files stay; a failed download's part
    /// file is deleted, unless a newer download of the same request now uses it.
    ///
    /// In a fleet, the session's finished downloads that other daemons ended are forgotten
    /// too (their rows deleted, `forgetFinishedInFleet`): a client of any daemon lists them,
    /// so it may remove them through any daemon.
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
        if !forgotten.isEmpty { try await store.delete(forgotten) }
        guard sharedStore != nil else { return forgotten }
        let here = Set(forgotten)
        return forgotten + (try await forgetFinishedInFleet(ids.map { $0.filter { !here.contains($0) } }))
    }

    /// The finished rows of `ids` (every one when nil) that no daemon holds, deleted from the
    /// shared store; a record this manager kept of one of them (added here, ended elsewhere,
    /// so as it last saw it) goes too. Other daemons drop those they show from memory at
    /// their next listing (`dropFinishedForgottenElsewhere`). A failed download's part file,
    /// in a directory this daemon may not share, is left to `haul gc`.
    private func forgetFinishedInFleet(_ ids: [DownloadID]?) async throws(HaulError) -> [DownloadID] {
        guard let shared = sharedStore else { return [] }
        let others = ids?.filter { !controlsLocally($0) }
        if let others, others.isEmpty { return [] }
        let deleted = try await shared.deleteFinished(session: session, ids: others)
        for id in deleted where records[id] != nil && !controlsLocally(id) { forget(id) }
        return deleted
    }

    /// In a fleet: forgets from memory the finished downloads this manager shows whose rows
    /// are gone (a client forgot them through another daemon, or its retention did), so that
    /// every daemon lists the same. One primary-key read of at most the finished downloads
    /// kept in memory; nothing on a store of its own.
    package func dropFinishedForgottenElsewhere() async {
        guard let shared = sharedStore else { return }
        var finished: [DownloadID] = []
        records.scan { id, _, state, _, _ in
            if state.isTerminal { finished.append(id) }
        }
        guard !finished.isEmpty, let present = try? await shared.present(finished, session: session) else { return }
        for id in finished where !present.contains(id) && records[id]?.machine.publicState.isTerminal == true {
            forget(id)
        }
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
        guard store.isPersistent else {
            throw HaulError(.invalidState, "this manager keeps its downloads in memory; there is no store to save them to")
        }
        guard await flushDirty() else {
            throw lastWriteError ?? HaulError(.fileSystem, "the download store could not be written")
        }
    }
}
