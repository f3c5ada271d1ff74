import Foundation

/// The fleet's finished downloads and totals on any daemon (aria2 `tellStopped` and
/// `getGlobalStat`): this manager's own from memory, the others' rows from the store, never
/// the whole history. On a store no other process writes (SQLite) these return nothing more.
extension DownloadManager {
    /// The shared store this manager reads the fleet's views from; nil on SQLite.
    var sharedStore: PostgresStore? {
        guard let shared = store as? PostgresStore, shared.changes != nil else { return nil }
        return shared
    }

    /// How many finished downloads a fleet view lists besides this manager's own: the
    /// retention's `maxFinished` (aria2's `--max-download-result`), 1,000 without one, so that
    /// a listing's cost never follows the history.
    var finishedElsewhereWindow: Int { configuration.retention.maxFinished ?? 1_000 }

    /// This manager's finished downloads: shown from memory, so left out of the store's reads.
    private func finishedHere() -> [DownloadID] {
        var ids: [DownloadID] = []
        records.scan { id, _, state, _, _ in
            if state.isTerminal { ids.append(id) }
        }
        return ids
    }

    /// How many of the session's finished downloads this manager does not hold (other daemons
    /// ended them): the newest `finishedElsewhereWindow` at most. 0 unless the store is shared.
    package func finishedElsewhereCount() async -> Int {
        guard let shared = sharedStore else { return 0 }
        return (try? await shared.finishedCount(session: session, excluding: finishedHere(), upTo: finishedElsewhereWindow)) ?? 0
    }

    /// The finished downloads this manager does not hold at `positions` of their listing of
    /// `count` (`finishedElsewhereCount()`): the newest `count` in the order they were added,
    /// position 0 the oldest of them. One read of the rows from the lowest to the highest
    /// position asked, newest first along the store's partial index.
    package func finishedElsewhere(at positions: [Int], of count: Int) async -> [Int: DownloadInfo] {
        let wanted = Set(positions.filter { (0..<count).contains($0) })
        guard let shared = sharedStore, let first = wanted.min(), let last = wanted.max() else { return [:] }
        // Position p is the (count - 1 - p)th newest.
        let skipping = count - 1 - last
        guard let rows = try? await shared.finished(
            session: session, excluding: finishedHere(), newestFirstSkipping: skipping, limit: last - first + 1)
        else { return [:] }
        var found: [Int: DownloadInfo] = [:]
        for (n, row) in rows.enumerated() {
            let position = last - n
            if wanted.contains(position) { found[position] = row.storedInfo }
        }
        return found
    }

    /// The downloads aria2's lists show from this manager's memory: outside a fleet every
    /// record; in a fleet those running here, those in its waiting queue (held, or paused
    /// there) and those that ended here. A record of a download added here and claimed by
    /// no one or by another daemon is in none of these: as this manager last saw it, so its
    /// row is shown instead (`downloadsNotListedHere`).
    func listedFromMemory() -> Set<DownloadID> {
        var shown = Set<DownloadID>()
        guard fleet != nil else {
            records.scan { id, _, _, _, _ in shown.insert(id) }
            return shown
        }
        shown.formUnion(waitingInQueueOrder())
        records.scan { id, _, state, _, _ in
            if state == .running || state.isTerminal { shown.insert(id) }
        }
        return shown
    }

    /// The session's unfinished downloads in `states` that aria2's lists do not show from
    /// this manager's memory (`listedFromMemory()`), in queue position order, from their rows:
    /// empty unless the store is shared; one count, no rows, when the rows hold no more
    /// unfinished downloads than the lists show from memory.
    package func downloadsNotListedHere(inStates states: Set<DownloadState>) async -> [DownloadInfo] {
        guard let shared = sharedStore, let stored = try? await shared.unfinishedCount(session: session) else { return [] }
        let shown = listedFromMemory()
        guard stored > unfinishedCount(of: shown),
              let rows = try? await shared.unfinished(session: session, inStates: states)
        else { return [] }
        return rows.filter { !shown.contains($0.id) }.map(\.storedInfo)
    }

    /// `stateCounts()` as aria2's lists show the session: on a shared store, the downloads
    /// shown from memory plus the unfinished rows shown from the store, counted by state in
    /// the store (finished rows are counted by `finishedElsewhereCount()`).
    package func stateCountsAsListed() async -> StateCounts {
        guard let shared = sharedStore else { return stateCounts() }
        let shown = listedFromMemory()
        var counts = stateCounts(of: shown)
        guard let stored = try? await shared.unfinishedCount(session: session), stored > unfinishedCount(of: shown),
              let elsewhere = try? await shared.unfinishedCounts(session: session, excluding: Array(shown))
        else { return counts }
        counts.queued += elsewhere[.queued, default: 0]
        counts.running += elsewhere[.running, default: 0]
        counts.paused += elsewhere[.paused, default: 0]
        return counts
    }

    private func unfinishedCount(of ids: Set<DownloadID>) -> Int {
        ids.filter { records[$0]?.machine.publicState.isTerminal == false }.count
    }
}
