import Foundation
import GRDB

/// One change a caller asked the store to make.
enum StoreWrite: Sendable {
    case save([StoredDownload])
    /// Updates only the `DownloadColumn.progress` columns (and segments, when given) of
    /// downloads already in the store: most writes are a state change, and rewriting each
    /// row's request with it cost a fifth of a run of thousands of small files.
    case saveProgress([StoredDownload])
    /// Sets the group of downloads already in the store (creating the groups' rows), touching
    /// nothing else of their rows.
    case moveToGroups(session: String, [GroupMove])
    case delete([DownloadID])
    /// Counts these finished downloads as added at `date`, for the retention rule: each goes
    /// to the end of the insertion order with that date, touching nothing else of its row.
    /// For downloads found in use again (a re-run found their files as placed), so that a file
    /// asked for more often than the age rule's span is never forgotten (`EarlierRunStore`).
    case markInUse([DownloadID], at: Date)
    /// Deletes these groups of a session, each only if no download names it any more (a
    /// group's rows cascade to its downloads, which must never happen by retention).
    case deleteEmptyGroups(session: String, [String])
    /// Drops a session's oldest unacknowledged events beyond a bound (`Retention.maxKeptEvents`).
    case trimEvents(session: String, keeping: Int)
    /// Sets the placement intent of downloads already in the store, touching nothing else of
    /// their rows: what must be durable before a verified file is renamed, and nothing more;
    /// or, for one that carries its `completion`, every progress column of that row at once.
    case recordPlacements([StoredPlacement])
    /// Appends to a session's outbox; the store assigns each event its sequence number.
    case appendEvents(session: String, [StoredEvent])
    /// The client has handled every event up to and including `through`.
    case acknowledgeEvents(session: String, through: Int64)
    case saveSessionSettings(session: String, SessionSettings)
    /// Several writes that must commit together (rows and the events they caused).
    indirect case all([StoreWrite])
    /// Writes that must commit together, handed to the open transaction as their caller makes
    /// them (a batch's rows in slices; see `ArrivingWrites`).
    case arriving(ArrivingWrites)
    /// Writes about one leased download, applied only while the writer still holds its lease
    /// (see `LeaseFence`). SQLite has no leases: there they always apply.
    indirect case fenced(LeaseFence, [StoreWrite])

    /// Applies a batch of changes, in order, inside the transaction the caller opened.
    ///
    /// Built for batches of 100,000 rows: every statement is prepared once (GRDB's statement
    /// cache) and re-bound per row, the row encoder and its JSON coders are created once, and
    /// the session and group rows are inserted once per batch, not once per download.
    static func apply(_ writes: [StoreWrite], in db: Database) throws {
        let now = StoredDate.value(Date())
        let rows = DownloadRowEncoder()
        let upsert = try db.cachedStatement(sql: DownloadColumn.upsertSQL)
        let insertSession = try db.cachedStatement(sql: """
            INSERT INTO session (id, createdAt) VALUES (?, ?) ON CONFLICT DO NOTHING
            """)
        let insertGroup = try db.cachedStatement(sql: """
            INSERT INTO downloadGroup (session, name, createdAt) VALUES (?, ?, ?) ON CONFLICT DO NOTHING
            """)
        let delete = try db.cachedStatement(sql: "DELETE FROM download WHERE id = ?")

        var sessions: Set<String> = []
        var groups: Set<GroupKey> = []
        for write in writes {
            switch write {
            case .save(let downloads):
                for download in downloads {
                    if sessions.insert(download.session).inserted {
                        try insertSession.execute(arguments: [download.session, now])
                    }
                    if let group = download.group, groups.insert(GroupKey(session: download.session, name: group)).inserted {
                        try insertGroup.execute(arguments: [download.session, group, now])
                    }
                    try rows.bind(download, to: upsert)
                    try upsert.execute()
                    if let segments = download.segments {
                        try SegmentRows.replace(segments, of: download.id, in: db)
                    }
                }
            case .saveProgress(let downloads):
                let update = try db.cachedStatement(sql: DownloadColumn.progressUpdateSQL)
                for download in downloads {
                    try rows.bindProgress(download, to: update)
                    try update.execute()
                    if let segments = download.segments {
                        try SegmentRows.replace(segments, of: download.id, in: db)
                    }
                }
            case .recordPlacements(let placements):
                let update = try db.cachedStatement(sql: "UPDATE download SET placement = ? WHERE id = ?")
                for placement in placements {
                    if let completion = placement.completion {
                        let progress = try db.cachedStatement(sql: DownloadColumn.progressUpdateSQL)
                        try rows.bindProgress(completion, to: progress)
                        try progress.execute()
                    } else {
                        try update.execute(arguments: [placement.intent.jsonText, Int64(bitPattern: placement.id.rawValue)])
                    }
                }
            case .moveToGroups(let session, let moves):
                let update = try db.cachedStatement(sql: "UPDATE download SET groupName = ? WHERE id = ?")
                for move in moves {
                    if let group = move.group, groups.insert(GroupKey(session: session, name: group)).inserted {
                        if sessions.insert(session).inserted { try insertSession.execute(arguments: [session, now]) }
                        try insertGroup.execute(arguments: [session, group, now])
                    }
                    try update.execute(arguments: [move.group, Int64(bitPattern: move.id.rawValue)])
                }
            case .delete(let ids):
                for id in ids {
                    try delete.execute(arguments: [Int64(bitPattern: id.rawValue)])
                }
            case .markInUse(let ids, let date):
                // A rowid is a row's place in the insertion order, which the age rule bisects
                // (`firstRowid(addedAtOrAfter:)`): the row takes the next one, after
                // every row added so far, and its date, so that dates still rise with rowids.
                let markInUse = try db.cachedStatement(sql: """
                    UPDATE download SET rowid = (SELECT MAX(rowid) FROM download) + 1, createdAt = ? WHERE id = ?
                    """)
                let added = StoredDate.value(date)
                for id in ids {
                    try markInUse.execute(arguments: [added, Int64(bitPattern: id.rawValue)])
                }
            case .deleteEmptyGroups(let session, let names):
                let deleteGroup = try db.cachedStatement(sql: """
                    DELETE FROM downloadGroup WHERE session = ? AND name = ?
                    AND NOT EXISTS (SELECT 1 FROM download WHERE session = ? AND groupName = ?)
                    """)
                for name in names {
                    try deleteGroup.execute(arguments: [session, name, session, name])
                }
            case .trimEvents(let session, let maxEvents):
                try DownloadStore.trimEvents(session: session, keeping: maxEvents, in: db)
            case .appendEvents(let session, let events):
                guard !events.isEmpty else { continue }
                if sessions.insert(session).inserted {
                    try insertSession.execute(arguments: [session, now])
                }
                let insertEvent = try db.cachedStatement(sql: """
                    INSERT INTO event (session, kind, payload, createdAt) VALUES (?, ?, ?, ?)
                    """)
                // Bound value by value: GRDB's arguments, built per event, cost more than the
                // insert in a daemon's batch of small files (two events a file).
                for event in events {
                    var binder = StatementBinder(insertEvent)
                    try binder.bind(session.databaseValue)
                    try binder.bind(event.kind.rawValue.databaseValue)
                    try binder.bindText(try event.jsonBytes ?? Array(JSONEncoder().encode(event)))
                    try binder.bind(StoredDate.value(event.date))
                    try binder.finish()
                    try insertEvent.execute()
                }
            case .acknowledgeEvents(let session, let through):
                try db.execute(sql: "DELETE FROM event WHERE session = ? AND sequence <= ?", arguments: [session, through])
            case .saveSessionSettings(let session, let settings):
                let text = String(decoding: try JSONEncoder().encode(settings), as: UTF8.self)
                try db.execute(sql: """
                    INSERT INTO session (id, createdAt, settings) VALUES (?, ?, ?)
                    ON CONFLICT (id) DO UPDATE SET settings = excluded.settings
                    """, arguments: [session, now, text])
            case .all(let writes), .fenced(_, let writes):
                try apply(writes, in: db)
            case .arriving(let arriving):
                // Waits on this (the writer's) thread for each write the caller adds.
                var index = 0
                while let write = try arriving.write(at: index) {
                    try apply([write], in: db)
                    index += 1
                }
            }
        }
    }

    private struct GroupKey: Hashable {
        var session: String
        var name: String
    }
}
