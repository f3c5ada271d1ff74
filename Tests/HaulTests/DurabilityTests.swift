import Foundation
@testable import Haul
import HaulTestServer
import HaulTestSupport
import NIOConcurrencyHelpers
import Testing

@Suite("Durability", .timeLimit(.minutes(3)))
struct DurabilityTests {
    /// A full disk pauses the download with a diskFull reason, keeps its durable bytes, and a resume later completes it exactly.
    @Test func diskFullPausesAndResumes() async throws {
        try await withTestServer { server in
            let temporary = try TemporaryDirectory()
            defer { temporary.remove() }
            let dir = temporary.url
            let size = 300_000
            let diskIsFull = NIOLockedValueBox(true)
            var configuration = Support.fastConfiguration(checkpointBytes: 32 * 1024)
            configuration.writeFault = WriteFault { offset in
                offset >= 100_000 && diskIsFull.withLockedValue { $0 } ? HaulError(.diskFull, "No space left on device") : nil
            }
            try await withDownloadManager(configuration: configuration) { manager in
                let events = manager.managerEvents()
                let id = try await manager.enqueue(Support.request(server, "/file/full.bin", ["size": "\(size)", "seed": "4"], in: dir))
                let reason = try await firstMatch(in: events, "the download to pause") { event -> HaulError? in
                    if case .paused(id, let reason?) = event { return reason }
                    return nil
                }
                #expect(reason.code == .diskFull)
                let info = try #require(await manager.snapshot(id))
                #expect(info.state == .paused)
                #expect(info.error?.code == .diskFull)
                #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent("full.bin").path), "no truncated final file")
                #expect(Support.leftovers(dir).count == 1, "the part file is kept")

                diskIsFull.withLockedValue { $0 = false }
                try await manager.resume(id)
                let finished = try await manager.finished(id)
                #expect(finished.state == .completed)
            }
            #expect(Support.contents(dir.appendingPathComponent("full.bin")) == TestContent.bytes(seed: 4, size: size))
            #expect(server.requests(forKey: "/file/full.bin").last?.header("range") != nil, "the resume continued from the kept bytes")
        }
    }

    /// A restarted manager finds its downloads and groups again, and continues queued ones in order.
    @Test func restartFindsDownloadsAndGroups() async throws {
        try await withTestServer { server in
            let temporary = try TemporaryDirectory()
            defer { temporary.remove() }
            let dir = try temporary.subdirectory("dir")
            let state = try temporary.subdirectory("state")
            let requests = (0..<5).map { Support.request(server, "/file/q\($0).bin", ["size": "20000", "seed": "\($0)"], in: dir) }
            var ids: [DownloadID] = []
            // One slot, held by a slow download, so the group stays queued until it is paused.
            let configuration = Support.fastConfiguration(maxConcurrent: 1)
            try await withDownloadManager(stateDirectory: state, configuration: configuration) { manager in
                let blocker = try await manager.enqueue(Support.request(server, "/file/slow.bin", ["size": "5000000", "rate": "100000"], in: dir))
                let group = try await manager.add(requests, toGroup: "batch")
                ids = try await group.downloads().map(\.id)
                for id in ids { try await manager.pause(id) }
                try await manager.cancel(blocker)
            }
            try await withDownloadManager(stateDirectory: state, configuration: configuration) { manager in
                let group = try await manager.group(named: "batch")
                #expect(try await group.downloads().map(\.id) == ids)
                #expect(try await group.downloads().allSatisfy { $0.state == .paused })
                for id in ids { try await manager.resume(id) }
                let summary = try await group.completion
                #expect(summary.completed.map(\.id).sorted() == ids.sorted())
            }
            for n in 0..<5 {
                #expect(Support.contents(dir.appendingPathComponent("q\(n).bin")) == TestContent.bytes(seed: UInt64(n), size: 20_000))
            }
        }
    }

    /// A download whose part was renamed into place just before a crash is recognised as completed, not fetched again.
    @Test func crashAfterRenameIsCompleted() async throws {
        try await withTestServer { server in
            let temporary = try TemporaryDirectory()
            defer { temporary.remove() }
            let dir = try temporary.subdirectory("dir")
            let state = try temporary.subdirectory("state")
            let request = Support.request(server, "/file/placed.bin", ["size": "1000"], in: dir)
            let final = dir.appendingPathComponent("placed.bin")
            _ = FileManager.default.createFile(atPath: final.path, contents: Data(TestContent.bytes(seed: 0, size: 1000)))
            let found = try #require(SystemCalls.describe(final.path))
            let store = try DownloadStore.open(directory: state)
            let id = DownloadID(rawValue: 42)
            try await store.save([StoredDownload(
                id: id, session: "default", group: "g", position: 1, kept: KeptRequest(request),
                partKey: PartKey(for: request).description, state: .running, finalURL: nil,
                validator: .etag("\"x\""), expectedLength: 1000, durableOffset: 0,
                placement: PlacementIntent(directory: dir.path, name: "placed.bin", policy: .rename,
                                           device: found.identity.device, inode: found.identity.inode, length: 1000),
                filePath: nil, fileSize: nil, fileModified: nil, skipped: false, verifiedChecksums: [],
                error: nil, attempts: 1, createdAt: Date(), updatedAt: Date())])
            try await withDownloadManager(stateDirectory: state, configuration: Support.fastConfiguration()) { manager in
                let info = try #require(await manager.snapshot(id))
                #expect(info.state == .completed)
                #expect(info.fileURL?.path == final.path)
                #expect(try await manager.group(named: "g").completion.succeeded == true)
            }
            #expect(server.requests(forKey: "/file/placed.bin").isEmpty)
            #expect(Support.listing(dir) == ["placed.bin"])
        }
    }

    /// Adding the same requests again continues unfinished ones, does not fetch completed ones again, and re-fetches (replacing its record) a completed one whose file was deleted.
    @Test func addingAgainContinuesInsteadOfDuplicating() async throws {
        try await withTestServer { server in
            let temporary = try TemporaryDirectory()
            defer { temporary.remove() }
            let dir = try temporary.subdirectory("dir")
            let state = try temporary.subdirectory("state")
            let a = Support.request(server, "/file/a.bin", ["size": "3000", "seed": "1"], in: dir)
            let b = Support.request(server, "/file/b.bin", ["size": "3000", "seed": "2"], in: dir)
            try await withDownloadManager(stateDirectory: state, configuration: Support.fastConfiguration()) { manager in
                let summary = try await (try await manager.add([a, b], toGroup: "run1", continuingExisting: true)).completion
                #expect(summary.completed.count == 2)
            }
            try FileManager.default.removeItem(at: dir.appendingPathComponent("b.bin"))
            try await withDownloadManager(stateDirectory: state, configuration: Support.fastConfiguration()) { manager in
                let summary = try await (try await manager.add([a, b], toGroup: "run2", continuingExisting: true)).completion
                #expect(summary.completed.count == 2)
                let all = await manager.downloads()
                #expect(all.count == 2, "a was reused; b was downloaded again, replacing its spent record")
                #expect(all.allSatisfy { $0.group == "run2" && $0.state == .completed })
            }
            #expect(server.requests(forKey: "/file/a.bin").count == 1)
            #expect(server.requests(forKey: "/file/b.bin").count == 2)
            #expect(Support.listing(dir) == ["a.bin", "b.bin"])
        }
    }

    /// Remove forgets a download and deletes its part; with deletingFile, a completed download's file goes too.
    @Test func removeDeletesPartsAndOptionallyTheFile() async throws {
        try await withTestServer { server in
            let temporary = try TemporaryDirectory()
            defer { temporary.remove() }
            let dir = try temporary.subdirectory("dir")
            let state = try temporary.subdirectory("state")
            try await withDownloadManager(stateDirectory: state, configuration: Support.fastConfiguration()) { manager in
                let done = try await manager.enqueue(Support.request(server, "/file/done.bin", ["size": "2000"], in: dir))
                _ = try await manager.finished(done)
                let slow = try await manager.enqueue(Support.request(server, "/file/slow.bin", ["size": "5000000", "rate": "200000"], in: dir))
                try await manager.pause(slow)
                try await manager.remove(slow)
                try await manager.remove(done, deletingFile: true)
                #expect(await manager.downloads().isEmpty)
                await #expect(throws: HaulError.self) { try await manager.remove(done) }
            }
            #expect(Support.listing(dir).isEmpty)
            try await withDownloadManager(stateDirectory: state, configuration: Support.fastConfiguration()) { manager in
                #expect(await manager.downloads().isEmpty, "removal is durable")
            }
        }
    }
}

@Suite("Durability: whole parts", .timeLimit(.minutes(3)))
struct WholePartTests {
    /// A download whose every byte is on disk but whose placement failed fetches only the last byte again when resumed, not the whole file.
    @Test func resumingACompletePartRefetchesOneByte() async throws {
        try await withTestServer { server in
            let temporary = try TemporaryDirectory()
            defer { temporary.remove() }
            let dir = temporary.url
            let size = 50_000
            let taken = dir.appendingPathComponent("x.bin")
            _ = FileManager.default.createFile(atPath: taken.path, contents: Data("taken".utf8))
            try await withDownloadManager(configuration: Support.fastConfiguration()) { manager in
                // Held at half the file until the name is taken, so the name is taken before placement.
                let query = ["size": "\(size)", "seed": "8", "rate": "100000", "hold": "25000"]
                let request = Support.request(server, "/file/x.bin", query, in: dir, name: "x.bin", policy: .fail)
                // The name is taken only after the bytes arrived: skip the up-front check.
                try FileManager.default.removeItem(at: taken)
                let events = manager.managerEvents()
                let id = try await manager.enqueue(request)
                _ = try await firstMatch(in: events, "the download to start") { event -> Bool? in
                    if case .started(id, _, _) = event { return true }
                    return nil
                }
                _ = FileManager.default.createFile(atPath: taken.path, contents: Data("taken".utf8))
                server.release(key: "/file/x.bin")
                let failed = try await manager.finished(id)
                try #require(failed.state == .failed)
                #expect(failed.error?.code == .fileExists)
                try FileManager.default.removeItem(at: taken)
                try await manager.resume(id)
                let resumed = try await manager.finished(id)
                #expect(resumed.state == .completed)
                let requests = server.requests(forKey: "/file/x.bin")
                #expect(requests.map(\.status) == [200, 206])
                #expect(requests.last?.header("range") == "bytes=\(size - 1)-")
            }
            #expect(Support.contents(taken) == TestContent.bytes(seed: 8, size: size))
        }
    }

    /// While the last byte of a whole part is asked again, the part keeps every byte: the store records the whole length as durable, so a crash before the byte comes back must not leave a shorter part (recovery would throw it away and fetch the whole file again). The download then completes from that byte.
    @Test func revalidatingAWholePartKeepsItWhole() async throws {
        try await withTestServer { server in
            let temporary = try TemporaryDirectory()
            defer { temporary.remove() }
            let dir = try temporary.subdirectory("dir")
            let state = try temporary.subdirectory("state")
            let size = 50_000
            let bytes = TestContent.bytes(seed: 9, size: size)
            // The first answer sends its headers, then nothing until the download stops it.
            let query = ["size": "\(size)", "seed": "9", "drop": "0", "dropTimes": "1", "stall": "10"]
            let request = Support.request(server, "/file/whole.bin", query, in: dir, name: "whole.bin")
            let key = PartKey(for: request).description
            let part = PartFile(directory: dir.path, key: key)
            _ = FileManager.default.createFile(atPath: part.path, contents: Data(bytes))
            // What a process killed between its checkpoint at the whole length and the rename
            // leaves; paused, so that it starts only once this test listens to its events.
            let id = DownloadID(rawValue: 1)
            let store = try DownloadStore.open(directory: state)
            try await store.save([StoredDownload(
                id: id, session: "default", group: nil, position: 1, kept: KeptRequest(request), partKey: key,
                state: .paused, finalURL: nil, validator: .etag("\"s9-v0-\(size)\""), expectedLength: Int64(size),
                durableOffset: Int64(size), placement: nil, filePath: nil, fileSize: nil, fileModified: nil,
                skipped: false, verifiedChecksums: [], error: nil, attempts: 1, createdAt: Date(), updatedAt: Date())])
            try await withDownloadManager(stateDirectory: state, configuration: Support.fastConfiguration()) { manager in
                let events = manager.managerEvents()
                try await manager.resume(id)
                let resumedFrom = try await firstMatch(in: events, "the download to start") { event -> Int64? in
                    if case .started(id, let offset, _) = event { return offset }
                    return nil
                }
                #expect(resumedFrom == Int64(size - 1))
                // The last byte's response has begun and its body is held back by the server:
                // a kill now leaves this part to the next process.
                #expect(part.existingSize() == Int64(size))
                try await manager.pause(id)
                try await manager.resume(id)
                let info = try await manager.finished(id)
                #expect(info.state == .completed)
            }
            #expect(Support.contents(dir.appendingPathComponent("whole.bin")) == bytes)
            let requests = server.requests(forKey: "/file/whole.bin")
            #expect(requests.map(\.status) == [206, 206])
            #expect(requests.allSatisfy { $0.header("range") == "bytes=\(size - 1)-" })
        }
    }
}
