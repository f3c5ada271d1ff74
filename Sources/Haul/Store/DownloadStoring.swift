import Foundation

/// The store boundary: what a session needs to keep its downloads, groups, segments, event
/// outbox and settings durable, whatever database holds them.
///
/// Two implementations: `DownloadStore` (SQLite, one file per state directory, the embedded
/// default) and `PostgresStore` (a PostgreSQL database, `haul daemon --store postgresql://…`).
/// Both apply a batch of `StoreWrite`s in one transaction, in order, and give events their
/// sequence numbers in the order they were written; the store tests run against both.
///
/// Internal rather than `package`: its rows (`StoredDownload`, `StoreWrite`, …) are the
/// library's own, and nothing outside it implements or calls a store. The daemon chooses one
/// by `StoreLocation`.
protocol DownloadStoring: AnyObject, Sendable {
    /// The directory of files kept beside the store (the book of owed resource steps), nil when
    /// there is none (a store in memory).
    var stateDirectory: URL? { get }
    /// False for a store in memory: nothing it holds survives the process.
    var isPersistent: Bool { get }
    /// Bytes the store takes on disk (0 when unknown or in memory).
    func sizeOnDisk() async -> Int64
    /// What other processes sharing the store changed (nil when no other process writes to
    /// it, as with SQLite: a session's own writes wake its own waiters).
    var changes: StoreChangeFeed? { get }

    /// Applies `write` in a transaction (shared with concurrent writes, in arrival order);
    /// returns once it committed.
    func submit(_ write: StoreWrite) async throws(HaulError)
    /// Whether a `StoreWrite.arriving` may be submitted before its writes ended: true only for
    /// a store that applies writes on a thread of its own, which may wait for them (SQLite's
    /// writer queue). Any other store is given a batch's rows in one write (`persistNew`).
    var takesWritesAsTheyArrive: Bool { get }
    /// Gives memory a bulk write used back to the system, where the store can.
    func releaseMemory() async

    /// Every download of a session, ordered by position; without `includingFinished`, only
    /// the queued, running and paused ones.
    func loadAll(session: String, includingFinished: Bool) async throws(HaulError) -> [StoredDownload]
    /// The session's finished downloads of these URLs into these directories.
    func finished(session: String, matching places: Set<DownloadPlace>) async throws(HaulError) -> [StoredDownload]
    /// The session's downloads of these URLs into `directory` (as the store writes it:
    /// `StoredURL.directoryText`), in any state, narrowed to `EarlierDownloadRow`: one query
    /// of the (session, directory, URL) index for the whole list, its cost following the list,
    /// not the store's history.
    func earlierDownloads(session: String, directory: String, urls: [String]) async throws(HaulError) -> [EarlierDownloadRow]
    /// Whether the session has any finished download in the store.
    func hasFinished(session: String) async throws(HaulError) -> Bool
    /// Whether the session has any download, in any state, into `directory` (as the store
    /// writes it: `StoredURL.directoryText`). One probe of the (session, directory, URL) index,
    /// whatever the history: a batch into a directory the session never used skips the
    /// look-up of its requests' earlier downloads.
    func hasDownloads(session: String, directory: String) async throws(HaulError) -> Bool
    func load(_ id: DownloadID) async throws(HaulError) -> StoredDownload?
    /// The highest position used so far (0 when empty), so new downloads continue the order.
    func maxPosition() async throws(HaulError) -> Int64
    /// A position at or above which a session's new downloads keep finished rows' positions
    /// rising with insertion, found in a lookup or two whatever the history (0 where the store
    /// has none). See `DownloadManager.restore`.
    func positionFloor() async throws(HaulError) -> Int64
    /// Group names of a session, in creation order.
    func groups(session: String) async throws(HaulError) -> [String]

    /// The session's unacknowledged events after `sequence`, oldest first, as the JSON the
    /// store keeps (`events` decodes them; the daemon sends them on as they are).
    func eventTexts(session: String, after sequence: Int64, limit: Int) async throws(HaulError) -> [StoredEventText]
    /// Every session in the store, with its settings when it saved some.
    func sessions() async throws(HaulError) -> [(id: String, settings: SessionSettings?)]
    /// What the session's unacknowledged events (up to `through`) hold on to.
    func outboxPins(session: String, through sequence: Int64) async throws(HaulError) -> OutboxPins

    /// Deletes the session's finished downloads `retention` no longer keeps (never pinned
    /// ones), with the groups they leave empty; returns how many went.
    @discardableResult
    func prune(session: String, retention: DownloadManager.Retention, now: Date) async throws(HaulError) -> Int
    /// Prunes every session and trims every outbox to `maxEvents`, then gives the space back;
    /// returns how many downloads were deleted.
    func compact(retention: DownloadManager.Retention, maxEvents: Int) async throws(HaulError) -> Int
}

extension DownloadStoring {
    var changes: StoreChangeFeed? { nil }
    var takesWritesAsTheyArrive: Bool { false }

    /// The session's unacknowledged events after `sequence`, oldest first.
    func events(session: String, after sequence: Int64, limit: Int) async throws(HaulError) -> [StoredEvent] {
        try await eventTexts(session: session, after: sequence, limit: limit).decoded()
    }

    /// Inserts or replaces these downloads (by id), creating their sessions' and groups' rows.
    func save(_ downloads: [StoredDownload]) async throws(HaulError) {
        guard !downloads.isEmpty else { return }
        try await submit(.save(downloads))
    }

    /// Removes these downloads (and their segments); unknown IDs are ignored. Ordered with
    /// saves: a delete after a save of the same ID wins.
    func delete(_ ids: [DownloadID]) async throws(HaulError) {
        guard !ids.isEmpty else { return }
        try await submit(.delete(ids))
    }

    /// Writes rows (`downloads` whole, `changed` only their progress columns), placement
    /// intents, deletions and the events they caused in one transaction, so that
    /// after a crash the outbox never says less (or more) than the downloads' states.
    func save(
        _ downloads: [StoredDownload], progressOf changed: [StoredDownload] = [], movingGroups groupMoves: [GroupMove] = [],
        placements: [StoredPlacement] = [],
        deleting deletions: [DownloadID] = [], deletingGroups groups: [String] = [], events: [StoredEvent],
        trimmingEventsTo maxEvents: Int? = nil, session: String
    ) async throws(HaulError) {
        var writes: [StoreWrite] = []
        if !deletions.isEmpty { writes.append(.delete(deletions)) }
        if !groups.isEmpty { writes.append(.deleteEmptyGroups(session: session, groups)) }
        if !downloads.isEmpty { writes.append(.save(downloads)) }
        if !changed.isEmpty { writes.append(.saveProgress(changed)) }
        if !groupMoves.isEmpty { writes.append(.moveToGroups(session: session, groupMoves)) }
        if !placements.isEmpty { writes.append(.recordPlacements(placements)) }
        if !events.isEmpty { writes.append(.appendEvents(session: session, events)) }
        if let maxEvents { writes.append(.trimEvents(session: session, keeping: maxEvents)) }
        guard !writes.isEmpty else { return }
        try await submit(writes.count == 1 ? writes[0] : .all(writes))
    }

    func acknowledgeEvents(session: String, through sequence: Int64) async throws(HaulError) {
        try await submit(.acknowledgeEvents(session: session, through: sequence))
    }

    func saveSettings(_ settings: SessionSettings, session: String) async throws(HaulError) {
        try await submit(.saveSessionSettings(session: session, settings))
    }

    func loadAll(session: String) async throws(HaulError) -> [StoredDownload] {
        try await loadAll(session: session, includingFinished: true)
    }

    func outboxPins(session: String) async throws(HaulError) -> OutboxPins {
        try await outboxPins(session: session, through: .max)
    }

    @discardableResult
    func prune(session: String, retention: DownloadManager.Retention) async throws(HaulError) -> Int {
        try await prune(session: session, retention: retention, now: Date())
    }
}
