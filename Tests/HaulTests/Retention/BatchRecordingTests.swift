import Foundation
import GRDB
@testable import Haul
import HaulTestServer
import HaulTestSupport
import Testing

/// A batch of 1,000 or more is recorded in a transaction that takes its rows in slices while
/// the manager still makes them (`BatchRecording`); it must still be accepted whole or not at
/// all, and replace spent earlier downloads exactly as a small batch does.
@Suite("Large batches recorded as they are made", .timeLimit(.minutes(3)))
struct BatchRecordingTests {
    static let count = 1_200

    static func configuration(loadsEarlierFinished: Bool = false) -> DownloadManager.Configuration {
        var configuration = Support.fastConfiguration(maxConcurrent: 8)
        configuration.retention = DownloadManager.Retention(maxFinished: 10_000, loadsEarlierFinished: loadsEarlierFinished)
        return configuration
    }

    static func requests(_ server: TestServer, key: String, in directory: URL) -> [DownloadRequest] {
        (0..<count).map { n in
            Support.request(server, "/file/b\(n).bin", ["size": "\(100 + n % 7)", "seed": "\(n)", "key": key], in: directory)
        }
    }

    /// A run again after most files were deleted: the deleted ones get new downloads that
    /// replace the spent ones (more than one slice of them), the others keep theirs, and the
    /// store then holds exactly one completed download per request.
    @Test(arguments: StoreBackend.allCases) func aLargeRerunReplacesItsSpentDownloadsInOneTransaction(_ backend: StoreBackend) async throws {
        try await withTestServer { server in
            let temporary = try TemporaryDirectory()
            defer { temporary.remove() }
            let dir = try temporary.subdirectory("dir")
            let location = try await backend.location(state: try temporary.subdirectory("state"))
            let batch = Self.requests(server, key: "rerun", in: dir)

            func run(_ group: String) async throws -> [DownloadID] {
                let manager = try await DownloadManager.open(store: location, configuration: Self.configuration())
                let ids = try await manager.addContinuing(batch, toGroup: group)
                let summary = try await DownloadGroup(name: group, session: manager).completion
                await manager.shutdown()
                #expect(summary.succeeded && summary.completed.count == Self.count)
                return ids
            }

            let first = try await run("first")
            let deleted = 0..<700
            for n in deleted { try FileManager.default.removeItem(at: dir.appendingPathComponent("b\(n).bin")) }
            let second = try await run("second")
            #expect(server.requests(forKey: "rerun").count == Self.count + deleted.count)
            #expect(Set(second[..<deleted.count]).isDisjoint(with: first), "deleted files get new downloads")
            #expect(Array(second[deleted.count...]) == Array(first[deleted.count...]), "files in place keep their downloads")

            let manager = try await DownloadManager.open(store: location, configuration: Self.configuration(loadsEarlierFinished: true))
            let held = await manager.downloads()
            await manager.shutdown()
            #expect(held.count == Self.count, "one download per request: the replaced ones are gone")
            #expect(Set(held.map(\.id)) == Set(second))
            #expect(held.allSatisfy { $0.state == .completed })
            #expect(Support.listing(dir).count == Self.count)
        }
    }

    /// The ways a large batch comes in: `haul get`'s (continuing earlier downloads), an app's or
    /// the daemon's group (`addMembers`), and a batch added paused (aria2's `--pause`).
    enum Entry: String, CaseIterable, CustomStringConvertible, Sendable {
        case continuing, members, paused
        var description: String { rawValue }

        func add(_ batch: [DownloadRequest], to manager: DownloadManager, group: String) async throws {
            switch self {
            case .continuing: try await manager.addContinuing(batch, toGroup: group)
            case .members: try await manager.addMembers(batch, toGroup: group)
            case .paused: _ = try await manager.addNew(batch, group: group, paused: true)
            }
        }
    }

    /// A batch whose transaction fails after its first slices were inserted is refused whole:
    /// nothing of it is in the store or the manager, and the same batch is accepted once the
    /// store takes it, every download in the state it was added in.
    @Test(arguments: Entry.allCases) func aBatchWhoseTransactionFailsMidwayIsRefusedWhole(_ entry: Entry) async throws {
        try await withTestServer { server in
            let temporary = try TemporaryDirectory()
            defer { temporary.remove() }
            let dir = try temporary.subdirectory("dir")
            let state = try temporary.subdirectory("state")
            let key = "refused-\(entry)"
            let batch = Self.requests(server, key: key, in: dir)
            let manager = try await DownloadManager.open(store: .directory(state), configuration: Self.configuration())
            // Another connection to the same file: past 600 rows, every insert fails.
            let database = try DatabaseQueue(path: state.appendingPathComponent(DownloadStore.fileName).path)
            try await database.write { db in
                try db.execute(sql: """
                    CREATE TRIGGER refuse_past_600 BEFORE INSERT ON download
                    WHEN (SELECT count(*) FROM download) >= 600
                    BEGIN SELECT RAISE(ABORT, 'refused by the test'); END
                    """)
            }
            await #expect(throws: HaulError.self) { try await entry.add(batch, to: manager, group: "refused") }
            #expect(await manager.downloads().isEmpty)
            #expect(try await database.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM download") } == 0)

            try await database.write { db in try db.execute(sql: "DROP TRIGGER refuse_past_600") }
            try await entry.add(batch, to: manager, group: "accepted")
            let stored = try await database.read { db in
                try String.fetchAll(db, sql: "SELECT state FROM download WHERE groupName = 'accepted'")
            }
            if entry == .paused {
                #expect(stored.count == Self.count && stored.allSatisfy { $0 == "paused" })
                #expect(await manager.downloads().allSatisfy { $0.state == .paused })
                await manager.shutdown()
                #expect(server.requests(forKey: key).isEmpty, "a paused batch fetches nothing")
            } else {
                #expect(stored.count == Self.count)
                let summary = try await DownloadGroup(name: "accepted", session: manager).completion
                await manager.shutdown()
                #expect(summary.succeeded && summary.completed.count == Self.count)
                #expect(server.requests(forKey: key).count == Self.count, "nothing of the refused batch was fetched")
            }
        }
    }
}
