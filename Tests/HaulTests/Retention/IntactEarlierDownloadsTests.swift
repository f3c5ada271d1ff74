import Foundation
import GRDB
@testable import Haul
import HaulTestServer
import HaulTestSupport
import Testing

/// `DownloadManager.intactEarlierDownloads(of:)`: which requests of a batch an earlier run
/// already placed, found with one narrow store query per directory and a `stat` per file,
/// never trusting a name alone, and without writing the rows it finds.
@Suite("Intact earlier downloads", .timeLimit(.minutes(3)))
struct IntactEarlierDownloadsTests {
    func configuration(loadsEarlierFinished: Bool) -> DownloadManager.Configuration {
        var configuration = Support.fastConfiguration(maxConcurrent: 2)
        configuration.retention = DownloadManager.Retention(maxFinished: nil, loadsEarlierFinished: loadsEarlierFinished)
        return configuration
    }

    func requests(_ server: TestServer, _ count: Int, in directory: URL) -> [DownloadRequest] {
        (0..<count).map { n in
            Support.request(server, "/file/e\(n).bin", ["size": "\(700 + n)", "seed": "\(n)", "key": "earlier"], in: directory)
        }
    }

    /// Sets `path`'s modification time, in seconds since 1970.
    func setModified(_ path: String, _ seconds: Double) throws {
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSince1970: seconds)], ofItemAtPath: path)
    }

    /// Intact files are found with their earlier download's ID, path and bytes; a file
    /// deleted, resized, rewritten (same size, other time) or replaced by another file with
    /// the same size and time (other inode) is not, nor is a request never made, one whose
    /// checksums differ, or one asked for twice. Their rows stay in the first group.
    @Test(arguments: StoreBackend.allCases) func findsOnlyFilesStillAsPlaced(_ backend: StoreBackend) async throws {
        try await withTestServer { server in
            let temporary = try TemporaryDirectory()
            defer { temporary.remove() }
            let dir = try temporary.subdirectory("dir")
            let location = try await backend.location(state: try temporary.subdirectory("state"))
            let batch = requests(server, 6, in: dir)
            let first: GroupSummary
            do {
                let manager = try await DownloadManager.open(store: location, configuration: configuration(loadsEarlierFinished: false))
                first = try await manager.add(batch, toGroup: "first", continuingExisting: true).completion
                await manager.shutdown()
            }
            #expect(first.completed.count == 6)
            let ids = first.results.map(\.id)
            let path = { (n: Int) in dir.appendingPathComponent("e\(n).bin").path }
            // 1: same size, other time.
            try Data(repeating: 7, count: 701).write(to: URL(fileURLWithPath: path(1)))
            try setModified(path(1), 1_000_000_000)
            // 2: resized.
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path(2)))
            try handle.seekToEnd()
            try handle.write(contentsOf: Data("more".utf8))
            try handle.close()
            // 3: deleted.
            try FileManager.default.removeItem(atPath: path(3))
            // 4: replaced by another file of the same size, given the same time: only its inode differs.
            let placed = try #require(SystemCalls.describe(path(4)))
            let other = dir.appendingPathComponent("other").path
            try Data(repeating: 9, count: 704).write(to: URL(fileURLWithPath: other))
            try setModified(other, placed.modified)
            try FileManager.default.removeItem(atPath: path(4))
            try FileManager.default.moveItem(atPath: other, toPath: path(4))
            let replaced = try #require(SystemCalls.describe(path(4)))
            // Within what a size-and-time check tells apart (a millisecond): only the inode differs.
            let sameTime = abs(replaced.modified - placed.modified) < 0.001
            #expect(replaced.size == placed.size && sameTime && replaced.identity.inode != placed.identity.inode)

            var again = batch
            again.append(requests(server, 7, in: dir)[6])  // never made
            var checked = batch[0]
            checked.checksums = [try Checksum(parsing: "sha256=\(String(repeating: "0", count: 64))")]
            again.append(checked)  // same URL, other checksums
            again.append(batch[5])  // batch[5] asked for twice

            let manager = try await DownloadManager.open(store: location, configuration: configuration(loadsEarlierFinished: false))
            let found = try await manager.intactEarlierDownloads(of: again)
            #expect(found.count == again.count)
            #expect(found.map { $0 != nil } == [true, false, false, false, false, false, false, false, false])
            let intact = try #require(found[0])
            #expect(intact.id == ids[0])
            #expect(intact.state == .completed)
            #expect(intact.group == "first")
            #expect(intact.fileURL?.path == path(0))
            #expect(intact.progress.completedBytes == 700)
            #expect(intact.result?.file?.length == 700)
            #expect(!intact.skipped)
            // Only what was asked: nothing loaded into the manager, nothing written.
            #expect(await manager.downloads().isEmpty)
            let store = await manager.store
            let written = store.transactionsCommitted
            _ = try await manager.intactEarlierDownloads(of: [batch[0]])
            #expect(store.transactionsCommitted == written)
            await manager.shutdown()

            // The rows found keep their group; a run that adds the request the long way moves it.
            let reopened = try await DownloadManager.open(store: location, configuration: configuration(loadsEarlierFinished: true))
            let groups = Dictionary(uniqueKeysWithValues: await reopened.downloads().map { ($0.id, $0.group) })
            #expect(groups[ids[0]] == "first")
            await reopened.shutdown()
        }
    }

    /// A request whose earlier download did not complete (paused here) is left to `add`,
    /// which continues it; so is one whose file was placed by a `skip` that found it taken.
    @Test func unfinishedAndSkippedAreLeftToAdd() async throws {
        try await withTestServer { server in
            let temporary = try TemporaryDirectory()
            defer { temporary.remove() }
            let dir = try temporary.subdirectory("dir")
            let state = try temporary.subdirectory("state")
            var taken = Support.request(server, "/file/taken.bin", ["size": "900"], in: dir, policy: .skip)
            taken.fileName = "taken.bin"
            try Data("someone else's".utf8).write(to: dir.appendingPathComponent("taken.bin"))
            let waiting = Support.request(server, "/file/waiting.bin", ["size": "900"], in: dir)
            do {
                let manager = try await DownloadManager.open(
                    stateDirectory: state, session: "s", configuration: configuration(loadsEarlierFinished: false))
                let id = try await manager.enqueue(taken)
                #expect(try await manager.finished(id).skipped)
                _ = try await manager.add(waiting, queueIndex: nil, paused: true)
                await manager.shutdown()
            }
            let manager = try await DownloadManager.open(
                stateDirectory: state, session: "s", configuration: configuration(loadsEarlierFinished: false), continueInterrupted: false)
            let found = try await manager.intactEarlierDownloads(of: [taken, waiting])
            #expect(found.map { $0 == nil } == [true, true])
            await manager.shutdown()
        }
    }

    /// One statement per directory, answered from the (session, directory, URL) index: a probe
    /// per URL of the list, never a pass over the directory's other rows.
    @Test func queryPlanUsesTheDirectoryIndex() async throws {
        let store = try DownloadStore.open(directory: nil)
        let plan = try await store.writer.read { db in
            try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + DownloadStore.earlierDownloadsSQL, arguments: ["s", "/d/", "[\"u\"]"])
                .map { $0["detail"] as String }
        }
        #expect(plan.contains { $0.hasPrefix("SEARCH download USING INDEX download_session_directory_url (session=? AND directory=? AND url=?)") }, "\(plan)")
        #expect(!plan.contains { $0.hasPrefix("SCAN download") }, "\(plan)")
    }
}

/// `EarlierRunStore`: the look-up `haul get` makes before it opens a manager. The store is
/// pruned first, as a manager's opening prunes it, so that a download the manager would have
/// forgotten is not found intact here either (and its file is fetched again, as before).
@Suite("Earlier run store", .timeLimit(.minutes(3)))
struct EarlierRunStoreTests {
    /// A configuration that keeps every finished download in the store only.
    private func keepingAllInStore() -> DownloadManager.Configuration {
        var configuration = Support.fastConfiguration(maxConcurrent: 1)
        configuration.retention = DownloadManager.Retention(maxFinished: nil, loadsEarlierFinished: false)
        return configuration
    }

    /// Three downloads into `directory`, completed by a manager on `state` that then shut down.
    private func placeThree(_ server: TestServer, in directory: URL, state: URL) async throws -> [DownloadRequest] {
        let batch = IntactEarlierDownloadsTests().requests(server, 3, in: directory)
        let manager = try await DownloadManager.open(stateDirectory: state, configuration: keepingAllInStore())
        #expect(try await manager.add(batch, toGroup: "first", continuingExisting: true).completion.completed.count == 3)
        await manager.shutdown()
        return batch
    }

    @Test func prunesBeforeItLooks() async throws {
        try await withTestServer { server in
            let temporary = try TemporaryDirectory()
            defer { temporary.remove() }
            let state = try temporary.subdirectory("state")
            let batch = try await placeThree(server, in: try temporary.subdirectory("dir"), state: state)
            let keepingAll = try await EarlierRunStore.open(stateDirectory: state, session: "default", retention: keepingAllInStore().retention)
            #expect(try await keepingAll.intactEarlierDownloads(of: batch).map { $0 != nil } == [true, true, true])
            // Only the newest finished download is within this bound: the two others are pruned.
            let keepingOne = try await EarlierRunStore.open(
                stateDirectory: state, session: "default", retention: DownloadManager.Retention(maxFinished: 1, loadsEarlierFinished: false))
            #expect(try await keepingOne.intactEarlierDownloads(of: batch).map { $0 != nil } == [false, false, true])
            // A rule that keeps finished downloads in memory leaves them to the manager.
            let inMemory = try await EarlierRunStore.open(
                stateDirectory: state, session: "default", retention: DownloadManager.Retention(maxFinished: nil, loadsEarlierFinished: true))
            #expect(try await inMemory.intactEarlierDownloads(of: batch).allSatisfy { $0 == nil })
        }
    }

    /// A batch into a directory the session never used finds nothing whatever the prune
    /// deletes: its prune waits for `finishDeferredPrune`, which makes exactly the prune the
    /// look-up would have made; a manager opened meanwhile leaves it alone.
    @Test func defersThePruneForANewDirectory() async throws {
        try await withTestServer { server in
            let temporary = try TemporaryDirectory()
            defer { temporary.remove() }
            let fresh = try temporary.subdirectory("fresh")
            let state = try temporary.subdirectory("state")
            let earlier = try await placeThree(server, in: try temporary.subdirectory("used"), state: state)
            var configuration = keepingAllInStore()
            let keepingOne = DownloadManager.Retention(maxFinished: 1, loadsEarlierFinished: false)
            let opened = try await EarlierRunStore.open(stateDirectory: state, session: "default", retention: keepingOne)
            let batch = IntactEarlierDownloadsTests().requests(server, 2, in: fresh)
            #expect(try await opened.lookUpEarlier(of: batch).intact == [nil, nil])
            // Deferred: all three earlier downloads are still stored, and a manager opened on
            // the store does not prune them either.
            #expect(try await opened.store.loadAll(session: "default").count == 3)
            configuration.retention = keepingOne
            let manager = try await DownloadManager.open(opened, configuration: configuration, continueInterrupted: false)
            #expect(try await opened.store.loadAll(session: "default").count == 3)
            try await opened.finishDeferredPrune()
            let kept = try await opened.store.loadAll(session: "default")
            #expect(kept.count == 1)
            #expect(kept.first?.request.url.path == "/file/e2.bin")
            await manager.shutdown()
            // A look-up into the used directory prunes before it reads.
            let again = try await EarlierRunStore.open(stateDirectory: state, session: "default", retention: DownloadManager.Retention(maxFinished: 0, loadsEarlierFinished: false))
            #expect(try await again.lookUpEarlier(of: earlier).intact == [nil, nil, nil])
            #expect(try await again.store.loadAll(session: "default").isEmpty)
        }
    }
}
