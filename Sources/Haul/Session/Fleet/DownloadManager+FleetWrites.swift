/// A fleet member's store writes: each download's part of a batch is fenced by the lease this
/// daemon holds on it (`StoreWrite.fenced`), so a daemon that lost a lease without knowing
/// (paused, cut off) cannot overwrite the new owner's row or complete the file twice. A
/// download's end (a completion is written after its file's rename, its intent before it
/// without releasing: `DownloadManager+FleetPlacement`) gives the lease back in the same
/// transaction, which checks the download's group. Rows of downloads nobody holds (added here, or changed by a client
/// while queued) are written as on one daemon.
extension DownloadManager {
    /// `DownloadStoring.save` of one batch, fenced download by download.
    func saveFenced(
        _ rows: [StoredDownload], progressOf changed: [StoredDownload], movingGroups groupMoves: [GroupMove],
        batch: StoreWriteQueue.Batch, events: [StoredEvent], trimmingEventsTo maxEvents: Int?
    ) async throws(HaulError) {
        guard let fleet else { return }
        var plain: [StoreWrite] = []
        var fenced: [DownloadID: [StoreWrite]] = [:]
        var order: [DownloadID] = []
        func route(_ id: DownloadID, _ write: StoreWrite) {
            guard !fleet.lost.contains(id) else { return }
            guard fleet.fence(for: id) != nil else { return plain.append(write) }
            if fenced[id] == nil { order.append(id) }
            fenced[id, default: []].append(write)
        }
        if !batch.deletions.isEmpty { plain.append(.delete(batch.deletions)) }
        if !batch.deletedGroups.isEmpty { plain.append(.deleteEmptyGroups(session: session, batch.deletedGroups)) }
        for row in rows { route(row.id, .save([row])) }
        for row in changed { route(row.id, .saveProgress([row])) }
        if !groupMoves.isEmpty { plain.append(.moveToGroups(session: session, groupMoves)) }
        for placement in batch.placements { route(placement.id, .recordPlacements([placement])) }
        var fences: [LeaseFence] = []
        var writes = plain
        // Group rows are locked by the completion checks in one order, by every daemon: two
        // batches finishing members of the same groups never wait on each other in a cycle.
        order.sort { (records[$0]?.group ?? "", $0) < (records[$1]?.group ?? "", $1) }
        for id in order {
            guard let (lease, releasing) = fleet.fence(for: id), let parts = fenced[id] else { continue }
            let group = releasing ? records[id]?.group.map { LeaseFence.GroupOfLease(session: session, name: $0) } : nil
            // With an outbox, the group's completion is written by the transaction that finds it,
            // with its members by outcome as the store has them (`PostgresLeases.outcomes`).
            let event = group.flatMap { outbox == nil ? nil : StoredEvent(kind: .groupCompleted, group: $0.name) }
            let fence = LeaseFence(lease: lease, releasing: releasing, group: group, groupEvent: event)
            fences.append(fence)
            writes.append(.fenced(fence, parts))
        }
        // Nor is anything said of a download whose lease was lost: its new owner reports it
        // (the store drops, the same way, the events of downloads whose fence it refuses).
        let events = events.filter { event in event.download.map { !fleet.lost.contains($0) } ?? true }
        if !events.isEmpty { writes.append(.appendEvents(session: session, events)) }
        if let maxEvents { writes.append(.trimEvents(session: session, keeping: maxEvents)) }
        // Downloads forgotten (retention) while their end was owed: their rows went with them.
        let deletedEnding = batch.deletions.compactMap { fleet.ending[$0] }
        guard !writes.isEmpty else { return }
        try await store.submit(writes.count == 1 ? writes[0] : .all(writes))
        for lease in deletedEnding { self.fleet?.ending[lease.id] = nil }
        if !deletedEnding.isEmpty { Task { _ = try? await fleet.leasing.release(deletedEnding) } }
        fencesCommitted(fences)
    }

    /// Announces a group the store found complete (to waiters and subscribers); its kept
    /// event was written by that transaction already, so it is not appended again.
    func announceStoredCompletion(of name: String) {
        createGroupIfNeeded(name)
        announceCompletion(of: name)
        guard let outbox else { return }
        // Taken back out of the batch the hub put it in; the others stay in their order.
        let pending = outbox.drain()
        var dropped = false
        outbox.restore(pending.filter { event in
            guard !dropped, event.kind == .groupCompleted, event.group == name else { return true }
            dropped = true
            return false
        })
    }

    /// After the batch committed: refused fences mean lost leases (their transfers stop, and
    /// nothing more is written about them); releasing ones gave their lease back; a group the
    /// store found complete is announced here, once in the whole fleet.
    private func fencesCommitted(_ fences: [LeaseFence]) {
        for fence in fences {
            let id = fence.lease.id
            if fence.refused != nil {
                configuration.logger.warning("write refused, lease lost: stopping", metadata: ["haul.download": "\(id)"])
                if records[id]?.machine.slotHandedOver == true { fleet?.refusedPlacements.insert(id) }
                // A refusal of an older lease than the one held (claimed again since) is stale.
                if fleet?.ending[id] == fence.lease {
                    fleet?.ending[id] = nil
                } else if fleet?.book.lease(of: id) == fence.lease {
                    abandon(id, lease: fence.lease)
                }
                continue
            }
            guard fence.releasing else { continue }
            if fleet?.ending[id] == fence.lease { fleet?.ending[id] = nil }
            if fleet?.book.lease(of: id) == fence.lease { fleet?.book.released(id) }
            if fence.completedGroup, let group = fence.group?.name {
                if records[id]?.machine.publicState.isTerminal ?? true {
                    announceStoredCompletion(of: group)
                } else {
                    fleet?.completedGroups[id] = group
                }
            }
            fleetWake()
        }
    }
}
