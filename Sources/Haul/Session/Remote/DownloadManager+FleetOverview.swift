/// A whole session as a dashboard attached to any daemon of a fleet shows it
/// (`haul.overview`): every download the fleet has, wherever it was added or runs, not this
/// daemon's memory, which holds only what it added, runs or ended.
extension DownloadManager {
    /// The session's downloads counted by group and state from the shared store; nil on a
    /// store of its own (the caller counts this manager's memory) or when the store cannot be
    /// read. Bytes of downloads running here are their last checkpoint's.
    package func tallyInFleet() async -> [SessionTally]? {
        guard let shared = sharedStore else { return nil }
        return try? await shared.tally(session: session)
    }

    /// A window of the session's downloads in the order they were added, from the shared
    /// store, each shown from memory when this manager holds it or ended it (its progress and
    /// speed are live here); nil on a store of its own or when the store cannot be read.
    package func windowInFleet(offset: Int, limit: Int) async -> [DownloadInfo]? {
        guard let shared = sharedStore, let rows = try? await shared.window(session: session, offset: offset, limit: limit) else { return nil }
        return rows.map { row in
            isCurrentInMemory(row.id) ? (records[row.id]?.info ?? row.storedInfo) : row.storedInfo
        }
    }
}
