import Foundation
import PostgresNIO

/// The narrow look-up of a batch's earlier downloads (`EarlierDownloadRow`): the same answer
/// as the SQLite store's, from one query per directory on the (session, directory, url) index
/// (`url = ANY($3)`, the list bound as one array).
extension PostgresStore {
    static let earlierDownloadsSQL = """
        SELECT id, url, position, groupName, state, fileName, checksums, filePath, fileSize, fileModified,
               skipped, placement, expectedLength, durableOffset, finalURL, verifiedChecksums, attempts, createdAt
        FROM haul.download WHERE session = $1 AND directory = $2 AND url = ANY($3)
        """

    func earlierDownloads(session: String, directory: String, urls: [String]) async throws(HaulError) -> [EarlierDownloadRow] {
        guard !urls.isEmpty else { return [] }
        return try await read("look up earlier downloads of session '\(session)'") { connection in
            var binds = PostgresBindings()
            binds.append(session)
            binds.append(directory)
            binds.append(urls)
            return try await connection.all(PostgresQuery(unsafeSQL: Self.earlierDownloadsSQL, binds: binds), Self.earlierDownload)
        }
    }

    func hasDownloads(session: String, directory: String) async throws(HaulError) -> Bool {
        try await read("look up earlier downloads of session '\(session)'") { connection in
            var binds = PostgresBindings()
            binds.append(session)
            binds.append(directory)
            return try await connection.one(PostgresQuery(unsafeSQL: """
                SELECT EXISTS (SELECT 1 FROM haul.download WHERE session = $1 AND directory = $2)
                """, binds: binds), as: Bool.self) ?? false
        }
    }

    private static func earlierDownload(_ row: PostgresRow) throws -> EarlierDownloadRow {
        let cells = row.makeRandomAccess()
        let stateText = try cells[4].decode(String.self)
        guard let state = DownloadState(rawValue: stateText) else { throw StoredRowError("unknown state '\(stateText)'") }
        // The intent's text is read here, not in SQL, with the store's own reader (an intent it
        // cannot read leaves the inode unknown, which only costs the file the long way).
        let placement = try cells[11].decode(String?.self)
        return EarlierDownloadRow(
            id: DownloadID(rawValue: UInt64(bitPattern: try cells[0].decode(Int64.self))),
            url: try cells[1].decode(String.self),
            position: try cells[2].decode(Int64.self),
            group: try cells[3].decode(String?.self),
            state: state,
            fileName: try cells[5].decode(String?.self),
            checksumsText: try cells[6].decode(String.self),
            filePath: try cells[7].decode(String?.self),
            fileSize: try cells[8].decode(Int64?.self),
            fileModified: try cells[9].decode(Double?.self),
            skipped: try cells[10].decode(Bool.self),
            hasPlacement: placement != nil,
            inode: placement.flatMap { PlacementIntent(jsonText: $0) }?.inode,
            expectedLength: try cells[12].decode(Int64?.self),
            durableOffset: try cells[13].decode(Int64.self),
            finalURL: try cells[14].decode(String?.self),
            verifiedChecksumsText: try cells[15].decode(String.self),
            attempts: Int(try cells[16].decode(Int64.self)),
            createdAt: try cells[17].decode(Double.self))
    }
}
