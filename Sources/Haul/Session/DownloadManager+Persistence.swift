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
/// `storeFlushInterval`, never per chunk); a placement intent is written before the rename.
extension DownloadManager {
    static let storeFlushInterval: Duration = .milliseconds(50)

    /// Writes new downloads in one transaction, then queues them for the scheduler.
    func persistNew(_ ids: [DownloadID]) async throws(HaulError) {
        let rows = ids.compactMap { records[$0].map(storedDownload) }
        do {
            try await store.save(rows)
        } catch {
            // Not recorded, so not accepted: take them back out.
            for id in ids { forget(id) }
            throw error
        }
        for id in ids {
            guard let record = records[id] else { continue }
            scheduler.enqueue(id, host: record.host, priority: record.info.request.priority)
            hub.emit(.queued(id))
        }
        admitQueued()
    }

    func markDirty(_ id: DownloadID) {
        dirty.insert(id)
        guard flushTask == nil, !isShutDown else { return }
        flushTask = Task {
            try? await Task.sleep(for: Self.storeFlushInterval)
            self.flushTask = nil
            await self.flushDirty()
        }
    }

    /// Writes every out-of-date row in one transaction. On failure the rows stay dirty and
    /// are tried again with the next change; the durable bytes on disk are unaffected.
    func flushDirty() async {
        guard !dirty.isEmpty else { return }
        let ids = dirty
        dirty = []
        let rows = ids.compactMap { records[$0].map(storedDownload) }
        do {
            try await store.save(rows)
        } catch {
            dirty.formUnion(ids)
        }
    }

    /// A transfer reached a durable point: record it, then tell subscribers. Checkpoints are
    /// rare (every few MiB or seconds per download), and concurrent ones share a transaction.
    func recordCheckpoint(_ id: DownloadID, _ checkpoint: TransferCheckpoint) async {
        guard records[id] != nil else { return }
        records[id]?.durable.durableOffset = checkpoint.durableOffset
        records[id]?.durable.validator = checkpoint.validator
        records[id]?.durable.expectedLength = checkpoint.expectedLength
        if let url = checkpoint.finalURL { records[id]?.info.finalURL = url }
        records[id]?.durable.segments = checkpoint.segments
        guard var row = records[id].map(storedDownload) else { return }
        // Segments are written with checkpoints only (replacing the stored ones), not with
        // every state change.
        row.segments = checkpoint.segments
        do {
            try await store.save([row])
            hub.emit(.checkpointed(id, durableOffset: checkpoint.durableOffset))
        } catch {
            markDirty(id)
        }
    }

    /// A verified part is about to be renamed: record where, durably, before it happens.
    func recordPlacement(_ id: DownloadID, _ intent: PlacementIntent) async throws(HaulError) {
        guard records[id] != nil else { return }
        records[id]?.durable.placement = intent
        guard let row = records[id].map(storedDownload) else { return }
        try await store.save([row])
    }

    func storedDownload(_ record: Record) -> StoredDownload {
        let info = record.info
        return StoredDownload(
            id: info.id, session: session, group: info.group, position: record.position,
            request: info.request, partKey: record.partKey, state: record.machine.publicState,
            finalURL: info.finalURL, validator: record.durable.validator,
            expectedLength: record.durable.expectedLength, durableOffset: record.durable.durableOffset,
            placement: record.durable.placement, filePath: info.fileURL?.path,
            fileSize: record.durable.fileSize, fileModified: record.durable.fileModified,
            skipped: info.skipped, verifiedChecksums: info.verifiedChecksums,
            error: info.error.map { StoredError(code: $0.code.description, message: $0.message, httpStatus: $0.httpStatus) },
            attempts: info.attempts, createdAt: record.createdAt, updatedAt: Date())
    }

    /// Removes a record from memory and from every index (not from the store).
    func forget(_ id: DownloadID) {
        guard let record = records.removeValue(forKey: id) else { return }
        scheduler.dequeue(id)
        order.removeAll { $0 == id }
        dirty.remove(id)
        if partKeysInUse[record.partKey] == id { partKeysInUse[record.partKey] = nil }
        if let group = record.info.group {
            groups[group]?.members.removeAll { $0 == id }
            if !record.isFinished { groups[group]?.unfinished -= 1 }
        }
    }
}
