import Foundation
import GRDB

/// The narrow look-up of a batch's earlier downloads (`EarlierDownloadRow`), for a run that
/// may find its files already there.
extension DownloadStore {
    /// One statement for a directory and a whole list of URLs: the list goes in as one JSON
    /// array, and SQLite probes the (session, directory, URL) index once per URL of it
    /// (`EXPLAIN QUERY PLAN`: `SEARCH download USING INDEX download_session_directory_url
    /// (session=? AND directory=? AND url=?)`, the list a `LIST SUBQUERY` over `json_each`).
    /// Rows of other URLs in the same directory are never read, so the cost follows the
    /// list, however much history the directory has. The inode comes out of the placement
    /// intent's JSON in SQLite (an inode beyond `Int64.max` comes out as a REAL and reads as
    /// unknown).
    static let earlierDownloadsSQL = """
        SELECT id, url, position, groupName, state, fileName, checksums, filePath, fileSize, fileModified,
               skipped, placement IS NOT NULL, json_extract(placement, '$.inode'), expectedLength,
               durableOffset, finalURL, verifiedChecksums, attempts, createdAt
        FROM download INDEXED BY download_session_directory_url
        WHERE session = ? AND directory = ? AND url IN (SELECT value FROM json_each(?))
        """

    func earlierDownloads(session: String, directory: String, urls: [String]) async throws(HaulError) -> [EarlierDownloadRow] {
        guard !urls.isEmpty else { return [] }
        let list = JSONText.strings(urls)
        return try await read("look up earlier downloads of session '\(session)'") { db in
            let statement = try db.cachedStatement(sql: Self.earlierDownloadsSQL)
            var found: [EarlierDownloadRow] = []
            let rows = try Row.fetchCursor(statement, arguments: [session, directory, list])
            while let row = try rows.next() {
                found.append(try Self.earlierDownload(row))
            }
            return found
        }
    }

    func hasDownloads(session: String, directory: String) async throws(HaulError) -> Bool {
        try await read("look up earlier downloads of session '\(session)'") { db in
            let statement = try db.cachedStatement(sql: """
                SELECT EXISTS (SELECT 1 FROM download INDEXED BY download_session_directory_url
                WHERE session = ? AND directory = ?)
                """)
            return try Bool.fetchOne(statement, arguments: [session, directory]) ?? false
        }
    }

    private static func earlierDownload(_ row: Row) throws -> EarlierDownloadRow {
        let stateText: String = try row.decode(String.self, atIndex: 4)
        guard let state = DownloadState(rawValue: stateText) else { throw StoredRowError("unknown state '\(stateText)'") }
        var inode: UInt64?
        if case .int64(let value) = (row[12] as DatabaseValue).storage, value >= 0 { inode = UInt64(value) }
        return EarlierDownloadRow(
            id: DownloadID(rawValue: UInt64(bitPattern: try row.decode(Int64.self, atIndex: 0))),
            url: try row.decode(String.self, atIndex: 1),
            position: try row.decode(Int64.self, atIndex: 2),
            group: try row.decode(String?.self, atIndex: 3),
            state: state,
            fileName: try row.decode(String?.self, atIndex: 5),
            checksumsText: try row.decode(String.self, atIndex: 6),
            filePath: try row.decode(String?.self, atIndex: 7),
            fileSize: try row.decode(Int64?.self, atIndex: 8),
            fileModified: try row.decode(Double?.self, atIndex: 9),
            skipped: try row.decode(Bool.self, atIndex: 10),
            hasPlacement: try row.decode(Bool.self, atIndex: 11),
            inode: inode,
            expectedLength: try row.decode(Int64?.self, atIndex: 13),
            durableOffset: try row.decode(Int64.self, atIndex: 14),
            finalURL: try row.decode(String?.self, atIndex: 15),
            verifiedChecksumsText: try row.decode(String.self, atIndex: 16),
            attempts: Int(try row.decode(Int64.self, atIndex: 17)),
            createdAt: try row.decode(Double.self, atIndex: 18))
    }
}
