import Foundation

/// Finding downloads again after a restart, and reconciling each with what is on disk:
/// - a placement intent whose file exists (same device and inode) → the rename happened: completed;
/// - a part file missing, or shorter than the recorded offset → start again from zero;
/// - a part file longer than the recorded offset → the excess is cut before appending;
/// - a changed file on the server → If-Range gets the whole new file (the resume rules).
/// Downloads that were running or queued are queued in their old order; paused stay paused.
extension DownloadManager {
    func restore(continueInterrupted: Bool) async throws(HaulError) {
        let rows = try await store.loadAll(session: session)
        for name in try await store.groups(session: session) where groups[name] == nil {
            groups[name] = GroupRecord(name: name)
        }
        for row in rows {
            lastPosition = max(lastPosition, row.position)
            var record = Record(
                info: DownloadInfo(id: row.id, request: row.request, group: row.group),
                partKey: row.partKey, host: row.request.url.host?.lowercased() ?? "",
                position: row.position, createdAt: row.createdAt)
            record.info.finalURL = row.finalURL
            record.info.fileURL = row.filePath.map { URL(fileURLWithPath: $0) }
            record.info.skipped = row.skipped
            record.info.verifiedChecksums = row.verifiedChecksums
            record.info.attempts = row.attempts
            record.info.error = row.error.map(Self.haulError)
            record.durable = DurableFields(
                validator: row.validator, expectedLength: row.expectedLength, durableOffset: row.durableOffset,
                placement: row.placement, fileSize: row.fileSize, fileModified: row.fileModified,
                segments: row.segments ?? [])
            record.machine = DownloadStateMachine(state: Self.machineState(row))
            if !continueInterrupted, record.machine.state == .queued {
                record.machine = DownloadStateMachine(state: .paused)
            }
            if !row.state.isTerminal { reconcile(&record) }
            let state = record.machine.publicState
            record.isFinished = state.isTerminal
            if let size = record.durable.expectedLength, state == .completed {
                record.info.progress = TransferProgress(completedBytes: size, expectedBytes: size)
            } else {
                record.info.progress = TransferProgress(completedBytes: record.durable.durableOffset, expectedBytes: record.durable.expectedLength)
            }
            records[row.id] = record
            order.append(row.id)
            if !state.isTerminal { partKeysInUse[row.partKey] = row.id }
            if let group = row.group {
                if groups[group] == nil { groups[group] = GroupRecord(name: group) }
                groups[group]!.members.append(row.id)
                if !state.isTerminal { groups[group]!.unfinished += 1 }
            }
            if state == .queued { scheduler.enqueue(row.id, host: record.host, priority: row.request.priority) }
            if Self.machineState(row) != record.machine.state || row.state == .running { markDirty(row.id) }
        }
        admitQueued()
    }

    /// Running and queued downloads are queued again; the rest keep their state.
    static func machineState(_ row: StoredDownload) -> DownloadStateMachine.State {
        switch row.state {
        case .queued, .running: return .queued
        case .paused: return .paused
        case .completed: return .completed
        case .failed: return .failed(row.error.map(haulError) ?? HaulError(.connectionFailed, "failed before the restart"))
        case .canceled: return .canceled
        }
    }

    private func reconcile(_ record: inout Record) {
        let part = PartFile(directory: record.info.request.directory.path, key: record.partKey)
        if let intent = record.durable.placement, let placed = Self.findPlaced(intent) {
            // Renamed into place, then the process died before recording it.
            part.discard()
            record.info.fileURL = URL(fileURLWithPath: placed.path)
            record.durable.fileSize = placed.size
            record.durable.fileModified = Date(timeIntervalSince1970: placed.modified)
            record.durable.expectedLength = intent.length
            record.machine = DownloadStateMachine(state: .completed)
            return
        }
        record.durable.placement = nil
        let size = part.existingSize() ?? -1
        if size < record.durable.durableOffset {
            // The part file is gone or lost bytes: nothing of it can be trusted.
            record.durable.durableOffset = 0
            record.durable.validator = nil
        }
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
