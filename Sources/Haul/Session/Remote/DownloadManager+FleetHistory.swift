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
        let wanted = positions.filter { (0..<count).contains($0) }
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

    /// The session's queued, running and paused downloads this manager does not hold, by
    /// state (the rows `downloadsElsewhere` lists, counted by the store): empty unless the
    /// store is shared, one count when this manager holds every unfinished one.
    package func unfinishedElsewhereCounts() async -> [DownloadState: Int] {
        guard let shared = sharedStore, let stored = try? await shared.unfinishedCount(session: session) else { return [:] }
        var held: [DownloadID] = []
        records.scan { id, _, state, _, _ in
            if !state.isTerminal { held.append(id) }
        }
        guard stored > held.count else { return [:] }
        var all: [DownloadID] = []
        records.scan { id, _, _, _, _ in all.append(id) }
        return (try? await shared.unfinishedCounts(session: session, excluding: all)) ?? [:]
    }
}
