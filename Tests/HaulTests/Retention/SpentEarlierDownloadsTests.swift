import Foundation
@testable import Haul
import HaulTestServer
import HaulTestSupport
import Testing

/// A request made again whose earlier download can never be used (its file deleted or changed
/// since, or the download canceled) gets a new download that replaces the earlier one; a
/// manager that leaves finished downloads in the store deletes such earlier rows without
/// loading them (`DownloadManager.sortEarlierFinished`).
@Suite("Spent earlier downloads", .timeLimit(.minutes(3)))
struct SpentEarlierDownloadsTests {
    func configuration(loadsEarlierFinished: Bool) -> DownloadManager.Configuration {
        var configuration = Support.fastConfiguration(maxConcurrent: 2)
        configuration.retention = DownloadManager.Retention(maxFinished: 100, loadsEarlierFinished: loadsEarlierFinished)
        return configuration
    }

    func requests(_ server: TestServer, in directory: URL) -> [DownloadRequest] {
        (0..<4).map { n in
            Support.request(server, "/file/s\(n).bin", ["size": "\(700 + n)", "seed": "\(n)", "key": "spent"], in: directory)
        }
    }

    /// Run after run, deleted files are fetched again under new downloads, the files still in
    /// place are not, and the store holds one download per request: the replaced ones are gone.
    @Test(arguments: StoreBackend.allCases) func deletedFilesAreFetchedAgainAndTheirEarlierDownloadsDeleted(_ backend: StoreBackend) async throws {
        try await withTestServer { server in
            let temporary = try TemporaryDirectory()
            defer { temporary.remove() }
            let dir = try temporary.subdirectory("dir")
            let location = try await backend.location(state: try temporary.subdirectory("state"))
            let batch = requests(server, in: dir)
            let config = configuration(loadsEarlierFinished: false)

            func run(_ group: String) async throws -> [DownloadID] {
                let manager = try await DownloadManager.open(store: location, configuration: config)
                let ids = try await manager.addContinuing(batch, toGroup: group)
                let summary = try await DownloadGroup(name: group, session: manager).completion
                await manager.shutdown()
                #expect(summary.succeeded && summary.completed.count == 4)
                return ids
            }

            let first = try await run("first")
            #expect(server.requests(forKey: "spent").count == 4)
            try FileManager.default.removeItem(at: dir.appendingPathComponent("s0.bin"))
            try FileManager.default.removeItem(at: dir.appendingPathComponent("s1.bin"))
            let second = try await run("second")
            #expect(server.requests(forKey: "spent").count == 6, "only the two deleted files are fetched again")
            #expect(Array(second[2...]) == Array(first[2...]), "files in place keep their downloads")
            #expect(Set(second[..<2]).isDisjoint(with: first), "deleted files get new downloads")
            try FileManager.default.removeItem(at: dir.appendingPathComponent("s0.bin"))
            let third = try await run("third")
            #expect(server.requests(forKey: "spent").count == 7)
            #expect(Array(third[1...]) == Array(second[1...]))
            #expect(!second.contains(third[0]))
            #expect(Support.listing(dir) == (0..<4).map { "s\($0).bin" })

            // Everything the store holds, loaded whole: one download per request.
            let manager = try await DownloadManager.open(store: location, configuration: configuration(loadsEarlierFinished: true))
            let held = await manager.downloads()
            await manager.shutdown()
            #expect(Set(held.map(\.id)) == Set(third))
            for n in 0..<4 {
                let data = try Data(contentsOf: dir.appendingPathComponent("s\(n).bin"))
                #expect(data.count == 700 + n)
            }
        }
    }

    /// A canceled earlier download is replaced by a new one that fetches the file, and is gone
    /// from the store.
    @Test(arguments: StoreBackend.allCases) func aCanceledEarlierDownloadIsReplaced(_ backend: StoreBackend) async throws {
        try await withTestServer { server in
            let temporary = try TemporaryDirectory()
            defer { temporary.remove() }
            let dir = try temporary.subdirectory("dir")
            let location = try await backend.location(state: try temporary.subdirectory("state"))
            // The first request is refused for good, the next ones served.
            let request = Support.request(server, "/file/c.bin", ["size": "900", "seed": "9", "key": "canceled", "status": "404,200"], in: dir)
            let config = configuration(loadsEarlierFinished: false)
            let canceled: DownloadID
            do {
                let manager = try await DownloadManager.open(store: location, configuration: config)
                canceled = try await manager.addContinuing([request], toGroup: "first")[0]
                let summary = try await DownloadGroup(name: "first", session: manager).completion
                #expect(summary.failed.count == 1)
                try await manager.cancel(canceled)
                await manager.shutdown()
            }
            let manager = try await DownloadManager.open(store: location, configuration: config)
            let ids = try await manager.addContinuing([request], toGroup: "second")
            let summary = try await DownloadGroup(name: "second", session: manager).completion
            await manager.shutdown()
            #expect(ids[0] != canceled)
            #expect(summary.succeeded)
            #expect(server.requests(forKey: "canceled").count == 2)
            let reopened = try await DownloadManager.open(store: location, configuration: configuration(loadsEarlierFinished: true))
            let held = await reopened.downloads()
            await reopened.shutdown()
            #expect(held.map(\.id) == ids, "the canceled download is gone from the store")
        }
    }
}
