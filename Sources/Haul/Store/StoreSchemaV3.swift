import GRDB

/// Version 3: downloads are stored in the order they were added, not in the order of their IDs.
///
/// Why: in versions 1 and 2 the download ID was the table's rowid. IDs are random (so that two
/// processes sharing a store never pick the same one), so a batch of new downloads was written
/// at random places all over the table: adding 5,000 downloads to a store of 100,000 rewrote
/// most of its pages, and each batch cost more than the one before (from 62 ms to 182 ms for
/// the twentieth of twenty batches). Now an implicit rowid grows with each insert, a batch
/// lands at the end of the table, and only the small unique index on `id` takes random
/// inserts. Downloads added together (which also run together) share pages, so their state
/// changes touch fewer of them.
///
/// SQLite cannot change a table's key in place. The table is rebuilt by its documented
/// recipe: create the new table, copy the rows, drop the old one, rename the new one. GRDB
/// runs the migration with foreign keys off and checks them all before committing.
/// `segment` needs no change: its foreign key names `download("id")`, which the unique
/// index now serves.
///
/// Like every migration, this one never changes once released: it is a snapshot of the
/// tables as they were when it was written.
enum StoreSchemaV3 {
    static func keyDownloadsByInsertionOrder(_ db: Database) throws {
        try db.create(table: "download_v3") { t in
            t.column("id", .integer).notNull().unique()
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
            t.column("transferOptions", .jsonText)
        }
        let columns = try db.columns(in: "download_v3").map(\.name).joined(separator: ", ")
        // Queue order, so that the existing downloads keep their order on disk as well.
        try db.execute(sql: "INSERT INTO download_v3 (\(columns)) SELECT \(columns) FROM download ORDER BY position, id")
        try db.drop(table: "download")
        try db.rename(table: "download_v3", to: "download")
        // Dropped with the old table: the scheduler's question, as in version 1.
        try db.create(index: "download_session_state_priority_position", on: "download",
                      columns: ["session", "state", "priority", "position"])
    }
}
