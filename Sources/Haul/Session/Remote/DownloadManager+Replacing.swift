import Foundation

/// Changing a download's request before it finishes (aria2's `changeOption`, `changeUri`).
extension DownloadManager {
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
        switch record.machine.replacementPlan(sameHost: sameHost) {
        case .restartInSlot(let joining):
            try await restartInSlot(id, with: new, joining: joining)
        case .pauseSwapAndRequeue:
            try await pause(id)
            try replaceIdle(id, with: new)
            try resume(id)
        case .swapInPlace:
            try replaceIdle(id, with: new)
        }
    }

    /// Stops the running transfer (or joins a restart under way) and has the next one start
    /// from `request` in the same slot.
    private func restartInSlot(_ id: DownloadID, with request: DownloadRequest, joining: Bool) async throws(HaulError) {
        let token = UUID()
        records[id]?.details.replacement = PendingReplacement(token: token, request: request)
        if joining {
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
        if let refusal = record.machine.idleReplacementRefusal(of: id) { throw refusal }
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
        if updated.details.parsedURL != nil { updated.details.parsedURL = nil }
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
}
