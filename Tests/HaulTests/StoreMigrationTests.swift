import Dispatch
import Foundation
import GRDB
import HaulTestSupport
import NIOConcurrencyHelpers
@testable import Haul
import Testing

@Suite("Store migrations")
struct StoreMigrationTests {
    /// Writes `downloads` into a store of schema version 2 in `directory`, and closes it.
    /// Returns whether every row's rowid is its download ID, as version 2 has it.
    @discardableResult
    static func writeVersionTwoStore(in directory: URL, _ downloads: [StoredDownload]) async throws -> Bool {
        let old = try DatabaseQueue(path: directory.appendingPathComponent(DownloadStore.fileName).path)
        try StoreSchema.migrator.migrate(old, upTo: "v2-transferOptions")
        // Today's statements name columns added since (mirrors, version 5): present while the
        // rows are written, then gone, as in a store that version 2 wrote.
        try await old.write { db in
            try db.execute(sql: "ALTER TABLE download ADD COLUMN mirrors TEXT")
            try StoreWrite.apply([.save(downloads)], in: db)
            try db.execute(sql: "ALTER TABLE download DROP COLUMN mirrors")
        }
        return try await old.read { db in
            try Bool.fetchOne(db, sql: "SELECT COUNT(*) = ? FROM download WHERE rowid = id", arguments: [downloads.count]) ?? false
        }
    }

    /// A store written before version 3 (the ID as rowid) opens with every download, field and
    /// segment as it was, in queue order; afterwards the ID is a unique column beside an
    /// increasing rowid, and removing a download still removes its segments.
    @Test func versionTwoStoreComesForwardIntact() async throws {
        let temporary = try TemporaryDirectory()
        defer { temporary.remove() }
        let directory = temporary.url

        // Added in an order that differs from both their IDs' and their positions' order.
        var segmented = try StoreTests.full()
        segmented.position = 2
        segmented.segments = [
            DurableSegment(start: 0, end: 1000, durableOffset: 600),
            DurableSegment(start: 1000, end: 4000, durableOffset: 1000),
        ]
        let downloads = [StoreTests.minimal(3, position: 3), segmented, StoreTests.minimal(1, position: 1)]
        let keyedByID = try await Self.writeVersionTwoStore(in: directory, downloads)
        #expect(keyedByID, "version 2 keeps the ID as the rowid")

        let store = try DownloadStore.open(directory: directory)
        for download in downloads {
            #expect(try await store.load(download.id) == download)
            #expect(try await store.load(download.id)?.kept.mirrors == [], "rows from before version 5 have no mirrors")
        }
        #expect(try await store.load(segmented.id)?.segments?.count == 2)

        let shape = try await store.writer.read { db in
            let keyColumns = try Row.fetchAll(db, sql: "PRAGMA table_info(download)").filter { ($0["pk"] as Int) > 0 }
            let uniqueID = try db.indexes(on: "download").contains { $0.isUnique && $0.columns == ["id"] }
            let rowids = try Int64.fetchAll(db, sql: "SELECT rowid FROM download ORDER BY position")
            let violations = try Row.fetchAll(db, sql: "PRAGMA foreign_key_check")
            return (keyColumns.count, uniqueID, rowids, violations.count)
        }
        #expect(shape.0 == 0, "no declared primary key: the rowid is implicit")
        #expect(shape.1, "a unique index on id")
        #expect(shape.2 == shape.2.sorted(), "rows copied in queue order")
        #expect(shape.3 == 0)

        // New rows go after the copied ones, and the cascade to segments still holds.
        try await store.save([StoreTests.minimal(4, position: 4)])
        let last = try await store.writer.read { db in try Int64.fetchOne(db, sql: "SELECT id FROM download ORDER BY rowid DESC LIMIT 1") }
        #expect(last == Int64(bitPattern: StoreTests.minimal(4).id.rawValue))
        try await store.delete([segmented.id])
        let segmentsLeft = try await store.writer.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM segment") }
        #expect(segmentsLeft == 0)
    }

    /// Processes that open a version-2 store at the same moment (a daemon and a client, just
    /// after an upgrade) all get the migrated store: the ones that lose the race to migrate
    /// find the work done instead of failing.
    @Test func storesOpenedTogetherAllMigrate() async throws {
        let temporary = try TemporaryDirectory()
        defer { temporary.remove() }
        let directory = temporary.url
        // Enough rows that copying them keeps the write lock long enough for the others to
        // have read which migrations were applied before it was released.
        let count = 20_000
        try await Self.writeVersionTwoStore(in: directory, (1...count).map { StoreTests.minimal($0) })

        let openers = 4
        let outcomes = NIOLockedValueBox<[String]>([])
        DispatchQueue.concurrentPerform(iterations: openers) { _ in
            do {
                // Each opener is its own process as far as SQLite can tell: its own connections.
                let store = try DownloadStore.open(directory: directory)
                let rows = try store.writer.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM download") ?? 0 }
                outcomes.withLockedValue { $0.append(rows == count ? "ok" : "\(rows) rows") }
            } catch {
                outcomes.withLockedValue { $0.append("\(error)") }
            }
        }
        #expect(outcomes.withLockedValue { $0 } == Array(repeating: "ok", count: openers))
    }

    /// A store that a later Haul migrated further than this one knows is refused with a clear
    /// error, not read with a schema this Haul does not understand.
    @Test func storeOfANewerHaulIsRefused() throws {
        let temporary = try TemporaryDirectory()
        defer { temporary.remove() }
        let directory = temporary.url
        do {
            let store = try DownloadStore.open(directory: directory)
            try store.writer.write { db in try db.execute(sql: "INSERT INTO grdb_migrations (identifier) VALUES ('v99-from-the-future')") }
        }
        let error = #expect(throws: HaulError.self) { try DownloadStore.open(directory: directory) }
        #expect(error?.code == .fileSystem)
        #expect(error?.message.contains("newer version of Haul") == true)
    }
}
