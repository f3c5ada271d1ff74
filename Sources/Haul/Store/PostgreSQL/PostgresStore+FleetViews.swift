import Foundation
import PostgresNIO

/// What a client of one daemon sees of the downloads other daemons of the fleet run: their
/// rows, as their owners last wrote them (state, total, durable offset as checkpointed).
extension PostgresStore {
    /// The session's downloads in `states` (of queued, running and paused; others are
    /// ignored), in queue position order, without their segments. An indexed read
    /// (`download_session_state_priority_position`): its cost follows the session's unfinished
    /// downloads, never its finished history.
    func unfinished(session: String, inStates states: Set<DownloadState>) async throws(HaulError) -> [StoredDownload] {
        let wanted = states.intersection([.queued, .running, .paused]).map(\.rawValue).sorted()
        guard !wanted.isEmpty else { return [] }
        return try await read("list the unfinished downloads of session '\(session)'") { connection in
            var binds = PostgresBindings()
            binds.append(session)
            binds.append(wanted)
            let decoder = PostgresRowDecoder()
            return try await connection.all(
                PostgresQuery(unsafeSQL: PostgresRows.selectSQL + " WHERE session = $1 AND state = ANY($2) ORDER BY position, id", binds: binds),
                decoder.download(from:))
        }
    }

    /// How many of the session's downloads are queued, running or paused: an index-only
    /// count, so a daemon that holds them all can skip reading the rows.
    func unfinishedCount(session: String) async throws(HaulError) -> Int {
        try await read("count the unfinished downloads of session '\(session)'") { connection in
            Int(try await connection.one(
                "SELECT count(*) FROM haul.download WHERE session = \(session) AND state IN ('queued', 'running', 'paused')",
                as: Int64.self) ?? 0)
        }
    }
}
