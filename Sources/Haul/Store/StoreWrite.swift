import Foundation
import GRDB

/// One change a caller asked the store to make.
enum StoreWrite: Sendable {
    case save([StoredDownload])
    case delete([DownloadID])

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
                    // Unchecked: the encoder yields exactly one value per column, by construction.
                    upsert.setUncheckedArguments(try rows.arguments(for: download))
                    try upsert.execute()
                    if let segments = download.segments {
                        try SegmentRows.replace(segments, of: download.id, in: db)
                    }
                }
            case .delete(let ids):
                for id in ids {
                    try delete.execute(arguments: [Int64(bitPattern: id.rawValue)])
                }
            }
        }
    }

    private struct GroupKey: Hashable {
        var session: String
        var name: String
    }
}
