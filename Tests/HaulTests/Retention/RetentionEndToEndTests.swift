import Foundation
@testable import Haul
import HaulTestServer
import HaulTestSupport
import Testing

/// Finished downloads beyond the retention rule are forgotten, in memory and in the store, and
/// a store's history is not loaded by a manager that does not need it.
@Suite("Retention end to end", .timeLimit(.minutes(3)))
struct RetentionEndToEndTests {
    func configuration(keeping maxFinished: Int?, loadsEarlierFinished: Bool = true) -> DownloadManager.Configuration {
        var configuration = Support.fastConfiguration(maxConcurrent: 1)
        configuration.retention = DownloadManager.Retention(maxFinished: maxFinished, loadsEarlierFinished: loadsEarlierFinished)
        return configuration
    }

    func requests(_ server: TestServer, _ count: Int, in directory: URL, key: String = "r") -> [DownloadRequest] {
        (0..<count).map { n in
            Support.request(server, "/file/r\(n).bin", ["size": "\(500 + n)", "seed": "\(n)", "key": key], in: directory)
        }
    }

    /// Single downloads: once more than the bound have finished, the longest finished are
    /// forgotten, and a reopened store holds exactly the ones kept.
    @Test(arguments: StoreBackend.allCases) func singleDownloadsBeyondTheBoundAreForgotten(_ backend: StoreBackend) async throws {
        try await withTestServer { server in
            let temporary = try TemporaryDirectory()
            defer { temporary.remove() }
            let dir = try temporary.subdirectory("dir")
            let state = try temporary.subdirectory("state")
            let location = try await backend.location(state: state)
            var ids: [DownloadID] = []
            let manager = try await DownloadManager.open(store: location, configuration: configuration(keeping: 3))
            for request in requests(server, 6, in: dir) {
                let id = try await manager.enqueue(request)
                // One at a time, so that the order they finish in is known.
                #expect(try await manager.finished(id).state == .completed)
                ids.append(id)
            }
            #expect(await manager.downloads().map(\.id) == Array(ids.suffix(3)))
            #expect(await manager.snapshot(ids[0]) == nil)
            await manager.shutdown()
            // Every file stays where it was placed: forgetting a record never touches a file.
            #expect(Support.listing(dir).count == 6)

            let reopened = try await DownloadManager.open(store: location, configuration: configuration(keeping: nil))
            #expect(await reopened.downloads().map(\.id) == Array(ids.suffix(3)))
            await reopened.shutdown()
        }
    }

    /// A group's members are kept until the group completes, so its summary has every one;
    /// then the bound applies to them like to any other.
    @Test func groupMembersWaitForTheirGroup() async throws {
        try await withTestServer { server in
            let temporary = try TemporaryDirectory()
            defer { temporary.remove() }
            let dir = temporary.url
            try await withDownloadManager(configuration: configuration(keeping: 2)) { manager in
                let group = try await manager.add(requests(server, 5, in: dir), toGroup: "batch")
                let summary = try await group.completion
                #expect(summary.completed.count == 5)
                #expect(await manager.downloads().count == 2)
                #expect(try await group.downloads().count == 2)
            }
        }
    }

    /// Opening a store prunes the finished downloads beyond the bound before loading: the
    /// newest are kept; unfinished ones are never pruned.
    @Test(arguments: StoreBackend.allCases) func openingPrunesOldFinishedDownloads(_ backend: StoreBackend) async throws {
        try await withTestServer { server in
            let temporary = try TemporaryDirectory()
            defer { temporary.remove() }
            let dir = try temporary.subdirectory("dir")
            let state = try temporary.subdirectory("state")
            let location = try await backend.location(state: state)
            var finished: [DownloadID] = []
            let paused: DownloadID
            do {
                let manager = try await DownloadManager.open(store: location, configuration: configuration(keeping: nil))
                for request in requests(server, 5, in: dir) {
                    let id = try await manager.enqueue(request)
                    _ = try await manager.finished(id)
                    finished.append(id)
                }
                var slow = Support.request(server, "/file/slow.bin", ["size": "\(1 << 20)", "rate": "10000"], in: dir)
                slow.fileName = "slow.bin"
                paused = try await manager.add(slow, queueIndex: nil, paused: true)
                await manager.shutdown()
            }
            let manager = try await DownloadManager.open(store: location, configuration: configuration(keeping: 2))
            #expect(await manager.downloads().map(\.id) == Array(finished.suffix(2)) + [paused])
            await manager.shutdown()
        }
    }

    /// With `loadsEarlierFinished` off, a reopened manager holds only what is unfinished, and
    /// a request made again still finds its completed download in the store: nothing is
    /// fetched again and the file is not placed a second time.
    @Test(arguments: StoreBackend.allCases) func requestMadeAgainIsFoundInTheStore(_ backend: StoreBackend) async throws {
        try await withTestServer { server in
            let temporary = try TemporaryDirectory()
            defer { temporary.remove() }
            let dir = try temporary.subdirectory("dir")
            let state = try temporary.subdirectory("state")
            let location = try await backend.location(state: state)
            let batch = requests(server, 4, in: dir, key: "again")
            let config = configuration(keeping: 100, loadsEarlierFinished: false)
            do {
                let manager = try await DownloadManager.open(store: location, configuration: config)
                #expect(try await manager.add(batch, toGroup: "first", continuingExisting: true).completion.succeeded)
                await manager.shutdown()
            }
            #expect(server.requests(forKey: "again").count == 4)
            let manager = try await DownloadManager.open(store: location, configuration: config)
            #expect(await manager.downloads().isEmpty)
            let summary = try await manager.add(batch, toGroup: "second", continuingExisting: true).completion
            #expect(summary.completed.count == 4)
            await manager.shutdown()
            #expect(server.requests(forKey: "again").count == 4, "a completed file was fetched again")
            #expect(Support.listing(dir) == (0..<4).map { "r\($0).bin" }.sorted())
        }
    }

    /// The same URLs fetched into another directory are new downloads, and the earlier ones
    /// (of another directory) are not loaded to find that out.
    @Test(arguments: StoreBackend.allCases) func sameURLsIntoAnotherDirectoryLoadNothingEarlier(_ backend: StoreBackend) async throws {
        try await withTestServer { server in
            let temporary = try TemporaryDirectory()
            defer { temporary.remove() }
            let first = try temporary.subdirectory("first")
            let second = try temporary.subdirectory("second")
            let state = try temporary.subdirectory("state")
            let location = try await backend.location(state: state)
            let config = configuration(keeping: 100, loadsEarlierFinished: false)
            do {
                let manager = try await DownloadManager.open(store: location, configuration: config)
                #expect(try await manager.add(requests(server, 3, in: first), toGroup: "a", continuingExisting: true).completion.succeeded)
                await manager.shutdown()
            }
            let manager = try await DownloadManager.open(store: location, configuration: config)
            let summary = try await manager.add(requests(server, 3, in: second), toGroup: "b", continuingExisting: true).completion
            #expect(summary.completed.count == 3)
            #expect(await manager.downloads().count == 3)
            await manager.shutdown()
            #expect(Support.listing(second).count == 3)
        }
    }

    /// An unfinished download left alone for longer than `abandonsUnfinishedAfter` is canceled
    /// when the store is opened, its part file deleted; a younger one is left as it was.
    @Test(arguments: StoreBackend.allCases) func abandonedUnfinishedDownloadsAreCanceled(_ backend: StoreBackend) async throws {
        try await withTestServer { server in
            let temporary = try TemporaryDirectory()
            defer { temporary.remove() }
            let dir = try temporary.subdirectory("dir")
            let state = try temporary.subdirectory("state")
            let location = try await backend.location(state: state)
            let id: DownloadID
            do {
                let manager = try await DownloadManager.open(store: location, configuration: configuration(keeping: nil))
                let events = manager.managerEvents()
                id = try await manager.enqueue(Support.request(
                    server, "/file/left.bin", ["size": "\(1 << 20)", "rate": "100000"], in: dir, name: "left.bin"))
                _ = try await firstMatch(in: events, "a checkpoint past 0") { event -> Bool? in
                    if case .checkpointed(id, let offset) = event, offset > 0 { return true }
                    return nil
                }
                try await manager.pause(id)
                await manager.shutdown()
            }
            #expect(!Support.leftovers(dir).isEmpty, "the paused download keeps its part file")
            var keepYoung = configuration(keeping: nil)
            keepYoung.retention.abandonsUnfinishedAfter = .seconds(3600)
            let young = try await DownloadManager.open(store: location, configuration: keepYoung)
            #expect(await young.snapshot(id)?.state == .paused)
            await young.shutdown()

            var abandonNow = configuration(keeping: nil)
            abandonNow.retention.abandonsUnfinishedAfter = .zero
            let manager = try await DownloadManager.open(store: location, configuration: abandonNow)
            #expect(await manager.snapshot(id)?.state == .canceled)
            await manager.shutdown()
            #expect(Support.leftovers(dir).isEmpty, "its part file is deleted")
        }
    }

    /// The outbox keeps at most `maxKeptEvents` of a session's events: the oldest go.
    @Test(arguments: StoreBackend.allCases) func outboxIsTrimmedToItsBound(_ backend: StoreBackend) async throws {
        let store = try await backend.open()
        let events = (0..<30).map { n in StoredEvent(kind: .canceled, download: nil, date: Date(timeIntervalSince1970: Double(n))) }
        try await store.save([], events: events, session: "s")
        try await store.save([], events: [], trimmingEventsTo: 10, session: "s")
        let kept = try await store.events(session: "s", after: 0, limit: 100)
        #expect(kept.count == 10)
        #expect(kept.first?.sequence == 21)
    }

    /// Compaction prunes every session to the bound (oldest first) and trims every outbox,
    /// leaving alone a finished download an unacknowledged event names.
    @Test(arguments: StoreBackend.allCases) func compactionPrunesEverySessionAndKeepsPinned(_ backend: StoreBackend) async throws {
        let store = try await backend.open()
        func finished(_ n: Int, _ session: String) -> StoredDownload {
            var download = StoreTests.minimal(n, session: session)
            download.state = .completed
            return download
        }
        let a = (1...5).map { finished($0, "a") }
        try await store.save(a + [finished(6, "b"), finished(7, "b")])
        let noise = (0..<29).map { n in StoredEvent(kind: .started, download: a[4].id, date: Date(timeIntervalSince1970: Double(n))) }
        // The oldest download's end is the newest event: trimming keeps it, so retention must too.
        try await store.save([], events: noise + [StoredEvent(kind: .completed, download: a[0].id)], session: "a")

        let deleted = try await store.compact(retention: DownloadManager.Retention(maxFinished: 2), maxEvents: 10)
        #expect(deleted == 2)
        #expect(try await store.loadAll(session: "a").map(\.id) == [a[0].id, a[3].id, a[4].id])
        #expect(try await store.loadAll(session: "b").count == 2)
        #expect(try await store.events(session: "a", after: 0, limit: 100).count == 10)
    }

    /// Pruning deletes the oldest finished downloads of the session beyond the bound, and
    /// nothing between them that it must keep: a pinned one, an unfinished one, and another
    /// session's. (SQLite deletes the oldest by runs of rowids: these rows sit inside the run.)
    @Test(arguments: StoreBackend.allCases) func pruningKeepsWhatLiesAmongTheOldest(_ backend: StoreBackend) async throws {
        let store = try await backend.open()
        func download(_ n: Int, _ session: String, finished: Bool = true) -> StoredDownload {
            var download = StoreTests.minimal(n, session: session)
            if finished { download.state = .completed }
            return download
        }
        let oldest = download(1, "a")
        let pinned = download(2, "a")
        let otherSession = download(3, "b")
        let unfinished = download(4, "a", finished: false)
        let secondOldest = download(5, "a")
        let newest = [download(6, "a"), download(7, "a")]
        // Saved one by one: each later one is newer.
        for row in [oldest, pinned, otherSession, unfinished, secondOldest] + newest { try await store.save([row]) }
        try await store.save([], events: [StoredEvent(kind: .completed, download: pinned.id)], session: "a")

        // Five finished in "a", one of them pinned: two go, the two oldest that are not pinned.
        #expect(try await store.prune(session: "a", retention: DownloadManager.Retention(maxFinished: 2)) == 2)
        #expect(Set(try await store.loadAll(session: "a").map(\.id)) == Set([pinned.id, unfinished.id] + newest.map(\.id)))
        #expect(try await store.loadAll(session: "b").map(\.id) == [otherSession.id])
        #expect(try await store.prune(session: "a", retention: DownloadManager.Retention(maxFinished: 2)) == 0)
    }

    /// A new run numbers its downloads above every download in the store, finished ones
    /// included, although it loads only the unfinished: finished downloads' positions rise
    /// with the order they were added in, run after run (SQLite's index of positions then
    /// grows at its end instead of interleaving every run's downloads).
    @Test func positionsRiseFromRunToRun() async throws {
        try await withTestServer { server in
            let temporary = try TemporaryDirectory()
            defer { temporary.remove() }
            let state = try temporary.subdirectory("state")
            for run in 0..<2 {
                let dir = try temporary.subdirectory("dir\(run)")
                let manager = try await DownloadManager.open(
                    stateDirectory: state, configuration: configuration(keeping: nil, loadsEarlierFinished: false))
                #expect(try await manager.add(requests(server, 3, in: dir, key: "run\(run)"), toGroup: "run\(run)").completion.completed.count == 3)
                await manager.shutdown()
            }
            let rows = try await DownloadStore.open(directory: state).loadAll(session: "default")
            let first = rows.filter { $0.group == "run0" }.map(\.position)
            let second = rows.filter { $0.group == "run1" }.map(\.position)
            #expect(first.count == 3 && second.count == 3)
            #expect(second.min()! > first.max()!, "first run: \(first), second: \(second)")
        }
    }

    /// Finished downloads older than `maxAge` are pruned when the store is opened.
    @Test(arguments: StoreBackend.allCases) func oldFinishedDownloadsArePrunedByAge(_ backend: StoreBackend) async throws {
        try await withTestServer { server in
            let temporary = try TemporaryDirectory()
            defer { temporary.remove() }
            let dir = try temporary.subdirectory("dir")
            let state = try temporary.subdirectory("state")
            let location = try await backend.location(state: state)
            let manager = try await DownloadManager.open(store: location, configuration: configuration(keeping: nil))
            let id = try await manager.enqueue(requests(server, 1, in: dir)[0])
            _ = try await manager.finished(id)
            await manager.shutdown()
            let store = try await location.open()
            var rule = DownloadManager.Retention(maxFinished: nil, maxAge: .seconds(3600))
            #expect(try await store.prune(session: "default", retention: rule) == 0)
            rule.maxAge = .seconds(3600)
            #expect(try await store.prune(session: "default", retention: rule, now: Date().addingTimeInterval(7200)) == 1)
            #expect(try await store.loadAll(session: "default").isEmpty)
        }
    }
}
