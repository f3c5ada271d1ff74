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

    /// The rows of `ids` in the session, in any state, without their segments: primary-key
    /// lookups, for the downloads a daemon knows of but does not hold (their rows say what
    /// became of them on other daemons). An ID without a row (removed since) is left out.
    func rows(of ids: [DownloadID], session: String) async throws(HaulError) -> [StoredDownload] {
        guard !ids.isEmpty else { return [] }
        return try await read("read \(ids.count) downloads of session '\(session)'") { connection in
            var binds = PostgresBindings()
            binds.append(ids.map { Int64(bitPattern: $0.rawValue) })
            binds.append(session)
            let decoder = PostgresRowDecoder()
            return try await connection.all(
                PostgresQuery(unsafeSQL: PostgresRows.selectSQL + " WHERE id = ANY($1) AND session = $2", binds: binds),
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

/// Finished downloads, per-state counts and a group's members, for the fleet's views on any
/// daemon (`DownloadManager+FleetViews`). `excluding`: the downloads the asking daemon shows
/// from its own memory, left out here so that none is listed or counted twice.
extension PostgresStore {
    /// How many of the session's finished downloads there are besides `excluding`, counting
    /// no further than `cap`: a read of at most `cap + excluding.count` entries of the partial
    /// index `download_session_finished_ordinal`, however long the history.
    func finishedCount(session: String, excluding: [DownloadID], upTo cap: Int) async throws(HaulError) -> Int {
        guard cap > 0 else { return 0 }
        return try await read("count the finished downloads of session '\(session)'") { connection in
            var binds = PostgresBindings()
            binds.append(session)
            binds.append(excluding.map { Int64(bitPattern: $0.rawValue) })
            binds.append(Int64(cap))
            let sql = """
                SELECT count(*) FROM (SELECT 1 FROM haul.download WHERE session = $1 AND state IN \(PostgresRows.finishedStates)
                AND NOT (id = ANY($2)) ORDER BY ordinal DESC LIMIT $3) AS newest
                """
            return Int(try await connection.one(PostgresQuery(unsafeSQL: sql, binds: binds), as: Int64.self) ?? 0)
        }
    }

    /// The session's finished downloads besides `excluding`, newest added first, from the
    /// `skipping`th, at most `limit`: a page read backwards along the partial index, whose
    /// cost follows `skipping + limit`, never the history behind the page.
    func finished(session: String, excluding: [DownloadID], newestFirstSkipping skipping: Int, limit: Int) async throws(HaulError) -> [StoredDownload] {
        guard limit > 0 else { return [] }
        return try await read("list the finished downloads of session '\(session)'") { connection in
            var binds = PostgresBindings()
            binds.append(session)
            binds.append(excluding.map { Int64(bitPattern: $0.rawValue) })
            binds.append(Int64(max(0, skipping)))
            binds.append(Int64(limit))
            let decoder = PostgresRowDecoder()
            let sql = PostgresRows.selectSQL + """
                 WHERE session = $1 AND state IN \(PostgresRows.finishedStates) AND NOT (id = ANY($2))
                ORDER BY ordinal DESC OFFSET $3 LIMIT $4
                """
            return try await connection.all(PostgresQuery(unsafeSQL: sql, binds: binds), decoder.download(from:))
        }
    }

    /// How many of the session's downloads besides `excluding` are queued, running and paused:
    /// the session's counts by state (an index-only scan of the unfinished rows) less those of
    /// `excluding` (primary-key lookups), cheaper than filtering every unfinished row by ID.
    func unfinishedCounts(session: String, excluding: [DownloadID]) async throws(HaulError) -> [DownloadState: Int] {
        try await read("count the unfinished downloads of session '\(session)' by state") { connection in
            let unfinished = "session = $1 AND state IN ('queued', 'running', 'paused')"
            var binds = PostgresBindings()
            binds.append(session)
            let all = try await connection.all(
                PostgresQuery(unsafeSQL: "SELECT state, count(*) FROM haul.download WHERE \(unfinished) GROUP BY state", binds: binds),
                { row in try row.decode((String, Int64).self) })
            binds.append(excluding.map { Int64(bitPattern: $0.rawValue) })
            let excluded = excluding.isEmpty ? [] : try await connection.all(
                PostgresQuery(unsafeSQL: "SELECT state, count(*) FROM haul.download WHERE id = ANY($2) AND \(unfinished) GROUP BY state", binds: binds),
                { row in try row.decode((String, Int64).self) })
            var counts: [DownloadState: Int] = [:]
            for (state, count) in all { if let state = DownloadState(rawValue: state) { counts[state, default: 0] += Int(count) } }
            for (state, count) in excluded { if let state = DownloadState(rawValue: state) { counts[state, default: 0] -= Int(count) } }
            return counts.filter { $0.value > 0 }
        }
    }

    /// The members of the session's group `name` in the order they were added (index
    /// `download_session_group`), without their segments; nil when the store has no such group.
    func members(session: String, group name: String) async throws(HaulError) -> [StoredDownload]? {
        try await read("list the members of group '\(name)'") { connection in
            var binds = PostgresBindings()
            binds.append(session)
            binds.append(name)
            let decoder = PostgresRowDecoder()
            let rows = try await connection.all(
                PostgresQuery(unsafeSQL: PostgresRows.selectSQL + " WHERE session = $1 AND groupName = $2 ORDER BY ordinal", binds: binds),
                decoder.download(from:))
            guard rows.isEmpty else { return rows }
            let exists = try await connection.one(
                "SELECT count(*) FROM haul.downloadGroup WHERE session = \(session) AND name = \(name)", as: Int64.self) ?? 0
            return exists > 0 ? [] : nil
        }
    }

    /// How many members the session's group `name` has in the store, and how many of them
    /// have finished: what a wait for the group looks at each time one may have ended,
    /// instead of reading every member's row (index `download_session_group`).
    func memberCounts(session: String, group name: String) async throws(HaulError) -> (members: Int, finished: Int) {
        try await read("count the members of group '\(name)'") { connection in
            var binds = PostgresBindings()
            binds.append(session)
            binds.append(name)
            let counts = try await connection.all(
                PostgresQuery(unsafeSQL: """
                    SELECT count(*), count(*) FILTER (WHERE state IN \(PostgresRows.finishedStates))
                    FROM haul.download WHERE session = $1 AND groupName = $2
                    """, binds: binds),
                { row in try row.decode((Int64, Int64).self) })
            guard let (members, finished) = counts.first else { return (0, 0) }
            return (Int(members), Int(finished))
        }
    }
}
