import Foundation
import GRDB
import NIOConcurrencyHelpers

/// The SQLite store: one database file per Haul state directory.
///
/// The seeds' lesson is that resume state must be plain rows, not opaque blobs, and that a
/// daemon killed with -9 or a reboot must lose nothing that was acknowledged. SQLite in WAL mode
/// gives atomic multi-row commits, readers that never block the writer, and a busy timeout so
/// that the daemon and its clients can share one file.
///
/// Writes go through a `GroupCommitter`, so that a burst of saves from many transfers becomes a
/// few transactions; reads use the pool's reader connections and run alongside writes.
final class DownloadStore: DownloadStoring {
    /// How long a write waits for another process's transaction before failing (SQLITE_BUSY).
    /// Generous, since a client may be saving a batch of 100,000 downloads.
    static let busyTimeout: TimeInterval = 30

    /// How often a process that lost a race to migrate tries again (one try per migration the
    /// winner may still be applying is more than enough).
    static let migrationAttempts = 8

    /// The writer connection's page cache, in KiB.
    static let writerCacheKiB = 64 * 1024

    /// The connections: a `DatabasePool` on disk, a `DatabaseQueue` in memory.
    let writer: any DatabaseWriter
    /// The database file, nil when in memory.
    let path: String?
    let committer: GroupCommitter

    private init(writer: any DatabaseWriter, path: String?) {
        self.writer = writer
        self.path = path
        self.committer = GroupCommitter(
            writer: writer,
            apply: { db, writes in try StoreWrite.apply(writes, in: db) },
            failure: { StoreFailure.error($0, "save downloads", path: path) })
    }

    /// Opens (creating directory 0700 and file) `directory/haul.sqlite` with a DatabasePool in WAL
    /// mode, synchronous=NORMAL (durable across process crashes; a power loss may lose the last
    /// commits but never corrupts), a busy timeout so several processes can share it, and runs the
    /// migrations. `directory == nil` opens an in-memory store (DatabaseQueue) with the same
    /// schema, for managers that need no persistence.
    static func open(directory: URL?) throws(HaulError) -> DownloadStore {
        guard let directory else {
            do {
                let queue = try DatabaseQueue(configuration: configuration())
                try migrate(queue)
                return DownloadStore(writer: queue, path: nil)
            } catch {
                throw StoreFailure.error(error, "open the download store", path: nil)
            }
        }
        try createDirectory(directory)
        let path = directory.appendingPathComponent(fileName).path
        do {
            // A pool opens in WAL mode (GRDB's `setUpWALMode`); the tests check it.
            let pool = try DatabasePool(path: path, configuration: configuration())
            try migrate(pool)
            try keepStatementJournalsInMemory(pool)
            return DownloadStore(writer: pool, path: path)
        } catch {
            throw StoreFailure.error(error, "open the download store", path: path)
        }
    }

    private static func configuration() -> Configuration {
        var configuration = Configuration()
        configuration.label = "haul.store"
        configuration.foreignKeysEnabled = true
        configuration.busyMode = .timeout(busyTimeout)
        configuration.prepareDatabase { db in
            // GRDB already sets this on a pool's writer connection; every connection says it
            // here so that the promise does not depend on which connection writes.
            try db.execute(sql: "PRAGMA synchronous = NORMAL")
            if !db.configuration.readonly {
                // The writer's page cache (SQLite's default is 2 MiB): a batch of 100,000 rows
                // touches tens of MiB of pages, and a small cache spills them to the WAL and
                // reads them back mid-transaction (a third of the time). Pages are allocated
                // only as used; readers keep the default.
                try db.execute(sql: "PRAGMA cache_size = -\(writerCacheKiB)")
            }
        }
        return configuration
    }

    /// A statement that changes many rows inside a transaction keeps a statement journal (to
    /// undo that statement alone); SQLite spills it to a file in /var/tmp past 64 KiB, on
    /// whatever disk that is. A re-run that replaced 5,000 earlier downloads made 36,000 writes
    /// there. Kept in memory, it costs what the changed pages weigh. Set on the writer (the one
    /// connection that writes) after the migrations, whose index builds may sort more than
    /// memory should hold; `compact`'s VACUUM, which copies the whole store into a temporary
    /// database, puts it back on disk for its duration.
    private static func keepStatementJournalsInMemory(_ writer: any DatabaseWriter) throws {
        try writer.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA temp_store = MEMORY") }
    }

    /// Brings the schema up to date. Several processes may do this at once (a daemon and a
    /// client started together after an upgrade). GRDB reads which migrations were applied
    /// before it takes the write lock, so a process that lost the race runs a migration again
    /// once the winner committed, and fails when it records it; its transaction rolls back
    /// and nothing is lost. What matters is whether the store is now complete: then it is used.
    /// The winner may still be applying a later migration (each commits on its own), so the
    /// loser tries again: it then finds more applied, and waits for the winner's lock.
    private static func migrate(_ writer: any DatabaseWriter) throws {
        let migrator = StoreSchema.migrator
        for attempt in 1...migrationAttempts {
            do {
                try migrator.migrate(writer)
                break
            } catch {
                if try writer.read({ try migrator.hasCompletedMigrations($0) }) { break }
                if attempt == migrationAttempts { throw error }
            }
        }
        if try writer.read({ try migrator.hasBeenSuperseded($0) }) {
            throw HaulError(.fileSystem, "\(writer.path) was written by a newer version of Haul; refusing to use it")
        }
    }

    // MARK: Writes

    /// Applies `write` in ONE transaction. Concurrent callers are coalesced ("group commit",
    /// see `GroupCommitter`): while a transaction is being written, further writes queue up and
    /// are written together in the next one, in arrival order (a delete after a save of the
    /// same ID wins); each caller returns once its rows are committed.
    func submit(_ write: StoreWrite) async throws(HaulError) {
        try await committer.submit(write)
    }

    /// Writes are applied on GRDB's writer queue, a thread that may wait for arriving ones.
    var takesWritesAsTheyArrive: Bool { true }

    var stateDirectory: URL? { path.map { URL(fileURLWithPath: $0).deletingLastPathComponent() } }

    var isPersistent: Bool { path != nil }

    /// After a bulk write (thousands of rows), the writer's page cache holds pages a backlog of
    /// queued downloads does not need in memory: SQLite lets them go, then the process returns
    /// them to the system. Failure changes nothing but memory use.
    func releaseMemory() async {
        try? await writer.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA shrink_memory") }
        SystemCalls.releaseFreedMemory()
    }

    // MARK: Reads

    /// Every download of a session, ordered by position; without `includingFinished`, only
    /// the queued, running and paused ones (an index range, whatever the session's history).
    func loadAll(session: String, includingFinished: Bool = true) async throws(HaulError) -> [StoredDownload] {
        try await read("load the downloads of session '\(session)'") { db in
            let filter = includingFinished ? "" : " AND state IN ('queued', 'running', 'paused')"
            let statement = try db.cachedStatement(
                sql: DownloadColumn.selectSQL + " WHERE session = ?\(filter) ORDER BY position, id")
            return try Self.downloads(from: statement, arguments: [session], session: session, in: db)
        }
    }

    /// The session's finished downloads of these URLs into these directories (each as the
    /// store writes it: `KeptRequest.urlText`, `StoredURL.directoryText`).
    ///
    /// One range of the (session, directory, URL) index per directory, read in order: a batch
    /// nearly always shares one directory, and its earlier downloads lie together there. Only
    /// the index is read for rows of other URLs (their URL and rowid are in it); the rows of
    /// the batch's URLs are then read by rowid. A directory the session never used costs one
    /// probe of the index.
    func finished(session: String, matching places: Set<DownloadPlace>) async throws(HaulError) -> [StoredDownload] {
        let urlsByDirectory = Dictionary(grouping: places, by: \.directory).mapValues { Set($0.map(\.url)) }
        return try await read("look up earlier downloads of session '\(session)'") { db in
            let range = try db.cachedStatement(sql: """
                SELECT rowid, url FROM download INDEXED BY download_session_directory_url
                WHERE session = ? AND directory = ? ORDER BY url
                """)
            // The matching rows are read by rowid, a chunk of them per statement: one statement
            // each cost a statement run and a copied row per file of a batch run again.
            let chunk = 256
            func byRowIDs(_ count: Int) throws -> Statement {
                let sql = DownloadColumn.selectSQL + """
                     WHERE rowid IN (\(Array(repeating: "?", count: count).joined(separator: ","))) AND state IN \(Self.finishedStatesSQL)
                    """
                // Only the full chunk's statement is kept: the cache holds one, not one per size.
                return count == chunk ? try db.cachedStatement(sql: sql) : try db.makeStatement(sql: sql)
            }
            var found: [StoredDownload] = []
            let decoder = DownloadRowDecoder()
            for (directory, urls) in urlsByDirectory {
                var matching: [Int64] = []
                let cursor = try Row.fetchCursor(range, arguments: [session, directory])
                while let row = try cursor.next() {
                    let url: String = row[1]
                    if urls.contains(url) { matching.append(row[0]) }
                }
                var start = 0
                while start < matching.count {
                    let rowIDs = matching[start..<min(start + chunk, matching.count)]
                    start += rowIDs.count
                    let rows = try Row.fetchCursor(try byRowIDs(rowIDs.count), arguments: StatementArguments(Array(rowIDs)))
                    while let row = try rows.next() {
                        var download = try decoder.download(from: row)
                        // A completed download is never continued; a failed one may be.
                        if download.state != .completed { download.segments = try SegmentRows.of(download.id, in: db) }
                        found.append(download)
                    }
                }
            }
            return found.sorted { $0.position < $1.position }
        }
    }

    /// Whether the session has any finished download in the store.
    func hasFinished(session: String) async throws(HaulError) -> Bool {
        try await read("count the finished downloads of session '\(session)'") { db in
            try Bool.fetchOne(db, sql: """
                SELECT EXISTS (SELECT 1 FROM download WHERE session = ? AND state IN \(Self.finishedStatesSQL))
                """, arguments: [session]) ?? false
        }
    }

    /// Decodes the rows `statement` selects, with their segments (all of the session's at once
    /// when `session` is given, else one download's at a time).
    private static func downloads(
        from statement: Statement, arguments: StatementArguments, session: String?, in db: Database
    ) throws -> [StoredDownload] {
        let decoder = DownloadRowDecoder()
        var downloads: [StoredDownload] = []
        let rows = try Row.fetchCursor(statement, arguments: arguments)
        while let row = try rows.next() {
            downloads.append(try decoder.download(from: row))
        }
        if let session {
            let segments = try SegmentRows.all(session: session, in: db)
            if !segments.isEmpty {
                for index in downloads.indices {
                    downloads[index].segments = segments[downloads[index].id]
                }
            }
        } else {
            for index in downloads.indices {
                let segments = try SegmentRows.of(downloads[index].id, in: db)
                downloads[index].segments = segments
            }
        }
        return downloads
    }

    func load(_ id: DownloadID) async throws(HaulError) -> StoredDownload? {
        try await read("load download \(id)") { db in
            let statement = try db.cachedStatement(sql: DownloadColumn.selectSQL + " WHERE id = ?")
            guard let row = try Row.fetchOne(statement, arguments: [Int64(bitPattern: id.rawValue)]) else { return nil }
            var download = try DownloadRowDecoder().download(from: row)
            download.segments = try SegmentRows.of(id, in: db)
            return download
        }
    }

    /// The highest position used so far (0 when empty), so new downloads continue the order.
    func maxPosition() async throws(HaulError) -> Int64 {
        try await read("read the highest download position") { db in
            try Int64.fetchOne(db, sql: "SELECT COALESCE(MAX(position), 0) FROM download") ?? 0
        }
    }

    /// The newest row's rowid or position, whichever is higher: a row added after it gets a
    /// higher rowid, and positions chosen above this floor rise with insertion from now on,
    /// whatever an older version (which restarted them at each run) left. Two edge lookups of
    /// the table's b-tree; `maxPosition` would read every row.
    func positionFloor() async throws(HaulError) -> Int64 {
        try await read("read the newest download's position") { db in
            guard let row = try Row.fetchOne(db, sql: "SELECT rowid, position FROM download ORDER BY rowid DESC LIMIT 1")
            else { return 0 }
            return max(row[0] as Int64, row[1] as Int64)
        }
    }

    /// Group names of a session, in creation order.
    func groups(session: String) async throws(HaulError) -> [String] {
        try await read("list the groups of session '\(session)'") { db in
            try String.fetchAll(db, sql: "SELECT name FROM downloadGroup WHERE session = ? ORDER BY rowid",
                                arguments: [session])
        }
    }

    /// Runs `body` on a reader connection, mapping failures to `HaulError`.
    func read<Value: Sendable>(
        _ action: String, _ body: @Sendable (Database) throws -> Value
    ) async throws(HaulError) -> Value {
        do {
            return try await writer.read(body)
        } catch {
            throw StoreFailure.error(error, action, path: path)
        }
    }
}

/// A URL and the directory it is downloaded into, as the store writes both.
struct DownloadPlace: Hashable, Sendable {
    var url: String
    var directory: String

    init(_ request: KeptRequest) {
        url = request.urlText
        directory = StoredURL.directoryText(request.directory)
    }

    /// A URL as `KeptRequest.urlText` gives it, in a directory as `StoredURL.directoryText` does.
    init(url: String, directory: String) {
        self.url = url
        self.directory = directory
    }
}

extension DownloadStore {
    private static let openStores = NIOLockedValueBox<[String: WeakStore]>([:])

    /// Read and written only under `openStores`' lock.
    private struct WeakStore: @unchecked Sendable {
        weak var store: DownloadStore?
    }

    /// One store per state directory in a process: managers of several sessions (a daemon's)
    /// share its connections and its group commits instead of contending as separate writers.
    static func shared(directory: URL) throws(HaulError) -> DownloadStore {
        let key = directory.standardizedFileURL.path
        if let open = openStores.withLockedValue({ $0[key]?.store }) { return open }
        let store = try open(directory: directory)
        return openStores.withLockedValue { stores in
            if let raced = stores[key]?.store { return raced }
            stores[key] = WeakStore(store: store)
            return store
        }
    }
}
