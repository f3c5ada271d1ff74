import Foundation
import PostgresNIO

/// Applies `StoreWrite` batches to the PostgreSQL store, in order, inside the transaction the
/// caller opened: the same changes `StoreWrite.apply` makes in SQLite.
enum PostgresWrites {
    static func apply(_ writes: [StoreWrite], on connection: PostgresConnection) async throws {
        var batch = Batch(connection: connection)
        try await batch.apply(writes)
        // The events of completed groups go last, as every outbox append does: the session's
        // row is then locked after every group row, by every transaction.
        let completions = batch.groupEvents
        if !completions.isEmpty { try await batch.apply(completions) }
        try await batch.notifyQueues()
    }

    /// What one transaction has already done: the session and group rows are inserted once
    /// per batch, not once per download; sessions whose outbox this transaction locked.
    private struct Batch {
        let connection: PostgresConnection
        let now = Date().timeIntervalSinceReferenceDate
        let rows = DownloadRowEncoder()
        var sessions: Set<String> = []
        var groups: Set<[String]> = []
        var lockedOutboxes: Set<String> = []
        /// Events of groups fenced writes completed, appended after every other write.
        var groupEvents: [StoreWrite] = []
        /// Sessions with downloads saved as queued (added, resumed): other daemons may claim them.
        var queuedSessions: Set<String> = []
        /// Downloads whose lease a fenced write released: a slot of their session is free.
        var released: [Int64] = []
        /// Downloads whose fenced writes this transaction refused (their lease is stale).
        var refused: Set<DownloadID> = []

        init(connection: PostgresConnection) {
            self.connection = connection
        }

        mutating func apply(_ writes: [StoreWrite]) async throws {
            for write in writes {
                switch write {
                case .save(let downloads):
                    for download in downloads {
                        if download.state == .queued { queuedSessions.insert(download.session) }
                        try await ensureSession(download.session)
                        if let group = download.group { try await ensureGroup(group, of: download.session) }
                        try await connection.run(try PostgresRows.upsert(download, encoder: rows))
                        if let segments = download.segments { try await replaceSegments(segments, of: download.id) }
                    }
                case .saveProgress(let downloads):
                    for download in downloads {
                        try await connection.run(try PostgresRows.progressUpdate(download, encoder: rows))
                        if let segments = download.segments { try await replaceSegments(segments, of: download.id) }
                    }
                case .recordPlacements(let placements):
                    for placement in placements {
                        if let completion = placement.completion {
                            try await connection.run(try PostgresRows.progressUpdate(completion, encoder: rows))
                        } else {
                            let id = Int64(bitPattern: placement.id.rawValue)
                            try await connection.run("UPDATE haul.download SET placement = \(placement.intent.jsonText) WHERE id = \(id)")
                        }
                    }
                case .moveToGroups(let session, let moves):
                    for move in moves {
                        if let group = move.group {
                            try await ensureSession(session)
                            try await ensureGroup(group, of: session)
                        }
                        let id = Int64(bitPattern: move.id.rawValue)
                        try await connection.run("UPDATE haul.download SET groupName = \(move.group) WHERE id = \(id)")
                    }
                case .delete(let ids):
                    let keys = ids.map { Int64(bitPattern: $0.rawValue) }
                    try await connection.run("DELETE FROM haul.download WHERE id = ANY(\(keys))")
                case .markInUse(let ids, let date):
                    // `ordinal`, the insertion order, is an identity: its default is the next one.
                    let keys = ids.map { Int64(bitPattern: $0.rawValue) }
                    let added = date.timeIntervalSinceReferenceDate
                    try await connection.run("""
                        UPDATE haul.download SET createdAt = \(added), ordinal = DEFAULT WHERE id = ANY(\(keys))
                        """)
                case .deleteEmptyGroups(let session, let names):
                    try await PostgresWrites.deleteEmptyGroups(names, session: session, on: connection)
                case .trimEvents(let session, let maxEvents):
                    try await PostgresWrites.trimEvents(session: session, keeping: maxEvents, on: connection)
                case .appendEvents(let session, let events):
                    // What a daemon that lost a download's lease says of it did not happen
                    // for the fleet: the new owner reports the download's own events. Its
                    // `completed`, kept here, was a second one once the new owner placed the
                    // file (the writes' fences come before the events in a batch).
                    let events = events.filter { event in event.download.map { !refused.contains($0) } ?? true }
                    guard !events.isEmpty else { continue }
                    try await lockOutbox(session)
                    let encoder = JSONEncoder()
                    for event in events {
                        let payload = String(decoding: try encoder.encode(event), as: UTF8.self)
                        let date = event.date.timeIntervalSinceReferenceDate
                        try await connection.run("""
                            INSERT INTO haul.event (session, kind, payload, createdAt)
                            VALUES (\(session), \(event.kind.rawValue), \(payload), \(date))
                            """)
                    }
                case .acknowledgeEvents(let session, let through):
                    try await connection.run("DELETE FROM haul.event WHERE session = \(session) AND sequence <= \(through)")
                case .saveSessionSettings(let session, let settings):
                    let text = String(decoding: try JSONEncoder().encode(settings), as: UTF8.self)
                    try await connection.run("""
                        INSERT INTO haul.session (id, createdAt, settings) VALUES (\(session), \(now), \(text))
                        ON CONFLICT (id) DO UPDATE SET settings = excluded.settings
                        """)
                    sessions.insert(session)
                case .all(let writes):
                    try await apply(writes)
                case .arriving(let arriving):
                    // Never submitted unended here (`takesWritesAsTheyArrive` is false).
                    try await apply(arriving.endedWrites)
                case .fenced(let fence, let writes):
                    // A stale lease skips its own writes only: the others in this transaction
                    // are other callers' (or other downloads') and still hold.
                    guard try await PostgresLeases.holds(fence, on: connection) else {
                        refused.insert(fence.lease.id)
                        continue
                    }
                    try await apply(writes)
                    if fence.releasing {
                        try await PostgresLeases.release([fence.lease], clearingControl: true, on: connection)
                        released.append(Int64(bitPattern: fence.lease.id.rawValue))
                    }
                    if let group = fence.group, try await PostgresLeases.completes(group, on: connection) {
                        fence.groupCompleted()
                        if var event = fence.groupEvent {
                            // The members by outcome, as one daemon's event lists them: read
                            // here, under the group's lock, from the store every daemon writes.
                            let outcomes = try await PostgresLeases.outcomes(of: group, on: connection)
                            event.completed = outcomes.completed
                            event.failed = outcomes.failed
                            event.canceled = outcomes.canceled
                            groupEvents.append(.appendEvents(session: group.session, [event]))
                        }
                    }
                }
            }
        }

        private mutating func ensureSession(_ session: String) async throws {
            guard sessions.insert(session).inserted else { return }
            try await connection.run("INSERT INTO haul.session (id, createdAt) VALUES (\(session), \(now)) ON CONFLICT DO NOTHING")
        }

        private mutating func ensureGroup(_ name: String, of session: String) async throws {
            guard groups.insert([session, name]).inserted else { return }
            try await connection.run("""
                INSERT INTO haul.downloadGroup (session, name, createdAt) VALUES (\(session), \(name), \(now))
                ON CONFLICT DO NOTHING
                """)
        }

        /// Holds the session's row until commit, so that two processes appending to one outbox
        /// take turns: sequence numbers are then handed out in commit order, and a reader that
        /// saw sequence N never later finds a smaller one appear. The same statement queues the
        /// `haul_events` notification (`PostgresListener`): the server delivers it at commit,
        /// never for a rolled-back transaction, and it costs no round trip of its own.
        /// `FOR NO KEY UPDATE`: appenders take turns, while the `FOR KEY SHARE` locks that
        /// foreign-key checks take on the session's row (a fenced end updates its download row
        /// twice, which makes PostgreSQL check its keys) neither wait for it nor make it wait.
        /// With `FOR UPDATE`, two daemons' transactions each holding such a share lock and each
        /// wanting the update lock deadlocked, and their writes failed.
        private mutating func lockOutbox(_ session: String) async throws {
            try await ensureSession(session)
            guard lockedOutboxes.insert(session).inserted else { return }
            try await connection.run("""
                SELECT pg_notify(\(PostgresListener.eventsChannel), id) FROM haul.session WHERE id = \(session) FOR NO KEY UPDATE
                """)
        }

        /// One `haul_queue` notification per session whose queue gained work in this
        /// transaction (delivered at commit), so idle daemons claim now rather than at their
        /// next poll: one statement, only in transactions that queued or released something.
        func notifyQueues() async throws {
            guard !queuedSessions.isEmpty || !released.isEmpty else { return }
            try await connection.run("""
                SELECT pg_notify(\(PostgresListener.queueChannel), s) FROM (
                    SELECT unnest(\(Array(queuedSessions))::text[]) AS s
                    UNION SELECT session FROM haul.download WHERE id = ANY(\(released))) q
                """)
        }

        private func replaceSegments(_ segments: [DurableSegment], of id: DownloadID) async throws {
            let key = Int64(bitPattern: id.rawValue)
            try await connection.run("DELETE FROM haul.segment WHERE downloadId = \(key)")
            guard !segments.isEmpty else { return }
            try await connection.run("""
                INSERT INTO haul.segment (downloadId, start, "end", durableOffset)
                SELECT \(key), s, e, d FROM unnest(\(segments.map(\.start)), \(segments.map(\.end)), \(segments.map(\.durableOffset))) AS t(s, e, d)
                """)
        }
    }

    /// Deletes those of `names` that no download of the session names any more.
    static func deleteEmptyGroups(_ names: [String], session: String, on connection: PostgresConnection) async throws {
        guard !names.isEmpty else { return }
        try await connection.run("""
            DELETE FROM haul.downloadGroup g WHERE g.session = \(session) AND g.name = ANY(\(names))
            AND NOT EXISTS (SELECT 1 FROM haul.download d WHERE d.session = g.session AND d.groupName = g.name)
            """)
    }

    /// Drops the session's oldest unacknowledged events beyond `maxEvents`.
    static func trimEvents(session: String, keeping maxEvents: Int, on connection: PostgresConnection) async throws {
        let offset = Int64(max(0, maxEvents))
        guard let newestDropped = try await connection.one("""
            SELECT sequence FROM haul.event WHERE session = \(session) ORDER BY sequence DESC LIMIT 1 OFFSET \(offset)
            """, as: Int64.self) else { return }
        try await connection.run("DELETE FROM haul.event WHERE session = \(session) AND sequence <= \(newestDropped)")
    }
}
