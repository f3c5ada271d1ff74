import Foundation
import PostgresNIO

/// Keeping history bounded, as the SQLite store does (`DownloadStore+Retention`): finished
/// downloads beyond a session's retention rule go, oldest first, with the groups they leave
/// empty, never those the outbox pins; outboxes beyond a bound drop their oldest events.
extension PostgresStore {
    @discardableResult
    func prune(session: String, retention: DownloadManager.Retention, now: Date) async throws(HaulError) -> Int {
        guard retention.maxFinished != nil || retention.maxAge != nil else { return 0 }
        return try await write("prune the finished downloads of session '\(session)'") { connection in
            try await Self.prune(session: session, retention: retention, now: now, on: connection)
        }
    }

    /// Deletes the session's finished downloads added before `now - maxAge`, then the oldest
    /// (by insertion) beyond `maxFinished`, leaving alone (and not counting) the pinned ones.
    static func prune(
        session: String, retention: DownloadManager.Retention, now: Date, on connection: PostgresConnection
    ) async throws -> Int {
        let pins = try await outboxPins(session: session, through: .max, on: connection)
        let pinnedIDs = pins.downloads.map { Int64(bitPattern: $0.rawValue) }
        let pinnedGroups = Array(pins.groups)
        // A finished download of the session that no unacknowledged event holds on to.
        let unpinned = """
            session = $1 AND state IN \(PostgresRows.finishedStates)
            AND NOT (id = ANY($2) OR (groupName IS NOT NULL AND groupName = ANY($3)))
            """
        func binds(_ more: (inout PostgresBindings) -> Void = { _ in }) -> PostgresBindings {
            var binds = PostgresBindings()
            binds.append(session)
            binds.append(pinnedIDs)
            binds.append(pinnedGroups)
            more(&binds)
            return binds
        }
        var doomed: [Int64] = []
        if let maxAge = retention.maxAge {
            let cutoff = now.addingTimeInterval(-maxAge.inSeconds).timeIntervalSinceReferenceDate
            doomed = try await connection.all(PostgresQuery(
                unsafeSQL: "SELECT ordinal FROM haul.download WHERE \(unpinned) AND createdAt < $4",
                binds: binds { $0.append(cutoff) })) { try $0.decode(Int64.self) }
        }
        if let maxFinished = retention.maxFinished {
            let count = try await connection.one(PostgresQuery(
                unsafeSQL: "SELECT COUNT(*) FROM haul.download WHERE \(unpinned)", binds: binds()), as: Int64.self) ?? 0
            let excess = Int(count) - doomed.count - max(0, maxFinished)
            if excess > 0 {
                let aged = doomed
                doomed += try await connection.all(PostgresQuery(
                    unsafeSQL: "SELECT ordinal FROM haul.download WHERE \(unpinned) AND NOT ordinal = ANY($4) ORDER BY ordinal LIMIT $5",
                    binds: binds { $0.append(aged); $0.append(Int64(excess)) })) { try $0.decode(Int64.self) }
            }
        }
        guard !doomed.isEmpty else { return 0 }
        let groups = try await connection.all(
            "DELETE FROM haul.download WHERE ordinal = ANY(\(doomed)) RETURNING groupName"
        ) { try $0.decode(String?.self) }
        try await PostgresWrites.deleteEmptyGroups(Set(groups.compactMap { $0 }).sorted(), session: session, on: connection)
        return doomed.count
    }

    /// Prunes every session and trims every outbox to `maxEvents` in one transaction, then lets
    /// the server reuse the space (VACUUM: unlike SQLite's, it does not shrink the files, and
    /// it never blocks the daemons that use the tables meanwhile).
    func compact(retention: DownloadManager.Retention, maxEvents: Int) async throws(HaulError) -> Int {
        let pruned = try await write("prune the store") { connection in
            var pruned = 0
            let sessions = try await connection.all("SELECT id FROM haul.session") { try $0.decode(String.self) }
            for session in sessions {
                pruned += try await Self.prune(session: session, retention: retention, now: Date(), on: connection)
                try await PostgresWrites.trimEvents(session: session, keeping: maxEvents, on: connection)
            }
            return pruned
        }
        try await read("compact the download store") { connection in
            try await connection.run("VACUUM haul.download, haul.segment, haul.event, haul.downloadGroup, haul.session")
        }
        return pruned
    }
}
