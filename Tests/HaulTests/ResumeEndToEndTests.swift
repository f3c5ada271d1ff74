import Foundation
@testable import Haul
import HaulTestServer
import HaulTestSupport
import Testing

@Suite("Resume end to end", .timeLimit(.minutes(3)))
struct ResumeEndToEndTests {
    /// A connection dropped on every response is resumed with Range + If-Range until the file is whole.
    @Test func droppedConnectionsResumeFromBytesOnDisk() async throws {
        try await withTestServer { server in
            let temporary = try TemporaryDirectory()
            defer { temporary.remove() }
            let dir = temporary.url
            let query = ["size": "200000", "seed": "11", "drop": "60000"]
            let info = try await Support.downloadOne(Support.request(server, "/file/d.bin", query, in: dir))
            #expect(info.state == .completed)
            #expect(Support.contents(dir.appendingPathComponent("d.bin")) == TestContent.bytes(seed: 11, size: 200_000))
            // An abrupt close can discard bytes in flight, so offsets are not exact multiples of
            // the drop size; they must only grow, each resuming where the last one ended.
            let requests = server.requests(forKey: "/file/d.bin")
            #expect(requests.count >= 4)
            #expect(requests.first?.header("range") == nil)
            let offsets = requests.dropFirst().compactMap { $0.header("range") }.compactMap { Int($0.dropFirst(6).dropLast()) }
            #expect(offsets.count == requests.count - 1)
            #expect(offsets == offsets.sorted() && Set(offsets).count == offsets.count)
            #expect(requests.dropFirst().allSatisfy { $0.header("if-range") != nil })
            #expect(requests.dropFirst().allSatisfy { $0.status == 206 })
        }
    }

    /// When the file changes between a drop and the retry, the result is the new file, never old bytes followed by new.
    @Test func changedFileIsNeverSpliced() async throws {
        try await withTestServer { server in
            let temporary = try TemporaryDirectory()
            defer { temporary.remove() }
            let dir = temporary.url
            let query = ["size": "200000", "seed": "20", "drop": "70000", "dropTimes": "1", "changeAfter": "1"]
            let info = try await Support.downloadOne(Support.request(server, "/file/s.bin", query, in: dir))
            #expect(info.state == .completed)
            let requests = server.requests(forKey: "/file/s.bin")
            #expect(requests.count == 2)
            #expect(requests[1].header("range")?.hasPrefix("bytes=") == true)
            #expect(requests[1].status == 200, "If-Range with the old ETag must get the whole new file")
            #expect(Support.contents(dir.appendingPathComponent("s.bin")) == TestContent.bytes(seed: 21, size: 200_000))
        }
    }

    /// The same holds when the only validator is Last-Modified.
    @Test func changedFileWithLastModifiedOnly() async throws {
        try await withTestServer { server in
            let temporary = try TemporaryDirectory()
            defer { temporary.remove() }
            let dir = temporary.url
            let query = ["size": "150000", "seed": "30", "etag": "none", "drop": "50000", "dropTimes": "1", "changeAfter": "1"]
            let info = try await Support.downloadOne(Support.request(server, "/file/lm.bin", query, in: dir))
            #expect(info.state == .completed)
            let requests = server.requests(forKey: "/file/lm.bin")
            #expect(requests[1].header("if-range")?.hasSuffix("GMT") == true)
            #expect(Support.contents(dir.appendingPathComponent("lm.bin")) == TestContent.bytes(seed: 31, size: 150_000))
        }
    }

    /// A server that ignores ranges answers 200, and the download restarts from zero instead of appending.
    @Test func ignoredRangeRestartsFromZero() async throws {
        try await withTestServer { server in
            let temporary = try TemporaryDirectory()
            defer { temporary.remove() }
            let dir = temporary.url
            let query = ["size": "120000", "seed": "40", "ranges": "0", "drop": "50000", "dropTimes": "1"]
            let info = try await Support.downloadOne(Support.request(server, "/file/nr.bin", query, in: dir))
            #expect(info.state == .completed)
            let requests = server.requests(forKey: "/file/nr.bin")
            #expect(requests.count == 2)
            #expect(requests[1].status == 200)
            #expect(Support.contents(dir.appendingPathComponent("nr.bin")) == TestContent.bytes(seed: 40, size: 120_000))
        }
    }

    /// With only a weak ETag, or a content coding, a retry does not even ask for a range.
    @Test(arguments: [["etag": "weak", "lm": "0"], ["gzip": "1"], ["etag": "none", "lm": "0"]])
    func unresumableResponsesRestart(extra: [String: String]) async throws {
        try await withTestServer { server in
            let temporary = try TemporaryDirectory()
            defer { temporary.remove() }
            let dir = temporary.url
            var query = ["size": "100000", "seed": "50", "drop": "30000", "dropTimes": "1"]
            query.merge(extra) { $1 }
            let info = try await Support.downloadOne(Support.request(server, "/file/w.bin", query, in: dir))
            #expect(info.state == .completed)
            let requests = server.requests(forKey: "/file/w.bin")
            #expect(requests.count == 2)
            #expect(requests.allSatisfy { $0.header("range") == nil })
            if extra["gzip"] == nil {
                #expect(Support.contents(dir.appendingPathComponent("w.bin")) == TestContent.bytes(seed: 50, size: 100_000))
            }
        }
    }

    /// A new manager (as after a restart) continues from the recorded offset and still verifies the checksum.
    @Test func newManagerContinuesFromCheckpoint() async throws {
        try await withTestServer { server in
            let temporary = try TemporaryDirectory()
            defer { temporary.remove() }
            let dir = try temporary.subdirectory("dir")
            let size = 400_000
            let bytes = TestContent.bytes(seed: 60, size: size)
            let sha = try Checksum(.sha256, hex: Support.sha256(bytes))
            // Held at half the file until the first "process" is gone: it never completes there.
            let query = ["size": "\(size)", "seed": "60", "rate": "400000", "hold": "200000"]
            let request = Support.request(server, "/file/big.bin", query, in: dir, checksums: [sha])

            let state = try temporary.subdirectory("state")
            // First "process": stop after some bytes are on disk.
            try await withDownloadManager(stateDirectory: state, configuration: Support.fastConfiguration(checkpointBytes: 32 * 1024)) { manager in
                let events = manager.managerEvents()
                let id = try await manager.enqueue(request)
                _ = try await firstMatch(in: events, "100,000 bytes") { event -> Bool? in
                    if case .progress(id, let progress) = event, progress.completedBytes >= 100_000 { return true }
                    return nil
                }
            }
            #expect(Support.leftovers(dir).count == 1, "the part file is kept")
            #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent("big.bin").path))
            server.release(key: "/file/big.bin")

            // Second "process": the paused download is found again and continues when resumed.
            try await withDownloadManager(stateDirectory: state, configuration: Support.fastConfiguration()) { manager in
                let events = manager.managerEvents()
                let found = await manager.downloads()
                #expect(found.count == 1)
                #expect(found.first?.state == .paused)
                let id = try #require(found.first?.id)
                try await manager.resume(id)
                let resumedFrom = try await firstMatch(in: events, "the download to start again") { event -> Int64? in
                    if case .started(id, let offset, _) = event { return offset }
                    return nil
                }
                #expect(resumedFrom >= 100_000)
                let info = try await manager.finished(id)
                #expect(info.state == .completed)
                #expect(info.verifiedChecksums.contains(sha))
            }
            #expect(Support.contents(dir.appendingPathComponent("big.bin")) == bytes)
            #expect(Support.leftovers(dir).isEmpty)
        }
    }

    /// Bytes past the recorded durable offset are cut off before resuming, and a part whose
    /// record claims the whole file fetches only its last byte again.
    @Test func recoveryTrustsOnlyTheRecordedOffset() async throws {
        try await withTestServer { server in
            let temporary = try TemporaryDirectory()
            defer { temporary.remove() }
            let dir = try temporary.subdirectory("dir")
            let state = try temporary.subdirectory("state")
            let size = 50_000
            let bytes = TestContent.bytes(seed: 70, size: size)
            let store = try DownloadStore.open(directory: state)
            var ids: [DownloadID] = []
            for (index, (name, recorded, garbage)) in [("t1.bin", 20_000, 5_000), ("t2.bin", size, 0)].enumerated() {
                let request = Support.request(server, "/file/\(name)", ["size": "\(size)", "seed": "70"], in: dir)
                let key = PartKey(for: request).description
                let part = PartFile(directory: dir.path, key: key)
                let onDisk = Array(bytes[0..<recorded]) + [UInt8](repeating: 0xEE, count: garbage)
                _ = FileManager.default.createFile(atPath: part.path, contents: Data(onDisk))
                let id = DownloadID(rawValue: UInt64(index + 1))
                ids.append(id)
                try await store.save([StoredDownload(
                    id: id, session: "default", group: nil, position: Int64(index + 1), kept: KeptRequest(request), partKey: key,
                    state: .running, finalURL: nil, validator: .etag("\"s70-v0-\(size)\""), expectedLength: Int64(size),
                    durableOffset: Int64(recorded), placement: nil, filePath: nil, fileSize: nil, fileModified: nil,
                    skipped: false, verifiedChecksums: [], error: nil, attempts: 1, createdAt: Date(), updatedAt: Date())])
            }
            try await withDownloadManager(stateDirectory: state, configuration: Support.fastConfiguration()) { manager in
                for id in ids {
                    let info = try await manager.finished(id)
                    #expect(info.state == .completed)
                }
            }
            #expect(Support.contents(dir.appendingPathComponent("t1.bin")) == bytes)
            #expect(Support.contents(dir.appendingPathComponent("t2.bin")) == bytes)
            #expect(server.requests(forKey: "/file/t1.bin").first?.header("range") == "bytes=20000-")
            #expect(server.requests(forKey: "/file/t2.bin").map(\.status) == [206])
            #expect(server.requests(forKey: "/file/t2.bin").first?.header("range") == "bytes=\(size - 1)-")
            #expect(Support.leftovers(dir).isEmpty)
        }
    }

    /// A part file shorter than its recorded offset is recorded as lost when the store is opened, before any transfer writes that file again: a crash during the new transfer then never leaves the old offset and validator standing for bytes that were never flushed.
    @Test func recoveryRecordsALostPartBeforeFetchingAgain() async throws {
        try await withTestServer { server in
            let temporary = try TemporaryDirectory()
            defer { temporary.remove() }
            let dir = try temporary.subdirectory("dir")
            let state = try temporary.subdirectory("state")
            let size = 50_000
            let bytes = TestContent.bytes(seed: 71, size: size)
            let request = Support.request(server, "/file/short.bin", ["size": "\(size)", "seed": "71"], in: dir)
            let key = PartKey(for: request).description
            let part = PartFile(directory: dir.path, key: key)
            _ = FileManager.default.createFile(atPath: part.path, contents: Data(bytes[0..<5_000]))
            let id = DownloadID(rawValue: 1)
            let store = try DownloadStore.open(directory: state)
            // Paused, so that nothing but opening the store writes it before the check.
            try await store.save([StoredDownload(
                id: id, session: "default", group: nil, position: 1, kept: KeptRequest(request), partKey: key,
                state: .paused, finalURL: nil, validator: .etag("\"s71-v0-\(size)\""), expectedLength: Int64(size),
                durableOffset: 20_000, placement: nil, filePath: nil, fileSize: nil, fileModified: nil,
                skipped: false, verifiedChecksums: [], error: nil, attempts: 1, createdAt: Date(), updatedAt: Date())])
            try await withDownloadManager(stateDirectory: state, configuration: Support.fastConfiguration()) { manager in
                let row = try await store.loadAll(session: "default").first { $0.id == id }
                #expect(row?.durableOffset == 0)
                #expect(row?.validator == nil)
                try await manager.resume(id)
                let info = try await manager.finished(id)
                #expect(info.state == .completed)
            }
            #expect(Support.contents(dir.appendingPathComponent("short.bin")) == bytes)
            #expect(server.requests(forKey: "/file/short.bin").map { $0.header("range") } == [nil])
        }
    }

    /// A server that announces more bytes than it sends is retried, then fails; no file appears under the final name.
    @Test func lyingLengthFails() async throws {
        try await withTestServer { server in
            let temporary = try TemporaryDirectory()
            defer { temporary.remove() }
            let dir = temporary.url
            let info = try await Support.downloadOne(
                Support.request(server, "/file/lie.bin", ["size": "10000", "lengthDelta": "500"], in: dir),
                configuration: Support.fastConfiguration(retries: 2))
            #expect(info.state == .failed)
            #expect([.connectionFailed, .lengthMismatch].contains(info.error?.code))
            #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent("lie.bin").path))
        }
    }
}
