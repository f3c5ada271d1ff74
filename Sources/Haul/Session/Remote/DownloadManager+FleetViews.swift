import Foundation

/// Clients attached to any daemon of a fleet see one service: what this manager does not hold
/// (downloads another daemon on the same PostgreSQL database added or runs) is read from the
/// store. Rows show what their owner checkpointed; live speed is only on the owner.
///
/// On a store no other process writes (SQLite) every download of the session is in memory:
/// these reads cost nothing there and return nothing more.
extension DownloadManager {
    /// The download's snapshot: from memory when that is how it is (`isCurrentInMemory`),
    /// else, on a shared store, from its row (a download added here and run, or ended, by
    /// another daemon: this manager's record is as it last saw it); nil when neither has it
    /// in this session.
    package func snapshotInFleet(_ id: DownloadID) async -> DownloadInfo? {
        if let info = snapshot(id), isCurrentInMemory(id) { return info }
        guard let shared = sharedStore, let row = try? await shared.load(id), row.session == session
        else { return snapshot(id) }
        return row.storedInfo
    }

    /// Every download of the session as a client of any daemon should see it: this
    /// manager's, in the order it keeps them, those it does not hold shown from their rows
    /// (`snapshotInFleet`), then the unfinished downloads only other daemons know, in queue
    /// order (`downloadsElsewhere`). Outside a fleet, `downloads()`.
    package func downloadsInFleet() async -> [DownloadInfo] {
        let known = downloads()
        guard let shared = sharedStore else { return known }
        let behind = known.filter { !isCurrentInMemory($0.id) }.map(\.id)
        var rows: [DownloadID: DownloadInfo] = [:]
        if !behind.isEmpty, let found = try? await shared.rows(of: behind, session: session) {
            for row in found { rows[row.id] = row.storedInfo }
        }
        let listed = rows.isEmpty ? known : known.map { rows[$0.id] ?? $0 }
        return listed + (await downloadsElsewhere(inStates: [.queued, .running, .paused]))
    }

    /// Whether clients wait through the store (`waitInFleet`): on a shared store, where a
    /// download added here may end on another daemon.
    package var waitsThroughStore: Bool { sharedStore != nil }

    /// `finished(_:)` for a client of any daemon of a fleet: the download once it has ended,
    /// wherever it ran (from its row when another daemon ran it), or as it is when `timeout`
    /// passes first; nil when the session has no such download. Woken by the session's
    /// outbox appends on any daemon, with the feed's poll as the fallback.
    package func waitInFleet(_ id: DownloadID, timeout: Duration) async throws(HaulError) -> DownloadInfo? {
        guard let feed = sharedStore?.changes else { return snapshot(id) }
        return try await readAgainAtEachEnd("download \(id)", feed: feed, timeout: timeout) { () async throws(HaulError) in
            await self.snapshotInFleet(id)
        } until: { now in
            now?.state.isTerminal ?? true
        }
    }

    /// Whether this manager's record of `id` shows the download as it is: always outside a
    /// fleet; in a fleet while this daemon holds it (or is writing its end) and once it ended
    /// here. A download added here and claimed by no one or by another daemon, or paused
    /// here (any daemon may resume it through the store), is as this manager last saw it.
    func isCurrentInMemory(_ id: DownloadID) -> Bool {
        guard fleet != nil else { return true }
        if controlsLocally(id) { return true }
        return records[id]?.machine.publicState.isTerminal == true
    }

    /// The session's unfinished downloads in `states` (queued, running, paused) that this
    /// manager does not know, in queue position order: empty unless the store is shared.
    /// An indexed read whose cost follows the unfinished downloads, not the finished history.
    package func downloadsElsewhere(inStates states: Set<DownloadState>) async -> [DownloadInfo] {
        guard let shared = sharedStore, let stored = try? await shared.unfinishedCount(session: session)
        else { return [] }
        // A daemon alone on its database holds every unfinished download: one count, no rows.
        // Only what it holds counts: its record of a download another daemon ran may still
        // say queued after that download completed there.
        var held = 0
        records.scan { id, _, state, _, _ in
            if !state.isTerminal, controlsLocally(id) { held += 1 }
        }
        guard stored > held, let rows = try? await shared.unfinished(session: session, inStates: states) else { return [] }
        return rows.filter { records[$0.id] == nil }.map(\.storedInfo)
    }
}
