import Foundation
import GRDB
@testable import Haul
import HaulTestServer
import HaulTestSupport
import Testing

/// Finished downloads found in use again (`StoreWrite.markInUse`): retention counts them as
/// added when they were marked, so that a file a re-run keeps finding is not forgotten 30 days
/// after it was first placed (a nightly `haul get` over the same files fetched them all again
/// then, each placed beside the old one).
@Suite("Downloads in use", .timeLimit(.minutes(3)))
struct InUseRetentionTests {
    static let day: Double = 24 * 3600

    /// Three downloads completed one after the other by a manager on `location`, in that order.
    func finishThree(_ server: TestServer, in directory: URL, location: StoreLocation) async throws -> [DownloadID] {
        var configuration = Support.fastConfiguration(maxConcurrent: 1)
        configuration.retention = DownloadManager.Retention(maxFinished: nil, loadsEarlierFinished: false)
        let manager = try await DownloadManager.open(store: location, configuration: configuration)
        var ids: [DownloadID] = []
        for request in IntactEarlierDownloadsTests().requests(server, 3, in: directory) {
            let id = try await manager.enqueue(request)
            #expect(try await manager.finished(id).state == .completed)
            ids.append(id)
        }
        await manager.shutdown()
        return ids
    }

    /// A download marked in use goes to the end of the insertion order with the date it was
    /// marked: the count rule deletes the oldest others first, the age rule keeps it while the
    /// downloads added with it go, and its row is otherwise unchanged.
    @Test(arguments: StoreBackend.allCases) func markedDownloadsCountAsAddedWhenMarked(_ backend: StoreBackend) async throws {
        try await withTestServer { server in
            let temporary = try TemporaryDirectory()
            defer { temporary.remove() }
            let location = try await backend.location(state: try temporary.subdirectory("state"))
            let ids = try await finishThree(server, in: try temporary.subdirectory("dir"), location: location)
            let store = try await location.open()
            let before = try #require(try await store.load(ids[0]))
            let now = Date()
            try await store.submit(.markInUse([ids[0]], at: now.addingTimeInterval(20 * Self.day)))
            var marked = try #require(try await store.load(ids[0]))
            #expect(abs(marked.createdAt.timeIntervalSince(now.addingTimeInterval(20 * Self.day))) < 0.001)
            marked.createdAt = before.createdAt
            #expect(marked == before, "marking changed more than the date")

            // The oldest by insertion is now the second download, not the first.
            let keepingTwo = DownloadManager.Retention(maxFinished: 2, loadsEarlierFinished: false)
            #expect(try await store.prune(session: "default", retention: keepingTwo, now: now) == 1)
            #expect(Set(try await store.loadAll(session: "default").map(\.id)) == [ids[0], ids[2]])
            // 35 days on, the third (added with the others) is too old; the first, marked 15 days
            // before, is not.
            let month = DownloadManager.Retention(maxFinished: nil, maxAge: .seconds(30 * Self.day), loadsEarlierFinished: false)
            #expect(try await store.prune(session: "default", retention: month, now: now.addingTimeInterval(35 * Self.day)) == 1)
            #expect(try await store.loadAll(session: "default").map(\.id) == [ids[0]])
        }
    }

    /// Moves every download of the SQLite store in `state` `days` into the past.
    func age(_ state: URL, by days: Double) async throws {
        let queue = try DatabaseQueue(path: state.appendingPathComponent(DownloadStore.fileName).path)
        try await queue.write { db in
            try db.execute(sql: "UPDATE download SET createdAt = createdAt - ?", arguments: [days * Self.day])
        }
    }

    /// When each download of the SQLite store in `state` counts as added, by ID.
    func addedDates(_ state: URL) async throws -> [Int64: Double] {
        let queue = try DatabaseQueue(path: state.appendingPathComponent(DownloadStore.fileName).path)
        return try await queue.read { db in
            Dictionary(uniqueKeysWithValues: try Row.fetchAll(db, sql: "SELECT id, createdAt FROM download").map {
                (($0["id"] as Int64), ($0["createdAt"] as Double))
            })
        }
    }

    /// `haul get`'s look-up (`EarlierRunStore`) with a 30-day rule: files found intact 20 days
    /// after they were placed are marked in use, so that 20 days later again (40 after they
    /// were placed) they are still found; a look-up of files marked less than 15 days ago
    /// writes nothing.
    @Test func aLookUpMarksOldIntactFilesInUse() async throws {
        try await withTestServer { server in
            let temporary = try TemporaryDirectory()
            defer { temporary.remove() }
            let dir = try temporary.subdirectory("dir")
            let state = try temporary.subdirectory("state")
            _ = try await finishThree(server, in: dir, location: .directory(state))
            let batch = IntactEarlierDownloadsTests().requests(server, 3, in: dir)
            let month = DownloadManager.Retention(maxFinished: nil, maxAge: .seconds(30 * Self.day), loadsEarlierFinished: false)
            func look() async throws -> [Bool] {
                let opened = try await EarlierRunStore.open(stateDirectory: state, session: "default", retention: month)
                return try await opened.intactEarlierDownloads(of: batch).map { $0 != nil }
            }

            try await age(state, by: 20)
            #expect(try await look() == [true, true, true])
            let marked = try await addedDates(state)
            let now = Date().timeIntervalSinceReferenceDate
            #expect(marked.count == 3 && marked.values.allSatisfy { abs($0 - now) < 60 }, "\(marked)")

            try await age(state, by: 20)
            #expect(try await look() == [true, true, true], "forgotten 40 days after they were placed, 20 after their last run")
            let again = try await addedDates(state)
            #expect(try await look() == [true, true, true])
            #expect(try await addedDates(state) == again, "a look-up of files marked in use today wrote them again")
            #expect(server.requests(forKey: "earlier").count == 3)
        }
    }

    /// The manager's own look-up does the same for the requests `haul get` leaves to it
    /// (playlists, Metalink) and for an app with an age rule: a completed download taken in
    /// again 20 days after it was made counts as added from then, so that 20 days later again
    /// the manager's opening does not forget it and a third request finds it, with or without
    /// finished downloads kept in memory; taken in again the same day, nothing is written.
    @Test(arguments: [false, true]) func aRequestMadeAgainMarksItsDownloadInUse(_ loadsEarlierFinished: Bool) async throws {
        try await withTestServer { server in
            let temporary = try TemporaryDirectory()
            defer { temporary.remove() }
            let dir = try temporary.subdirectory("dir")
            let state = try temporary.subdirectory("state")
            let ids = try await finishThree(server, in: dir, location: .directory(state))
            let batch = IntactEarlierDownloadsTests().requests(server, 3, in: dir)
            var configuration = Support.fastConfiguration(maxConcurrent: 1)
            configuration.retention = DownloadManager.Retention(
                maxFinished: nil, maxAge: .seconds(30 * Self.day), loadsEarlierFinished: loadsEarlierFinished)
            func addAgain() async throws -> [DownloadID] {
                let manager = try await DownloadManager.open(store: .directory(state), configuration: configuration)
                let found = try await manager.addContinuing(batch, toGroup: "again")
                for id in found { #expect(try await manager.finished(id).state == .completed) }
                await manager.shutdown()
                return found
            }

            try await age(state, by: 20)
            #expect(try await addAgain() == ids)
            let marked = try await addedDates(state)
            let now = Date().timeIntervalSinceReferenceDate
            #expect(marked.count == 3 && marked.values.allSatisfy { abs($0 - now) < 60 }, "\(marked)")

            try await age(state, by: 20)
            #expect(try await addAgain() == ids, "forgotten 40 days after they were made, 20 after they were asked for")
            let again = try await addedDates(state)
            #expect(try await addAgain() == ids)
            #expect(try await addedDates(state) == again, "a download marked in use today was marked again")
            #expect(server.requests(forKey: "earlier").count == 3)
        }
    }
}
