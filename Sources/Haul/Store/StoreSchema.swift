import GRDB

/// The store's tables, created and evolved by versioned migrations.
///
/// Each version is a migration that never changes once released: a database written by any
/// earlier Haul is brought forward step by step, and one written by a later Haul (with
/// migrations this one does not know) is refused rather than misread.
///
/// Conventions, so that every table reads the same way:
/// - dates are REAL seconds since 2001-01-01 UTC (Foundation's reference date), so a `Date`
///   comes back bit for bit (`datetime(createdAt + 978307200, 'unixepoch')` shows one in sqlite3);
/// - what is queried (session, group, state, priority, position, url, directory) has a real
///   column; nested values (headers, checksums, …) are JSON text;
/// - children reference their parent with ON DELETE CASCADE: removing a session removes its
///   groups, downloads and events; removing a download removes its segments.
enum StoreSchema {
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1", migrate: createVersion1)
        migrator.registerMigration("v2-session-settings") { db in
            // What a daemon must remember of a session to continue it alone after a restart
            // (its limits and group order), as JSON.
            try db.alter(table: "session") { t in t.add(column: "settings", .jsonText) }
        }
        migrator.registerMigration("v2-transferOptions", migrate: addTransferOptions)
        migrator.registerMigration("v3-downloads-in-insertion-order", migrate: StoreSchemaV3.keyDownloadsByInsertionOrder)
        migrator.registerMigration("v4-retention-indexes", migrate: addRetentionIndexes)
        migrator.registerMigration("v5-mirrors", migrate: addMirrors)
        return migrator
    }

    /// A download's own transfer options (`split`, `maxBytesPerSecond`) as JSON; NULL when it
    /// has none, as every row written before this column had.
    private static func addTransferOptions(_ db: Database) throws {
        try db.alter(table: "download") { t in
            t.add(column: "transferOptions", .jsonText)
        }
    }

    /// A download's mirror URLs (`DownloadRequest.mirrors`) as a JSON array of strings; NULL
    /// when it has none, as every row written before this column had.
    private static func addMirrors(_ db: Database) throws {
        try db.alter(table: "download") { t in
            t.add(column: "mirrors", .jsonText)
        }
    }

    /// What retention needs to stay cheap however much the store holds: a group's downloads
    /// (a group is deleted only when none is left, and SQLite checks the foreign key on
    /// delete), and a session's downloads by directory and URL (a request made again finds its
    /// earlier download in the store without loading the session). Directory first: a batch
    /// nearly always shares one, so its new entries land together at one place of the index
    /// (keyed by URL first, a batch fetched again into a new directory touched a page per URL
    /// of the whole history: 20 earlier runs of 5,000 files made each run 2.5 times slower).
    private static func addRetentionIndexes(_ db: Database) throws {
        try db.create(index: "download_session_group", on: "download", columns: ["session", "groupName"])
        try db.create(index: "download_session_directory_url", on: "download", columns: ["session", "directory", "url"])
    }

    private static func createVersion1(_ db: Database) throws {
        // A client's session (`BackgroundSession` identifier, or "default").
        try db.create(table: "session") { t in
            t.primaryKey("id", .text)
            t.column("createdAt", .double).notNull()
        }

        // Named groups of a session; rowid order is creation order.
        try db.create(table: "downloadGroup") { t in
            t.column("session", .text).notNull().references("session", onDelete: .cascade)
            t.column("name", .text).notNull()
            t.column("createdAt", .double).notNull()
            t.primaryKey(["session", "name"])
        }

        try db.create(table: "download") { t in
            // DownloadID.rawValue bit-cast to Int64: the rowid itself, so lookups by ID are free.
            t.primaryKey("id", .integer)
            t.column("session", .text).notNull().references("session", onDelete: .cascade)
            t.column("groupName", .text)
            t.foreignKey(["session", "groupName"], references: "downloadGroup", columns: ["session", "name"],
                         onDelete: .cascade)
            t.column("position", .integer).notNull()
            t.column("priority", .integer).notNull()
            t.column("state", .text).notNull()
            t.column("url", .text).notNull()
            t.column("directory", .text).notNull()
            t.column("fileName", .text)
            t.column("headers", .jsonText).notNull()
            t.column("checksums", .jsonText).notNull()
            t.column("metadata", .jsonText).notNull()
            t.column("conflictPolicy", .text).notNull()
            t.column("partKey", .text).notNull()
            t.column("finalURL", .text)
            t.column("validator", .jsonText)
            t.column("expectedLength", .integer)
            t.column("durableOffset", .integer).notNull()
            t.column("placement", .jsonText)
            t.column("filePath", .text)
            t.column("fileSize", .integer)
            t.column("fileModified", .double)
            t.column("skipped", .boolean).notNull()
            t.column("verifiedChecksums", .jsonText).notNull()
            t.column("error", .jsonText)
            t.column("attempts", .integer).notNull()
            t.column("createdAt", .double).notNull()
            t.column("updatedAt", .double).notNull()
        }
        // The scheduler's question: a session's queued downloads, by priority, then position.
        try db.create(index: "download_session_state_priority_position", on: "download",
                      columns: ["session", "state", "priority", "position"])
        // No index on (session, groupName): with few groups and random IDs it is updated at
        // random places and made saving 100,000 rows 60% slower; removing a group (rare) may
        // scan the table instead.

        // Byte ranges of a segmented download, each with its own durable offset.
        try db.create(table: "segment") { t in
            t.column("downloadId", .integer).notNull().references("download", onDelete: .cascade)
            t.column("start", .integer).notNull()
            t.column("end", .integer).notNull()
            t.column("durableOffset", .integer).notNull()
            t.primaryKey(["downloadId", "start"])
        }

        // The event outbox: kept until the session's client acknowledges it, replayed in
        // `sequence` order (AUTOINCREMENT, so a sequence number is never reused).
        try db.create(table: "event") { t in
            t.autoIncrementedPrimaryKey("sequence")
            t.column("session", .text).notNull().references("session", onDelete: .cascade)
            t.column("kind", .text).notNull()
            t.column("payload", .jsonText).notNull()
            t.column("createdAt", .double).notNull()
        }
        try db.create(index: "event_session_sequence", on: "event", columns: ["session", "sequence"])
    }
}
