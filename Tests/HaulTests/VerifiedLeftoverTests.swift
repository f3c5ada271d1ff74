import Foundation
@testable import Haul
import HaulTestServer
import HaulTestSupport
import Testing

/// A verified part file (`.haul-KEY.done`) that a dead process left unplaced is put in place
/// by the next one, without fetching anything (`DownloadManager+InterruptedPlacement`).
@Suite("Recovery: verified files left unplaced", .timeLimit(.minutes(3)))
struct VerifiedLeftoverTests {
    /// A download recorded but never completed, whose `.done` file holds its bytes, is completed at the next open by renaming that file into place; the server is never asked.
    @Test func unfinishedDownloadWithVerifiedFileIsPlacedOnOpen() async throws {
        try await withTestServer { server in
            let temporary = try TemporaryDirectory()
            defer { temporary.remove() }
            let dir = try temporary.subdirectory("dir")
            let state = try temporary.subdirectory("state")
            let bytes = TestContent.bytes(seed: 41, size: 3_000)
            let request = Support.request(server, "/file/a.bin", ["size": "3000", "seed": "41"], in: dir, name: "a.bin")
            let first = try await DownloadManager.open(stateDirectory: state, configuration: Support.fastConfiguration())
            let id = try await first.addNew([request], group: nil, paused: true)[0]
            await first.shutdown()
            // As a killed process leaves it: bytes verified, renamed `.done`, no write since.
            let part = PartFile(directory: dir.path, key: PartKey(for: request).description)
            try Data(bytes).write(to: URL(fileURLWithPath: part.verifiedPath))

            let second = try await DownloadManager.open(stateDirectory: state, configuration: Support.fastConfiguration())
            let info = try #require(await second.snapshot(id))
            await second.shutdown()
            #expect(info.state == .completed)
            #expect(Support.contents(dir.appendingPathComponent("a.bin")) == bytes)
            #expect(Support.leftovers(dir).isEmpty)
            #expect(server.requests(forKey: "/file/a.bin").isEmpty)
        }
    }

    /// A download recorded completed with its intent, whose rename never happened, gets its file from the `.done` file at the next open, under the recorded name.
    @Test func completedDownloadWhoseRenameWasLostIsPlacedOnOpen() async throws {
        try await withTestServer { server in
            let temporary = try TemporaryDirectory()
            defer { temporary.remove() }
            let dir = try temporary.subdirectory("dir")
            let state = try temporary.subdirectory("state")
            let request = Support.request(server, "/file/b.bin", ["size": "2000", "seed": "42"], in: dir, name: "b.bin")
            let first = try await DownloadManager.open(stateDirectory: state, configuration: Support.fastConfiguration())
            let id = try await first.enqueue(request)
            let done = try await first.finished(id)
            await first.shutdown()
            #expect(done.state == .completed)
            // Undo the rename: the row says completed, the file waits as `.done`.
            let target = dir.appendingPathComponent("b.bin")
            let part = PartFile(directory: dir.path, key: PartKey(for: request).description)
            try FileManager.default.moveItem(atPath: target.path, toPath: part.verifiedPath)

            let second = try await DownloadManager.open(stateDirectory: state, configuration: Support.fastConfiguration())
            let info = try #require(await second.snapshot(id))
            await second.shutdown()
            #expect(info.state == .completed)
            #expect(info.fileURL?.path == target.path)
            #expect(Support.contents(target) == TestContent.bytes(seed: 42, size: 2_000))
            #expect(Support.leftovers(dir).isEmpty)
            #expect(server.requests(forKey: "/file/b.bin").count == 1)
        }
    }

    /// A `.part` file, however long, is never placed: its download starts over.
    @Test func partFileIsNeverPlaced() async throws {
        try await withTestServer { server in
            let temporary = try TemporaryDirectory()
            defer { temporary.remove() }
            let dir = try temporary.subdirectory("dir")
            let state = try temporary.subdirectory("state")
            let request = Support.request(server, "/file/c.bin", ["size": "1000", "seed": "43"], in: dir, name: "c.bin")
            let first = try await DownloadManager.open(stateDirectory: state, configuration: Support.fastConfiguration())
            let id = try await first.addNew([request], group: nil, paused: true)[0]
            await first.shutdown()
            let part = PartFile(directory: dir.path, key: PartKey(for: request).description)
            try Data(repeating: 7, count: 1_000).write(to: URL(fileURLWithPath: part.path))

            let second = try await DownloadManager.open(stateDirectory: state, configuration: Support.fastConfiguration())
            #expect(await second.snapshot(id)?.state == .paused)
            try await second.resume(id)
            let info = try await second.finished(id)
            await second.shutdown()
            #expect(info.state == .completed)
            #expect(Support.contents(dir.appendingPathComponent("c.bin")) == TestContent.bytes(seed: 43, size: 1_000))
            #expect(server.requests(forKey: "/file/c.bin").count == 1)
        }
    }
}
