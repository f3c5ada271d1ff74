import Foundation
import PostgresNIO

/// Reading downloads, groups, events and sessions back: the same answers as the SQLite store's.
extension PostgresStore {
    func loadAll(session: String, includingFinished: Bool) async throws(HaulError) -> [StoredDownload] {
        try await read("load the downloads of session '\(session)'") { connection in
            let filter = includingFinished ? "" : " AND state IN ('queued', 'running', 'paused')"
            var binds = PostgresBindings()
            binds.append(session)
            let decoder = PostgresRowDecoder()
            var downloads = try await connection.all(
                PostgresQuery(unsafeSQL: PostgresRows.selectSQL + " WHERE session = $1\(filter) ORDER BY position, id", binds: binds),
                decoder.download(from:))
            let segments = try await Self.segments(session: session, on: connection)
            if !segments.isEmpty {
                for index in downloads.indices { downloads[index].segments = segments[downloads[index].id] }
            }
            return downloads
        }
    }

    func finished(session: String, matching places: Set<DownloadPlace>) async throws(HaulError) -> [StoredDownload] {
        let urlsByDirectory = Dictionary(grouping: places, by: \.directory).mapValues { $0.map(\.url) }
        return try await read("look up earlier downloads of session '\(session)'") { connection in
            var found: [StoredDownload] = []
            let decoder = PostgresRowDecoder()
            for (directory, urls) in urlsByDirectory {
                var binds = PostgresBindings()
                binds.append(session)
                binds.append(directory)
                binds.append(urls)
                let rows = try await connection.all(PostgresQuery(unsafeSQL: PostgresRows.selectSQL + """
                     WHERE session = $1 AND directory = $2 AND url = ANY($3) AND state IN \(PostgresRows.finishedStates)
                    """, binds: binds), decoder.download(from:))
                for var download in rows {
                    // A completed download is never continued; a failed one may be.
                    if download.state != .completed { download.segments = try await Self.segments(of: download.id, on: connection) }
                    found.append(download)
                }
            }
            return found.sorted { $0.position < $1.position }
        }
    }

    func hasFinished(session: String) async throws(HaulError) -> Bool {
        try await read("count the finished downloads of session '\(session)'") { connection in
            try await connection.one(PostgresQuery(unsafeSQL: """
                SELECT EXISTS (SELECT 1 FROM haul.download WHERE session = $1 AND state IN \(PostgresRows.finishedStates))
                """, binds: Self.binds(session)), as: Bool.self) ?? false
        }
    }

    func load(_ id: DownloadID) async throws(HaulError) -> StoredDownload? {
        try await read("load download \(id)") { connection in
            let key = Int64(bitPattern: id.rawValue)
            var binds = PostgresBindings()
            binds.append(key)
            let decoder = PostgresRowDecoder()
            guard var download = try await connection.all(
                PostgresQuery(unsafeSQL: PostgresRows.selectSQL + " WHERE id = $1", binds: binds), decoder.download(from:)
            ).first else { return nil }
            download.segments = try await Self.segments(of: id, on: connection)
            return download
        }
    }

    func maxPosition() async throws(HaulError) -> Int64 {
        try await read("read the highest download position") { connection in
            try await connection.one("SELECT COALESCE(MAX(position), 0)::bigint FROM haul.download", as: Int64.self) ?? 0
        }
    }

    /// None: positions in a PostgreSQL store continue from the session's unfinished downloads,
    /// as they always did. (The rising floor is a remedy for SQLite's b-trees, measured there.)
    func positionFloor() async throws(HaulError) -> Int64 { 0 }

    func groups(session: String) async throws(HaulError) -> [String] {
        try await read("list the groups of session '\(session)'") { connection in
            try await connection.all("SELECT name FROM haul.downloadGroup WHERE session = \(session) ORDER BY ordinal") { row in
                try row.decode(String.self)
            }
        }
    }

    func eventTexts(session: String, after sequence: Int64, limit: Int) async throws(HaulError) -> [StoredEventText] {
        try await read("read the events of session '\(session)'") { connection in
            try await connection.all("""
                SELECT sequence, payload FROM haul.event WHERE session = \(session) AND sequence > \(sequence)
                ORDER BY sequence LIMIT \(Int64(limit))
                """) { row in
                let (sequence, payload) = try row.decode((Int64, String).self)
                return StoredEventText(sequence: sequence, payload: payload)
            }
        }
    }

    func sessions() async throws(HaulError) -> [(id: String, settings: SessionSettings?)] {
        let rows = try await read("list the sessions") { connection in
            try await connection.all("SELECT id, settings FROM haul.session ORDER BY id") { row in
                try row.decode((String, String?).self)
            }
        }
        do {
            let decoder = JSONDecoder()
            return try rows.map { id, text in
                (id, try text.map { try decoder.decode(SessionSettings.self, from: Data($0.utf8)) })
            }
        } catch {
            throw PostgresFailure.error(error, "read the settings of the sessions", address: address)
        }
    }

    func outboxPins(session: String, through sequence: Int64) async throws(HaulError) -> OutboxPins {
        try await read("read the unacknowledged events of session '\(session)'") { connection in
            try await Self.outboxPins(session: session, through: sequence, on: connection)
        }
    }

    static func outboxPins(session: String, through sequence: Int64, on connection: PostgresConnection) async throws -> OutboxPins {
        var pins = OutboxPins()
        let rows = try await connection.all("""
            SELECT kind, payload::jsonb ->> 'download', payload::jsonb ->> 'group' FROM haul.event
            WHERE session = \(session) AND sequence <= \(sequence) AND kind IN ('completed', 'failed', 'canceled', 'groupCompleted')
            """) { row in try row.decode((String, String?, String?).self) }
        for (kind, download, group) in rows {
            if kind == "groupCompleted" {
                if let group { pins.groups.insert(group) }
            } else if let download, let id = DownloadID(download) {
                pins.downloads.insert(id)
            }
        }
        return pins
    }

    /// The segments of every download of a session that has any, each list ordered by start.
    static func segments(session: String, on connection: PostgresConnection) async throws -> [DownloadID: [DurableSegment]] {
        let rows = try await connection.all("""
            SELECT s.downloadId, s.start, s."end", s.durableOffset FROM haul.segment s
            JOIN haul.download d ON d.id = s.downloadId WHERE d.session = \(session)
            ORDER BY s.downloadId, s.start
            """) { row in try row.decode((Int64, Int64, Int64, Int64).self) }
        var result: [DownloadID: [DurableSegment]] = [:]
        for (id, start, end, durable) in rows {
            result[DownloadID(rawValue: UInt64(bitPattern: id)), default: []]
                .append(DurableSegment(start: start, end: end, durableOffset: durable))
        }
        return result
    }

    /// The segments of one download, ordered by start; nil when it has none.
    static func segments(of id: DownloadID, on connection: PostgresConnection) async throws -> [DurableSegment]? {
        let key = Int64(bitPattern: id.rawValue)
        let segments = try await connection.all("""
            SELECT start, "end", durableOffset FROM haul.segment WHERE downloadId = \(key) ORDER BY start
            """) { row in
            let (start, end, durable) = try row.decode((Int64, Int64, Int64).self)
            return DurableSegment(start: start, end: end, durableOffset: durable)
        }
        return segments.isEmpty ? nil : segments
    }

    static func binds(_ text: String) -> PostgresBindings {
        var binds = PostgresBindings()
        binds.append(text)
        return binds
    }
}
