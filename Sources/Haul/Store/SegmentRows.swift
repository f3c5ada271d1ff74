import GRDB

/// The `segment` table: the byte ranges of segmented downloads, each with its durable offset.
///
/// Written only with checkpoints (a download's segments are replaced as a whole, in the same
/// transaction as its row, so that row and segments always describe one moment), and read
/// with the downloads they belong to.
enum SegmentRows {
    /// Replaces the segments of download `id` with `segments` (none when empty).
    static func replace(_ segments: [DurableSegment], of id: DownloadID, in db: Database) throws {
        let key = Int64(bitPattern: id.rawValue)
        try db.cachedStatement(sql: "DELETE FROM segment WHERE downloadId = ?").execute(arguments: [key])
        guard !segments.isEmpty else { return }
        let insert = try db.cachedStatement(sql: """
            INSERT INTO segment (downloadId, start, "end", durableOffset) VALUES (?, ?, ?, ?)
            """)
        for segment in segments {
            try insert.execute(arguments: [key, segment.start, segment.end, segment.durableOffset])
        }
    }

    /// The segments of every download of a session that has any, each list ordered by start.
    ///
    /// Driven from `segment` (CROSS JOIN fixes the loop order): only running, segmented
    /// downloads have rows there, while the session may hold a long history of finished ones,
    /// and SQLite would otherwise visit every download row of the session to find the few.
    static func all(session: String, in db: Database) throws -> [DownloadID: [DurableSegment]] {
        let rows = try Row.fetchCursor(db, sql: """
            SELECT segment.downloadId, segment.start, segment."end", segment.durableOffset
            FROM segment CROSS JOIN download ON download.id = segment.downloadId
            WHERE download.session = ?
            ORDER BY segment.downloadId, segment.start
            """, arguments: [session])
        var result: [DownloadID: [DurableSegment]] = [:]
        while let row = try rows.next() {
            let id = DownloadID(rawValue: UInt64(bitPattern: row[0] as Int64))
            result[id, default: []].append(DurableSegment(start: row[1], end: row[2], durableOffset: row[3]))
        }
        return result
    }

    /// The segments of one download, ordered by start; nil when it has none.
    static func of(_ id: DownloadID, in db: Database) throws -> [DurableSegment]? {
        let segments = try Row.fetchAll(db, sql: """
            SELECT start, "end", durableOffset FROM segment WHERE downloadId = ? ORDER BY start
            """, arguments: [Int64(bitPattern: id.rawValue)])
            .map { DurableSegment(start: $0[0], end: $0[1], durableOffset: $0[2]) }
        return segments.isEmpty ? nil : segments
    }
}
