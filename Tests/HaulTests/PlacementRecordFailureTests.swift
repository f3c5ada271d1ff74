import Foundation
import GRDB
@testable import Haul
import HaulTestServer
import HaulTestSupport
import Testing

/// A verified file is renamed into place only after its placement intent is in the store
/// (see `DownloadManager+Placement`). Here the store refuses to record it.
@Suite("Placement: an intent the store refuses", .timeLimit(.minutes(3)))
struct PlacementRecordFailureTests {
    /// The file is not renamed; its download waits paused with the store's error and every byte
    /// kept. Once the store takes writes again, resuming places it, fetching only the last byte.
    @Test func unrecordedFileIsNeverPlaced() async throws {
        try await withTestServer { server in
            let temporary = try TemporaryDirectory()
            defer { temporary.remove() }
            let dir = try temporary.subdirectory("dir")
            let state = try temporary.subdirectory("state")
            let size = 40_000
            let target = dir.appendingPathComponent("x.bin")
            let manager = try await DownloadManager.open(stateDirectory: state, configuration: Support.fastConfiguration())
            // Another connection to the same store, as a second process would have.
            let store = try DatabaseQueue(path: state.appendingPathComponent(DownloadStore.fileName).path)
            try await store.write { db in
                try db.execute(sql: """
                    CREATE TRIGGER refuse_placement BEFORE UPDATE OF placement ON download
                    WHEN NEW.placement IS NOT NULL BEGIN SELECT RAISE(ABORT, 'placements refused by the test'); END
                    """)
            }
            let events = manager.managerEvents()
            let id = try await manager.enqueue(Support.request(server, "/file/x.bin", ["size": "\(size)", "seed": "31"], in: dir, name: "x.bin"))
            let reason = try await firstMatch(in: events, "the download to pause") { event -> HaulError? in
                if case .paused(id, let reason?) = event { return reason }
                if case .completed(let info) = event, info.id == id { Issue.record("placed without a recorded intent") }
                return nil
            }
            #expect(reason.code == .fileSystem)
            #expect(reason.message.contains("placements refused by the test"), "\(reason.message)")
            #expect(!FileManager.default.fileExists(atPath: target.path), "renamed although its intent was not recorded")
            let parts = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasSuffix(".part") }
            #expect(parts.count == 1, "the verified bytes stay in their part file")

            try await store.write { db in try db.execute(sql: "DROP TRIGGER refuse_placement") }
            try await manager.resume(id)
            let resumed = try await manager.finished(id)
            #expect(resumed.state == .completed, "\(resumed.error?.message ?? "")")
            await manager.shutdown()
            #expect(Support.contents(target) == TestContent.bytes(seed: 31, size: size))
            let requests = server.requests(forKey: "/file/x.bin")
            #expect(requests.map(\.status) == [200, 206])
            #expect(requests.last?.header("range") == "bytes=\(size - 1)-")
        }
    }
}
