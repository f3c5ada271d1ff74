import Foundation

/// Clients attached to any daemon of a fleet see one service: what this manager does not hold
/// (downloads another daemon on the same PostgreSQL database added or runs) is read from the
/// store. Rows show what their owner checkpointed; live speed is only on the owner.
///
/// On a store no other process writes (SQLite) every download of the session is in memory:
/// these reads cost nothing there and return nothing more.
extension DownloadManager {
    /// The download's snapshot from memory, else (on a shared store) its row, looked up by
    /// its key; nil when neither has it in this session.
    package func snapshotInFleet(_ id: DownloadID) async -> DownloadInfo? {
        if let info = snapshot(id) { return info }
        guard let shared = store as? PostgresStore, shared.changes != nil,
              let row = try? await shared.load(id), row.session == session
        else { return nil }
        return snapshot(id) ?? row.storedInfo
    }

    /// The session's unfinished downloads in `states` (queued, running, paused) that this
    /// manager does not hold, in queue position order: empty unless the store is shared.
    /// An indexed read whose cost follows the unfinished downloads, not the finished history.
    package func downloadsElsewhere(inStates states: Set<DownloadState>) async -> [DownloadInfo] {
        guard let shared = store as? PostgresStore, shared.changes != nil,
              let stored = try? await shared.unfinishedCount(session: session)
        else { return [] }
        // A daemon alone on its database holds every unfinished download: one count, no rows.
        var held = 0
        records.scan { _, _, state, _, _ in
            if !state.isTerminal { held += 1 }
        }
        guard stored > held, let rows = try? await shared.unfinished(session: session, inStates: states) else { return [] }
        return rows.filter { records[$0.id] == nil }.map(\.storedInfo)
    }
}
