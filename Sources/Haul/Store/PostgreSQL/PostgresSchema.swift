import Foundation
import PostgresNIO

/// The PostgreSQL store's tables, in a schema of their own (`haul`), created and evolved by
/// numbered migrations recorded in `haul.schema_version`.
///
/// Each migration never changes once released. Several daemons may start together on one
/// database: the migrations run in one transaction under an advisory lock, so one applies them
/// and the others find them applied. A database migrated by a later Haul (a version this one
/// does not know) is refused rather than misread.
///
/// The tables mirror the SQLite store's (`StoreSchema`), so that rows mean the same in both:
/// dates are double precision seconds since 2001-01-01 UTC (a `Date` comes back bit for bit),
/// nested values are JSON text in the store's own shapes (`JSONColumns`), download IDs are the
/// 64-bit value as bigint. Column names are the SQLite store's, unquoted (PostgreSQL folds them
/// to lower case). `ordinal` (an identity column) records insertion order, which SQLite's
/// rowid gives there.
enum PostgresSchema {
    /// The key of the advisory lock that serialises migrations across processes.
    static let migrationLock: Int64 = 0x4861_756C_5354_4F52  // "HaulSTOR"

    /// Statements of each version, in order; version N is `versions[N - 1]`.
    static let versions: [[String]] = [version1, leaseVersion, daemonVersion, finishedViewVersion, controlVersion]

    private static let version1 = [
        """
        CREATE TABLE haul.session (
            id text PRIMARY KEY,
            createdAt double precision NOT NULL,
            settings text
        )
        """,
        """
        CREATE TABLE haul.downloadGroup (
            session text NOT NULL REFERENCES haul.session ON DELETE CASCADE,
            name text NOT NULL,
            createdAt double precision NOT NULL,
            ordinal bigint GENERATED ALWAYS AS IDENTITY,
            PRIMARY KEY (session, name)
        )
        """,
        """
        CREATE TABLE haul.download (
            id bigint PRIMARY KEY,
            ordinal bigint GENERATED ALWAYS AS IDENTITY,
            session text NOT NULL REFERENCES haul.session ON DELETE CASCADE,
            groupName text,
            position bigint NOT NULL,
            priority bigint NOT NULL,
            state text NOT NULL,
            url text NOT NULL,
            directory text NOT NULL,
            fileName text,
            headers text NOT NULL,
            checksums text NOT NULL,
            metadata text NOT NULL,
            conflictPolicy text NOT NULL,
            partKey text NOT NULL,
            finalURL text,
            validator text,
            expectedLength bigint,
            durableOffset bigint NOT NULL,
            placement text,
            filePath text,
            fileSize bigint,
            fileModified double precision,
            skipped boolean NOT NULL,
            verifiedChecksums text NOT NULL,
            error text,
            attempts bigint NOT NULL,
            createdAt double precision NOT NULL,
            updatedAt double precision NOT NULL,
            transferOptions text,
            mirrors text,
            FOREIGN KEY (session, groupName) REFERENCES haul.downloadGroup (session, name) ON DELETE CASCADE
        )
        """,
        // The scheduler's question, a re-run's lookup, a group's members, retention by age and
        // by insertion order: as the SQLite store's indexes.
        "CREATE INDEX download_session_state_priority_position ON haul.download (session, state, priority, position)",
        "CREATE INDEX download_session_directory_url ON haul.download (session, directory, url)",
        "CREATE INDEX download_session_group ON haul.download (session, groupName)",
        "CREATE INDEX download_session_ordinal ON haul.download (session, ordinal)",
        "CREATE INDEX download_session_created ON haul.download (session, createdAt)",
        """
        CREATE TABLE haul.segment (
            downloadId bigint NOT NULL REFERENCES haul.download (id) ON DELETE CASCADE,
            start bigint NOT NULL,
            "end" bigint NOT NULL,
            durableOffset bigint NOT NULL,
            PRIMARY KEY (downloadId, start)
        )
        """,
        // The outbox: an identity never hands out a number twice, so a sequence is never reused.
        """
        CREATE TABLE haul.event (
            sequence bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            session text NOT NULL REFERENCES haul.session ON DELETE CASCADE,
            kind text NOT NULL,
            payload text NOT NULL,
            createdAt double precision NOT NULL
        )
        """,
        "CREATE INDEX event_session_sequence ON haul.event (session, sequence)",
    ]

    /// Brings the database's `haul` schema up to date on `connection`, in one transaction.
    static func migrate(on connection: PostgresConnection) async throws {
        let logger = PostgresStore.logger
        try await connection.withTransaction(logger: logger) { connection in
            try await connection.run("SELECT pg_advisory_xact_lock(\(migrationLock))")
            try await connection.run("CREATE SCHEMA IF NOT EXISTS haul")
            try await connection.run("""
                CREATE TABLE IF NOT EXISTS haul.schema_version (
                    version integer PRIMARY KEY, appliedAt double precision NOT NULL)
                """)
            var current = 0
            for try await version in try await connection.query(
                "SELECT COALESCE(MAX(version), 0) FROM haul.schema_version", logger: logger
            ).decode(Int.self) {
                current = version
            }
            guard current <= versions.count else {
                throw HaulError(.fileSystem, "the database was migrated by a newer version of Haul (schema version \(current), this one knows \(versions.count)); refusing to use it")
            }
            for version in stride(from: current + 1, through: versions.count, by: 1) {
                for statement in versions[version - 1] {
                    try await connection.run(PostgresQuery(unsafeSQL: statement))
                }
                let now = Date().timeIntervalSinceReferenceDate
                try await connection.run("INSERT INTO haul.schema_version (version, appliedAt) VALUES (\(version), \(now))")
            }
        }
    }
}

extension PostgresConnection {
    /// Runs a statement and reads its whole answer, so that an error the server reports after
    /// the statement was accepted is thrown here, not lost with an unread result.
    func run(_ query: PostgresQuery) async throws {
        for try await _ in try await self.query(query, logger: PostgresStore.logger) {}
    }
}
