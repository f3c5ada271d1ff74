import Foundation

/// Forgetting finished downloads on request (aria2's `removeDownloadResult`,
/// `purgeDownloadResult`) and writing the store now (aria2's `saveSession`).
extension DownloadManager {
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
        guard store.isPersistent else {
            throw HaulError(.invalidState, "this manager keeps its downloads in memory; there is no store to save them to")
        }
        guard await flushDirty() else {
            throw lastWriteError ?? HaulError(.fileSystem, "the download store could not be written")
        }
    }
}
