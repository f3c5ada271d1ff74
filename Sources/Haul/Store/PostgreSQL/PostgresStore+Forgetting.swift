import PostgresNIO

/// Finished downloads forgotten on a client's request through any daemon of a fleet (aria2's
/// `removeDownloadResult`, `purgeDownloadResult`): the rows go for every daemon, and a daemon
/// that shows some of them from its memory drops them at its next listing.
extension PostgresStore {
    /// Deletes the session's finished rows (completed, failed, canceled) that no daemon holds
    /// a lease on: those of `ids`, or every one when nil. Returns the IDs deleted.
    func deleteFinished(session: String, ids: [DownloadID]?) async throws(HaulError) -> [DownloadID] {
        if let ids, ids.isEmpty { return [] }
        let keys = ids?.map { Int64(bitPattern: $0.rawValue) }
        return try await write("forget finished downloads of session '\(session)'") { connection in
            let query: PostgresQuery = if let keys {
                """
                DELETE FROM haul.download WHERE session = \(session) AND id = ANY(\(keys))
                AND state IN ('completed', 'failed', 'canceled') AND leaseOwner IS NULL RETURNING id
                """
            } else {
                """
                DELETE FROM haul.download WHERE session = \(session)
                AND state IN ('completed', 'failed', 'canceled') AND leaseOwner IS NULL RETURNING id
                """
            }
            return try await connection.all(query) { row in DownloadID(rawValue: UInt64(bitPattern: try row.decode(Int64.self))) }
        }
    }

    /// Which of `ids` still have a row in the session.
    func present(_ ids: [DownloadID], session: String) async throws(HaulError) -> Set<DownloadID> {
        guard !ids.isEmpty else { return [] }
        let keys = ids.map { Int64(bitPattern: $0.rawValue) }
        return try await read("look up \(ids.count) downloads of session '\(session)'") { connection in
            Set(try await connection.all("SELECT id FROM haul.download WHERE session = \(session) AND id = ANY(\(keys))") { row in
                DownloadID(rawValue: UInt64(bitPattern: try row.decode(Int64.self)))
            })
        }
    }
}
