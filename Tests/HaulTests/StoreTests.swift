import Dispatch
import Foundation
import GRDB
import HaulTestSupport
import Testing
@testable import Haul

@Suite("Store", .timeLimit(.minutes(3)))
struct StoreTests {
    // MARK: Fixtures

    static let start = Date(timeIntervalSinceReferenceDate: 780_000_000.123_456)

    /// A download with only the required fields set and every optional nil or empty.
    static func minimal(_ n: Int, session: String = "default", group: String? = nil, position: Int64? = nil) -> StoredDownload {
        StoredDownload(
            id: DownloadID(rawValue: UInt64(n) &* 0x9E37_79B9_7F4A_7C15),
            session: session,
            group: group,
            position: position ?? Int64(n),
            kept: KeptRequest(DownloadRequest(
                url: URL(string: "https://example.com/files/\(n).bin")!,
                directory: URL(fileURLWithPath: "/srv/downloads", isDirectory: true))),
            partKey: "key\(n)",
            state: .queued,
            finalURL: nil,
            validator: nil,
            expectedLength: nil,
            durableOffset: 0,
            placement: nil,
            filePath: nil,
            fileSize: nil,
            fileModified: nil,
            skipped: false,
            verifiedChecksums: [],
            error: nil,
            attempts: 0,
            createdAt: start.addingTimeInterval(Double(n)),
            updatedAt: start.addingTimeInterval(Double(n) + 0.5))
    }

    /// A download with every optional set, odd characters, and extreme numbers.
    static func full() throws -> StoredDownload {
        let sha256 = try Checksum(.sha256, hex: String(repeating: "ab", count: 32))
        let md5 = try Checksum(.md5, hex: String(repeating: "0F", count: 16))
        return StoredDownload(
            id: DownloadID(rawValue: UInt64.max - 5),
            session: "com.example.background",
            group: "nightly ✓",
            position: Int64.max - 1,
            kept: KeptRequest(DownloadRequest(
                url: URL(string: "https://user@example.com:8443/a%20b/c.iso?x=1&y=%C3%BC#frag")!,
                directory: URL(fileURLWithPath: "/tmp/haul dir/ü", isDirectory: true),
                fileName: "c d \"quoted\".iso",
                headers: [HeaderField(name: "Authorization", value: "Bearer a/b+c=="),
                          HeaderField(name: "X-Note", value: "tab\there, \"quotes\", ünïcode")],
                checksums: [sha256, md5],
                priority: -7,
                conflictPolicy: .overwrite,
                metadata: ["owner": "ci", "note": "line\nbreak", "": "empty key"])),
            partKey: "0123456789abcdef",
            state: .failed,
            finalURL: URL(string: "https://cdn.example.net/c.iso?token=abc"),
            validator: .etag("\"v1-abc\""),
            expectedLength: 9_876_543_210,
            durableOffset: 1_234_567,
            placement: PlacementIntent(directory: "/tmp/haul dir/ü", name: "c.iso", policy: .rename,
                                       device: UInt64.max, inode: 42, length: 9_876_543_210),
            filePath: "/tmp/haul dir/ü/c.iso",
            fileSize: 9_876_543_210,
            fileModified: Date(timeIntervalSince1970: 1_700_000_000.987_654_321),
            skipped: true,
            verifiedChecksums: [sha256],
            error: StoredError(code: "httpStatus", message: "server said 503 \"busy\"", httpStatus: 503),
            attempts: 4,
            createdAt: start,
            updatedAt: Date(timeIntervalSinceReferenceDate: 780_000_123.000_001))
    }

    // MARK: Fields

    /// Every field, optional or not, set or nil, comes back exactly as it was saved.
    @Test(arguments: StoreBackend.allCases) func roundTripEveryField(_ backend: StoreBackend) async throws {
        let store = try await backend.open()
        let full = try Self.full()
        var lastModified = Self.minimal(1)
        lastModified.validator = .lastModified("Wed, 21 Oct 2015 07:28:00 GMT")
        let minimal = Self.minimal(2)
        try await store.save([full, lastModified, minimal])

        #expect(try await store.load(full.id) == full)
        #expect(try await store.load(lastModified.id) == lastModified)
        #expect(try await store.load(minimal.id) == minimal)
        #expect(try await store.load(DownloadID(rawValue: 12345)) == nil)
    }

    /// A placement intent written on its own changes that column only, and in one
    /// transaction with the rows and events written beside it.
    @Test(arguments: StoreBackend.allCases) func placementIntentAloneTouchesOnlyItsColumn(_ backend: StoreBackend) async throws {
        let store = try await backend.open()
        let stored = Self.minimal(1)
        let other = Self.minimal(2)
        try await store.save([stored, other])
        let intent = PlacementIntent(
            directory: "/srv/downloads", name: "1 \"one\".bin", policy: .rename, device: 7, inode: UInt64.max, length: 16_384)
        var changedOther = other
        changedOther.state = .completed
        let before = store.transactionsCommitted
        try await store.save([changedOther], placements: [StoredPlacement(id: stored.id, intent: intent)], events: [], session: "default")
        #expect(store.transactionsCommitted == before + 1)

        var expected = stored
        expected.placement = intent
        #expect(try await store.load(stored.id) == expected)
        #expect(try await store.load(other.id) == changedOther)
    }

    /// A progress write changes what a running download changes and leaves the rest of the
    /// row (request, group, place) as it was stored.
    @Test(arguments: StoreBackend.allCases) func progressWriteLeavesTheRequestAlone(_ backend: StoreBackend) async throws {
        let store = try await backend.open()
        let stored = Self.minimal(1, group: "g")
        try await store.save([stored])
        var progressed = try Self.full()
        progressed.id = stored.id
        progressed.session = stored.session
        progressed.segments = [DurableSegment(start: 0, end: 10, durableOffset: 4)]
        try await store.save([], progressOf: [progressed], events: [], session: "default")

        var expected = progressed
        expected.group = stored.group
        expected.position = stored.position
        expected.kept = stored.kept
        expected.partKey = stored.partKey
        expected.createdAt = stored.createdAt
        #expect(try await store.load(stored.id) == expected)
    }

    /// Saving a download whose ID is already stored replaces it, keeping one row.
    @Test(arguments: StoreBackend.allCases) func replaceByID(_ backend: StoreBackend) async throws {
        let store = try await backend.open()
        var download = Self.minimal(1, group: "g")
        try await store.save([download])
        download.state = .completed
        download.group = "other"
        download.durableOffset = 99
        download.validator = .etag("\"x\"")
        download.request.metadata = ["k": "v"]
        try await store.save([download])

        #expect(try await store.loadAll(session: "default") == [download])
        #expect(try await store.groups(session: "default") == ["g", "other"])
    }

    /// Deleting removes the rows and their segments; unknown IDs are ignored; a save keeps segments.
    @Test(arguments: StoreBackend.allCases) func deleteRemovesRowsAndSegments(_ backend: StoreBackend) async throws {
        let store = try await backend.open()
        let downloads = (1...3).map { Self.minimal($0) }
        try await store.save(downloads)
        var segmented = downloads[0]
        segmented.segments = [DurableSegment(start: 0, end: 10, durableOffset: 5)]
        try await store.save([segmented])

        try await store.save([downloads[0]])
        #expect(try await store.load(downloads[0].id)?.segments == segmented.segments)

        try await store.delete([downloads[0].id, downloads[2].id, DownloadID(rawValue: 777)])
        #expect(try await store.loadAll(session: "default") == [downloads[1]])
        #expect(try await store.load(downloads[0].id) == nil)
        // Saved again without segments: none were left behind by the delete.
        try await store.save([downloads[0]])
        #expect(try await store.load(downloads[0].id)?.segments == nil)
    }

    /// Downloads load in position order whatever order they were saved in, and maxPosition follows.
    @Test(arguments: StoreBackend.allCases) func orderingByPosition(_ backend: StoreBackend) async throws {
        let store = try await backend.open()
        #expect(try await store.maxPosition() == 0)
        let positions: [Int64] = [5, 1, 9, 3, 7, 2]
        let downloads = positions.enumerated().map { Self.minimal($0.offset + 1, position: $0.element) }
        try await store.save(downloads)

        #expect(try await store.loadAll(session: "default").map(\.position) == positions.sorted())
        #expect(try await store.maxPosition() == 9)
    }

    /// A session sees only its own downloads and groups.
    @Test(arguments: StoreBackend.allCases) func sessionsAreIsolated(_ backend: StoreBackend) async throws {
        let store = try await backend.open()
        let a = [Self.minimal(1, session: "a", group: "shared"), Self.minimal(2, session: "a")]
        let b = [Self.minimal(3, session: "b", group: "shared"), Self.minimal(4, session: "b", group: "only-b")]
        try await store.save(a + b)

        #expect(try await store.loadAll(session: "a") == a)
        #expect(try await store.loadAll(session: "b") == b)
        #expect(try await store.loadAll(session: "c").isEmpty)
        #expect(try await store.groups(session: "a") == ["shared"])
        #expect(try await store.groups(session: "b") == ["shared", "only-b"])
    }

    /// Groups are listed once each, in the order they were first saved, across saves.
    @Test(arguments: StoreBackend.allCases) func groupsInCreationOrder(_ backend: StoreBackend) async throws {
        let store = try await backend.open()
        try await store.save([Self.minimal(1, group: "zeta"), Self.minimal(2, group: "alpha"), Self.minimal(3, group: "zeta")])
        try await store.save([Self.minimal(4, group: "mid"), Self.minimal(5), Self.minimal(6, group: "alpha")])

        #expect(try await store.groups(session: "default") == ["zeta", "alpha", "mid"])
    }

    // MARK: Files

    /// Data saved on disk is there after the store is closed and reopened from the same directory.
    @Test func persistsAcrossReopen() async throws {
        let temporary = try TemporaryDirectory()
        defer { temporary.remove() }
        let directory = temporary.url
        let full = try Self.full()
        do {
            let store = try DownloadStore.open(directory: directory)
            #expect(store.path == directory.appendingPathComponent("haul.sqlite").path)
            try await store.save([full, Self.minimal(1, session: full.session, group: "g")])
        }
        let reopened = try DownloadStore.open(directory: directory)
        #expect(try await reopened.loadAll(session: full.session) == [Self.minimal(1, session: full.session, group: "g"), full])
        #expect(try await reopened.groups(session: full.session) == [full.group!, "g"])
        #expect(try await reopened.maxPosition() == full.position)
    }

    /// The on-disk store runs in WAL mode with synchronous=NORMAL and foreign keys on.
    @Test func onDiskPragmas() async throws {
        let temporary = try TemporaryDirectory()
        defer { temporary.remove() }
        let directory = temporary.url
        let store = try DownloadStore.open(directory: directory)
        let pragmas = try await store.writer.read { db in
            (try String.fetchOne(db, sql: "PRAGMA journal_mode"),
             try Int.fetchOne(db, sql: "PRAGMA synchronous"),
             try Int.fetchOne(db, sql: "PRAGMA foreign_keys"))
        }
        #expect(pragmas.0 == "wal")
        #expect(pragmas.1 == 1)
        #expect(pragmas.2 == 1)
    }

    /// A store without a directory lives in memory, has no path, and works like the on-disk one.
    @Test func inMemoryStore() async throws {
        let store = try DownloadStore.open(directory: nil)
        #expect(store.path == nil)
        try await store.save([Self.minimal(1, group: "g")])
        #expect(try await store.loadAll(session: "default") == [Self.minimal(1, group: "g")])
        let other = try DownloadStore.open(directory: nil)
        #expect(try await other.loadAll(session: "default").isEmpty)
    }

    /// A missing state directory is created, with its parents, readable by the owner only.
    @Test func createsDirectoryWithMode0700() throws {
        let temporary = try TemporaryDirectory()
        defer { temporary.remove() }
        let parent = temporary.url
        let directory = parent.appendingPathComponent("state/haul", isDirectory: true)
        _ = try DownloadStore.open(directory: directory)

        let attributes = try FileManager.default.attributesOfItem(atPath: directory.path)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o700)
        #expect(FileManager.default.fileExists(atPath: directory.appendingPathComponent("haul.sqlite").path))
    }

    /// A state directory that cannot be created fails with a file-system error naming it.
    @Test func unusableDirectoryFails() throws {
        let temporary = try TemporaryDirectory()
        defer { temporary.remove() }
        let parent = temporary.url
        let file = parent.appendingPathComponent("not-a-directory")
        #expect(FileManager.default.createFile(atPath: file.path, contents: Data()))

        let error = #expect(throws: HaulError.self) { try DownloadStore.open(directory: file) }
        #expect(error?.code == .fileSystem)
        #expect(error?.message.contains(file.path) == true)
    }

    /// SQLITE_FULL reads as `.diskFull`, with the store named in the message.
    @Test func fullDatabaseIsDiskFull() async throws {
        let store = try DownloadStore.open(directory: nil)
        try await store.writer.writeWithoutTransaction { db in
            let pages = try Int.fetchOne(db, sql: "PRAGMA page_count")!
            try db.execute(sql: "PRAGMA max_page_count = \(pages + 2)")
        }
        let downloads = (1...2_000).map { Self.minimal($0) }
        let error = await #expect(throws: HaulError.self) { try await store.save(downloads) }
        #expect(error?.code == .diskFull)
        #expect(error?.message.contains("in-memory") == true)
        #expect(try await store.loadAll(session: "default").isEmpty)
    }

    /// The default directory follows an absolute XDG_STATE_HOME, else falls back to ~/.local/state.
    @Test func defaultDirectory() {
        #expect(DownloadStore.defaultDirectory(environment: ["XDG_STATE_HOME": "/x/state", "HOME": "/home/u"]).path
                == "/x/state/haul")
        #expect(DownloadStore.defaultDirectory(environment: ["XDG_STATE_HOME": "relative", "HOME": "/home/u"]).path
                == "/home/u/.local/state/haul")
        #expect(DownloadStore.defaultDirectory(environment: ["HOME": "/home/u"]).path == "/home/u/.local/state/haul")
        #expect(DownloadStore.defaultDirectory().lastPathComponent == "haul")
    }

    // MARK: Group commit

    /// 64 concurrent saves all return, every row is stored, and they share transactions.
    @Test(arguments: StoreBackend.allCases) func concurrentSavesAllCommit(_ backend: StoreBackend) async throws {
        let store = try await backend.open()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for n in 0..<64 {
                group.addTask { try await store.save([Self.minimal(2 * n + 1), Self.minimal(2 * n + 2)]) }
            }
            try await group.waitForAll()
        }
        let stored = try await store.loadAll(session: "default")
        #expect(stored == (1...128).map { Self.minimal($0) })
        #expect((1...64).contains(store.transactionsCommitted))
        #expect(store.pendingWrites == 0)
    }

    /// Saves that arrive while a transaction is being written are written together in the next one.
    @Test func concurrentSavesAreCoalesced() async throws {
        let store = try DownloadStore.open(directory: nil)
        // Hold the writer, so that the first save's transaction cannot start until all 64 wait.
        let (held, holding) = AsyncStream.makeStream(of: Void.self)
        let release = DispatchSemaphore(value: 0)
        let holder = Task {
            try await store.writer.writeWithoutTransaction { _ in
                holding.yield()
                holding.finish()
                release.wait()
            }
        }
        for await _ in held {}

        try await withThrowingTaskGroup(of: Void.self) { group in
            for n in 1...64 {
                group.addTask { try await store.save([Self.minimal(n)]) }
            }
            while store.committer.pendingWrites < 64 { await Task.yield() }
            release.signal()
            try await group.waitForAll()
        }
        try await holder.value

        // The first leader's batch was fixed before the writer was free; everything else
        // queued behind it and went in one more transaction.
        #expect(store.committer.transactionsCommitted <= 2)
        #expect(try await store.loadAll(session: "default").count == 64)
    }

    /// Saves and deletes of the same ID coalesced into one transaction apply in arrival order.
    @Test(arguments: StoreBackend.allCases) func coalescedWritesKeepOrder(_ backend: StoreBackend) async throws {
        let store = try await backend.open()
        var download = Self.minimal(1)
        try await store.save([download])
        download.state = .paused
        try await store.delete([download.id])
        try await store.save([download])
        #expect(try await store.load(download.id) == download)
    }

    // MARK: Volume

    /// 100,000 downloads saved in one call all load back, in order and intact.
    @Test func hundredThousandRows() async throws {
        let temporary = try TemporaryDirectory()
        defer { temporary.remove() }
        let directory = temporary.url
        let store = try DownloadStore.open(directory: directory)
        let full = try Self.full()
        var downloads = (1...100_000).map { Self.minimal($0, group: "batch-\($0 % 10)") }
        downloads[50_000].validator = full.validator
        downloads[50_000].request.checksums = full.request.checksums
        downloads[50_000].request.headers = full.request.headers
        try await store.save(downloads)

        let loaded = try await store.loadAll(session: "default")
        #expect(loaded.count == 100_000)
        for index in [0, 1, 49_999, 50_000, 99_999] {
            #expect(loaded[index] == downloads[index])
        }
        #expect(try await store.maxPosition() == 100_000)
        #expect(try await store.groups(session: "default").count == 10)
    }
}
