import PostgresNIO

/// What a dashboard shows of a whole session in a fleet (`haul.overview` on any daemon): its
/// downloads counted by group and state, and a window of them in the order they were added,
/// from the rows every daemon writes.
extension PostgresStore {
    /// The session's downloads by group and state, with their bytes as their rows say
    /// (`StoredDownload.storedInfo`'s progress: a completed download's length, else its
    /// durable offset). One aggregate read; a few rows whatever the session's size.
    func tally(session: String) async throws(HaulError) -> [SessionTally] {
        try await read("count the downloads of session '\(session)'") { connection in
            try await connection.all("""
                SELECT groupName, state, count(*),
                    coalesce(sum(CASE WHEN state = 'completed' THEN coalesce(expectedLength, fileSize, durableOffset) ELSE durableOffset END), 0)::bigint,
                    coalesce(sum(expectedLength), 0)::bigint
                FROM haul.download WHERE session = \(session) GROUP BY groupName, state
                """) { row in
                let (group, state, count, completed, expected) = try row.decode((String?, String, Int64, Int64, Int64).self)
                return SessionTally(group: group, state: DownloadState(rawValue: state) ?? .queued, count: count, completedBytes: completed, expectedBytes: expected)
            }
        }
    }

    /// The session's downloads from `offset` in the order they were added, at most `limit`
    /// (index `download_session_ordinal`).
    func window(session: String, offset: Int, limit: Int) async throws(HaulError) -> [StoredDownload] {
        guard limit > 0 else { return [] }
        return try await read("list downloads of session '\(session)'") { connection in
            var binds = PostgresBindings()
            binds.append(session)
            binds.append(Int64(max(0, offset)))
            binds.append(Int64(limit))
            let decoder = PostgresRowDecoder()
            return try await connection.all(
                PostgresQuery(unsafeSQL: PostgresRows.selectSQL + " WHERE session = $1 ORDER BY ordinal OFFSET $2 LIMIT $3", binds: binds),
                decoder.download(from:))
        }
    }
}

/// Downloads of one group (nil: none) in one state, and their bytes.
package struct SessionTally: Sendable, Hashable {
    package var group: String?
    package var state: DownloadState
    package var count: Int64
    package var completedBytes: Int64
    package var expectedBytes: Int64
}
