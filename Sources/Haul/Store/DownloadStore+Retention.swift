import Foundation
import GRDB

/// Keeping history bounded: finished downloads (completed, failed, canceled) beyond a
/// session's retention rule are deleted, with the groups they leave empty, and a session's
/// unacknowledged events beyond a bound are dropped oldest first.
///
/// Why: a store that keeps every finished download forever makes every later run slower (a
/// run loads its session) and the file larger, for records nobody reads again.
extension DownloadStore {
    /// The states whose rows retention may delete, as stored.
    static let finishedStatesSQL = "('completed', 'failed', 'canceled')"

    /// Deletes the session's finished downloads that `retention` no longer keeps: those added
    /// before `now - maxAge`, then the oldest (by insertion) beyond `maxFinished`, leaving
    /// alone (and not counting) those the outbox pins (`OutboxPins`): a download whose end, or
    /// whose group's completion, the client has not acknowledged.
    /// Groups left without a download are deleted too. Returns how many downloads went.
    @discardableResult
    func prune(session: String, retention: DownloadManager.Retention, now: Date = Date()) async throws(HaulError) -> Int {
        guard retention.maxFinished != nil || retention.maxAge != nil else { return 0 }
        return try await write("prune the finished downloads of session '\(session)'") { db in
            try Self.prune(session: session, retention: retention, now: now, in: db)
        }
    }

    static func prune(session: String, retention: DownloadManager.Retention, now: Date, in db: Database) throws -> Int {
        let pins = try outboxPins(session: session, in: db)
        let pinned = try pinnedRowids(pins, session: session, in: db)
        var doomed: [Int64] = []
        if let maxAge = retention.maxAge {
            let cutoff = now.addingTimeInterval(-maxAge.inSeconds).timeIntervalSinceReferenceDate
            // Rows are added in rowid order, so the ones added before the cutoff are those
            // below a rowid found by bisection: reading each row's date instead would read
            // every page of the session's history at every open.
            let boundary = try firstRowid(addedAtOrAfter: cutoff, in: db)
            doomed += try Int64.fetchAll(db, sql: """
                SELECT rowid FROM download WHERE session = ? AND state IN \(finishedStatesSQL) AND rowid < ?
                """, arguments: [session, boundary]).filter { !pinned.contains($0) }
        }
        // The rowids span an upper bound of the rows: within the bound, nothing to count.
        if let maxFinished = retention.maxFinished, try rowidSpan(in: db) > maxFinished {
            let finished = try Int.fetchOne(db, sql: """
                SELECT COUNT(*) FROM download WHERE session = ? AND state IN \(finishedStatesSQL)
                """, arguments: [session]) ?? 0
            let excess = finished - pinned.count - doomed.count - max(0, maxFinished)
            if excess > 0 {
                let aged = Set(doomed)
                // Oldest first, skipping those already doomed by age and those pinned.
                let oldest = try Int64.fetchAll(db, sql: """
                    SELECT rowid FROM download WHERE session = ? AND state IN \(finishedStatesSQL)
                    ORDER BY rowid LIMIT ?
                    """, arguments: [session, excess + aged.count + pinned.count])
                doomed += oldest.lazy.filter { !aged.contains($0) && !pinned.contains($0) }.prefix(excess)
            }
        }
        guard !doomed.isEmpty else { return 0 }
        let groups = try deleteOldest(doomed, keeping: pinned, session: session, in: db)
        try deleteEmptyGroups(groups, session: session, in: db)
        return doomed.count
    }

    /// The rowids of the session's finished downloads that `pins` hold: named by an
    /// unacknowledged event, or members of a group whose completion is unacknowledged.
    static func pinnedRowids(_ pins: OutboxPins, session: String, in db: Database) throws -> Set<Int64> {
        guard !pins.isEmpty else { return [] }
        // Since schema version 3 a row's rowid is its insertion order, not its ID: each pinned
        // ID is looked up (the outbox's bound bounds how many).
        var rowids: Set<Int64> = []
        let byID = try db.cachedStatement(sql: "SELECT rowid FROM download WHERE id = ?")
        for id in pins.downloads {
            if let rowid = try Int64.fetchOne(byID, arguments: [Int64(bitPattern: id.rawValue)]) { rowids.insert(rowid) }
        }
        let members = try db.cachedStatement(sql: """
            SELECT rowid FROM download WHERE session = ? AND groupName = ? AND state IN \(finishedStatesSQL)
            """)
        for group in pins.groups {
            rowids.formUnion(try Int64.fetchAll(members, arguments: [session, group]))
        }
        return rowids
    }

    /// How many rowids the table's downloads span: at least how many rows there are, found
    /// in two lookups instead of a count.
    static func rowidSpan(in db: Database) throws -> Int {
        // Two statements: SQLite answers MIN or MAX alone from the b-tree's edge, not both at once.
        guard let low = try Int64.fetchOne(db, sql: "SELECT MIN(rowid) FROM download"),
              let high = try Int64.fetchOne(db, sql: "SELECT MAX(rowid) FROM download")
        else { return 0 }
        return Int(high - low + 1)
    }

    /// The smallest rowid of a download added at or after `cutoff` (seconds since the reference
    /// date), or one past the largest when there is none: a bisection over rowids, a few
    /// lookups however large the table. Downloads are added in rowid order, so their dates
    /// rise with it (a clock set back makes the boundary approximate, never wrong by more
    /// than the rows added meanwhile).
    static func firstRowid(addedAtOrAfter cutoff: Double, in db: Database) throws -> Int64 {
        guard var low = try Int64.fetchOne(db, sql: "SELECT MIN(rowid) FROM download"),
              var high = try Int64.fetchOne(db, sql: "SELECT MAX(rowid) FROM download")
        else { return 0 }
        high += 1
        let next = try db.cachedStatement(sql: "SELECT rowid, createdAt FROM download WHERE rowid >= ? ORDER BY rowid LIMIT 1")
        while low < high {
            let middle = low + (high - low) / 2
            guard let row = try Row.fetchOne(next, arguments: [middle]) else {
                high = middle
                continue
            }
            let (rowid, added): (Int64, Double) = (row[0], row[1])
            if added < cutoff {
                low = rowid + 1
            } else {
                high = min(middle, rowid)
            }
        }
        return low
    }

    /// Deletes the `doomed` downloads (their segments go by cascade); returns the groups they
    /// may have been in.
    ///
    /// `doomed` is a prefix, in rowid order, of the session's finished downloads that are not
    /// `pinned` (those added before a date, then the oldest beyond a count): every such row
    /// between its first and its last rowid is doomed. So it goes in one statement per run of
    /// rowids between pinned rows, not one per row. Why: a run kept at its retention bound
    /// prunes as many rows as it adds, before its first transfer; deleted one by one, 5,000
    /// rows took about 70 ms of the writer's time in a store of 100,000, while the other core
    /// waited. The count of deleted rows is checked: a mismatch rolls the transaction back
    /// rather than delete anything that was not doomed.
    private static func deleteOldest(
        _ doomed: [Int64], keeping pinned: Set<Int64>, session: String, in db: Database
    ) throws -> Set<String> {
        guard let first = doomed.min(), let last = doomed.max() else { return [] }
        let finished = "session = ? AND state IN \(finishedStatesSQL)"
        // NOT INDEXED: the rowid range is the way in; the state index would visit every
        // finished row of the session instead.
        let groupsIn = try db.cachedStatement(sql: """
            SELECT DISTINCT groupName FROM download NOT INDEXED
            WHERE rowid BETWEEN ? AND ? AND \(finished) AND groupName IS NOT NULL
            """)
        let delete = try db.cachedStatement(sql: """
            DELETE FROM download NOT INDEXED WHERE rowid BETWEEN ? AND ? AND \(finished)
            """)
        var groups: Set<String> = []
        var deleted = 0
        var low = first
        for high in pinned.filter({ $0 >= first && $0 <= last }).sorted() + [last + 1] {
            if low < high {
                let arguments: StatementArguments = [low, high - 1, session]
                groups.formUnion(try String.fetchAll(groupsIn, arguments: arguments))
                try delete.execute(arguments: arguments)
                deleted += db.changesCount
            }
            low = high + 1
        }
        guard deleted == doomed.count else {
            throw HaulError(.fileSystem, "pruning was to delete \(doomed.count) finished downloads, and found \(deleted)")
        }
        return groups
    }

    /// Deletes those of `groups` that no download of the session names any more.
    private static func deleteEmptyGroups(_ groups: Set<String>, session: String, in db: Database) throws {
        guard !groups.isEmpty else { return }
        try StoreWrite.apply([.deleteEmptyGroups(session: session, groups.sorted())], in: db)
    }

    /// Drops the session's oldest unacknowledged events beyond `maxEvents`: a client that never
    /// comes back must not make the outbox grow for the life of the store.
    static func trimEvents(session: String, keeping maxEvents: Int, in db: Database) throws {
        guard let newestDropped = try Int64.fetchOne(db, sql: """
            SELECT sequence FROM event WHERE session = ? ORDER BY sequence DESC LIMIT 1 OFFSET ?
            """, arguments: [session, max(0, maxEvents)]) else { return }
        try db.execute(sql: "DELETE FROM event WHERE session = ? AND sequence <= ?", arguments: [session, newestDropped])
    }

    /// Compacts the store after pruning (`haul gc`): every session's finished downloads beyond
    /// `retention` and events beyond `maxEvents` are deleted, then the file is rebuilt without
    /// the free pages (SQLite's VACUUM). Returns how many downloads were deleted.
    func compact(retention: DownloadManager.Retention, maxEvents: Int) async throws(HaulError) -> Int {
        let pruned = try await write("prune the store") { db in
            var pruned = 0
            for session in try String.fetchAll(db, sql: "SELECT id FROM session") {
                pruned += try Self.prune(session: session, retention: retention, now: Date(), in: db)
                try Self.trimEvents(session: session, keeping: maxEvents, in: db)
            }
            return pruned
        }
        do {
            // VACUUM builds a copy of the whole store in a temporary database: on disk, not in
            // the memory the writer's statement journals use (`keepStatementJournalsInMemory`).
            try await writer.writeWithoutTransaction { db in
                try db.execute(sql: "PRAGMA temp_store = FILE")
                defer { try? db.execute(sql: "PRAGMA temp_store = MEMORY") }
                try db.execute(sql: "VACUUM")
            }
        } catch {
            throw StoreFailure.error(error, "compact the download store", path: path)
        }
        return pruned
    }

    /// Runs `body` in a write transaction of its own, mapping failures to `HaulError`.
    func write<Value: Sendable>(
        _ action: String, _ body: @escaping @Sendable (Database) throws -> Value
    ) async throws(HaulError) -> Value {
        do {
            return try await writer.write(body)
        } catch {
            throw StoreFailure.error(error, action, path: path)
        }
    }
}
