import Foundation
@testable import Haul
import HaulTestServer
import HaulTestSupport
import NIOConcurrencyHelpers
import Testing

@Suite("Manager end to end", .timeLimit(.minutes(3)))
struct ManagerEndToEndTests {
    /// A group of many files completes with a summary, and never fetches more than the global
    /// limit at once (counted by the server: a download whose bytes are all here hands its
    /// slot over while its file is put in place).
    @Test func groupRespectsConcurrencyLimit() async throws {
        try await withTestServer { server in
            let temporary = try TemporaryDirectory()
            defer { temporary.remove() }
            let dir = temporary.url
            let requests = (0..<40).map { n in
                Support.request(
                    server, "/file/f\(n).bin", ["size": "\(1000 + n * 700)", "seed": "\(n)", "rate": "200000", "key": "batch"],
                    in: dir)
            }
            try await withDownloadManager(configuration: Support.fastConfiguration(maxConcurrent: 3)) { manager in
                let group = try await manager.add(requests, toGroup: "batch")
                let summary = try await group.completion
                #expect(summary.succeeded)
                #expect(summary.completed.count == 40)
                let peak = server.peakConcurrentResponses(forKey: "batch")
                #expect(peak <= 3)
                #expect(peak >= 2, "downloads must actually run concurrently")
                let progress = try await group.progress()
                #expect(progress.completedBytes == progress.expectedBytes)
            }
            for n in 0..<40 {
                #expect(Support.contents(dir.appendingPathComponent("f\(n).bin")) == TestContent.bytes(seed: UInt64(n), size: 1000 + n * 700))
            }
        }
    }

    /// Raising the concurrency limit of a running manager above what it started with lets every admitted download fetch at once: none waits in the HTTP client's pool for a connection until its connect timeout fails it.
    @Test func raisedConcurrencyIsNotCappedByTheConnectionPool() async throws {
        try await withTestServer { server in
            let temporary = try TemporaryDirectory()
            defer { temporary.remove() }
            let dir = temporary.url
            let count = 12
            // Each body takes about 6 s, twice the connect timeout, which is not shorter so that a
            // connection a loaded machine schedules late is not mistaken for one the pool held
            // back; and long enough for all twelve to overlap however late each starts.
            let requests = (0..<count).map { n in
                Support.request(server, "/file/raised\(n).bin", ["size": "\(200 << 10)", "seed": "\(n)", "rate": "\(32 << 10)", "key": "raised"], in: dir)
            }
            var configuration = Support.fastConfiguration(maxConcurrent: 1, retries: 0)
            configuration.connectTimeout = .seconds(3)
            try await withDownloadManager(configuration: configuration) { manager in
                try await manager.setMaxConcurrentDownloads(count)
                let group = try await manager.add(requests, toGroup: "raised")
                let summary = try await group.completion
                #expect(summary.failed.isEmpty, "\(summary.failed.map { $0.error?.message ?? "" })")
                #expect(summary.completed.count == count)
            }
            #expect(server.peakConcurrentResponses(forKey: "raised") == count)
        }
    }

    /// A group's summary lists what failed and why, beside what succeeded.
    @Test func groupSummaryReportsFailures() async throws {
        try await withTestServer { server in
            let temporary = try TemporaryDirectory()
            defer { temporary.remove() }
            let dir = temporary.url
            try await withDownloadManager(configuration: Support.fastConfiguration()) { manager in
                let group = try await manager.add([
                    Support.request(server, "/file/ok.bin", in: dir),
                    Support.request(server, "/file/gone", ["status": "410"], in: dir),
                ], toGroup: "mixed")
                let summary = try await group.completion
                #expect(summary.completed.map { $0.file?.url.lastPathComponent } == ["ok.bin"])
                #expect(summary.failed.first?.error?.httpStatus == 410)
                #expect(!summary.succeeded)
                #expect(await manager.existingGroup(named: "mixed") != nil)
            }
        }
    }

    /// Every subscriber gets every state event, in order: queued, started, completed.
    @Test func severalSubscribersSeeEveryEvent() async throws {
        try await withTestServer { server in
            let temporary = try TemporaryDirectory()
            defer { temporary.remove() }
            let dir = temporary.url
            try await withDownloadManager(configuration: Support.fastConfiguration()) { manager in
                let streams = [manager.managerEvents(), manager.managerEvents()]
                let id = try await manager.enqueue(Support.request(server, "/file/e.bin", in: dir))
                for stream in streams {
                    var kinds: [String] = []
                    for await event in stream {
                        switch event {
                        case .queued(id): kinds.append("queued")
                        case .started(id, _, _): kinds.append("started")
                        case .completed(let info) where info.id == id: kinds.append("completed")
                        default: break
                        }
                        if kinds.last == "completed" { break }
                    }
                    #expect(kinds == ["queued", "started", "completed"])
                }
            }
        }
    }

    /// Redirects are followed and the final URL recorded; loops, too many hops and other schemes fail clearly.
    @Test func redirects() async throws {
        try await withTestServer { server in
            let temporary = try TemporaryDirectory()
            defer { temporary.remove() }
            let dir = temporary.url
            let target = server.url("/file/target.bin", ["size": "1234"])
            let ok = try await Support.downloadOne(Support.request(server, "/redirect", ["n": "3", "to": target], in: dir, name: "r.bin"))
            #expect(ok.state == .completed)
            #expect(ok.finalURL?.absoluteString == target)
            #expect(Support.contents(dir.appendingPathComponent("r.bin"))?.count == 1234)

            let loop = try await Support.downloadOne(Support.request(server, "/loop", in: dir))
            #expect(loop.error?.code == .redirectLoop)
            let long = try await Support.downloadOne(Support.request(server, "/redirect", ["n": "15", "to": target], in: dir))
            #expect(long.error?.code == .tooManyRedirects)
            for location in ["ftp://example.invalid/x", "file:///etc/passwd"] {
                let other = try await Support.downloadOne(Support.request(server, "/redirect-to", ["location": location], in: dir))
                #expect(other.error?.code == .unsupportedRedirect)
            }
            #expect(Support.listing(dir) == ["r.bin"])
        }
    }

    /// Hostile Content-Disposition names never escape the directory; a useless one falls back to the URL's name.
    @Test(arguments: [
        ("attachment; filename=\"../../escape.txt\"", "escape.txt"),
        ("attachment; filename=\"/etc/passwd\"", "passwd"),
        ("attachment; filename*=UTF-8''%2e%2e%2fevil.sh", "evil.sh"),
        ("attachment; filename*=UTF-8''a%07b%1Bc%0A.txt", "abc.txt"),
        ("attachment; filename=\"..\"", "cd.bin"),
        ("attachment; filename=\"\"", "cd.bin"),
    ])
    func hostileContentDisposition(header: String, expected: String) async throws {
        try await withTestServer { server in
            let temporary = try TemporaryDirectory()
            defer { temporary.remove() }
            let parent = temporary.url
            let dir = parent.appendingPathComponent("inside")
            try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: false)
            let info = try await Support.downloadOne(Support.request(server, "/file/cd.bin", ["disposition": header], in: dir))
            #expect(info.state == .completed)
            #expect(Support.listing(dir) == [expected])
            #expect(Support.listing(parent) == ["inside"])
        }
    }

    /// Conflict policies: rename numbers the new file, skip and fail leave the old one, overwrite replaces it.
    @Test func conflictPolicies() async throws {
        try await withTestServer { server in
            let temporary = try TemporaryDirectory()
            defer { temporary.remove() }
            let dir = temporary.url
            let existing = dir.appendingPathComponent("x.bin")
            _ = FileManager.default.createFile(atPath: existing.path, contents: Data("old".utf8))
            let query = ["size": "100", "seed": "5"]
            let fresh = TestContent.bytes(seed: 5, size: 100)

            let renamed = try await Support.downloadOne(Support.request(server, "/file/x.bin", query, in: dir))
            #expect(renamed.fileURL?.lastPathComponent == "x (1).bin")
            let skipped = try await Support.downloadOne(Support.request(server, "/file/x.bin", query, in: dir, name: "x.bin", policy: .skip))
            #expect(skipped.state == .completed)
            #expect(skipped.skipped)
            let failed = try await Support.downloadOne(Support.request(server, "/file/x.bin", query, in: dir, name: "x.bin", policy: .fail))
            #expect(failed.error?.code == .fileExists)
            #expect(Support.contents(existing) == Array("old".utf8))
            let replaced = try await Support.downloadOne(Support.request(server, "/file/x.bin", query, in: dir, policy: .overwrite))
            #expect(replaced.fileURL?.lastPathComponent == "x.bin")
            #expect(Support.contents(existing) == fresh)
            #expect(Support.leftovers(dir).isEmpty)
        }
    }

    /// The same URL added twice is two downloads with two IDs and two files.
    @Test func sameURLTwice() async throws {
        try await withTestServer { server in
            let temporary = try TemporaryDirectory()
            defer { temporary.remove() }
            let dir = temporary.url
            try await withDownloadManager(configuration: Support.fastConfiguration()) { manager in
                let request = Support.request(server, "/file/twice.bin", ["size": "50000", "rate": "500000"], in: dir)
                let group = try await manager.add([request, request], toGroup: "twice")
                let summary = try await group.completion
                #expect(summary.completed.count == 2)
                #expect(Set(summary.completed.map(\.id)).count == 2)
            }
            #expect(Support.listing(dir) == ["twice (1).bin", "twice.bin"])
        }
    }

    /// Pause keeps the part; resume continues with a range request; the result is exact.
    @Test func pauseAndResume() async throws {
        try await withTestServer { server in
            let temporary = try TemporaryDirectory()
            defer { temporary.remove() }
            let dir = temporary.url
            let size = 300_000
            try await withDownloadManager(configuration: Support.fastConfiguration()) { manager in
                let events = manager.managerEvents()
                // Held at half the file until released: the pause always finds it running.
                let query = ["size": "\(size)", "seed": "9", "rate": "600000", "hold": "150000"]
                let id = try await manager.enqueue(Support.request(server, "/file/p.bin", query, in: dir))
                _ = try await firstMatch(in: events, "more than 50,000 bytes") { event -> Bool? in
                    if case .progress(id, let progress) = event, progress.completedBytes > 50_000 { return true }
                    return nil
                }
                try await manager.pause(id)
                #expect(await manager.snapshot(id)?.state == .paused)
                #expect(Support.leftovers(dir).contains { $0.hasSuffix(".part") })
                await #expect(throws: HaulError.self) { try await manager.cancel(DownloadID(rawValue: 1)) }
                server.release(key: "/file/p.bin")
                try await manager.resume(id)
                let info = try await manager.finished(id)
                #expect(info.state == .completed)
            }
            #expect(Support.contents(dir.appendingPathComponent("p.bin")) == TestContent.bytes(seed: 9, size: size))
            #expect(server.requests(forKey: "/file/p.bin").last?.header("range") != nil)
        }
    }

    /// Cancel stops a running download, deletes its part file and reports canceled; resuming it is refused.
    @Test func cancelDeletesPart() async throws {
        try await withTestServer { server in
            let temporary = try TemporaryDirectory()
            defer { temporary.remove() }
            let dir = temporary.url
            try await withDownloadManager(configuration: Support.fastConfiguration()) { manager in
                let events = manager.managerEvents()
                let id = try await manager.enqueue(Support.request(server, "/file/c.bin", ["size": "1000000", "rate": "300000"], in: dir))
                _ = try await firstMatch(in: events, "the first bytes") { event -> Bool? in
                    if case .progress(id, let progress) = event, progress.completedBytes > 0 { return true }
                    return nil
                }
                try await manager.cancel(id)
                #expect(await manager.snapshot(id)?.state == .canceled)
                await #expect(throws: HaulError.self) { try await manager.resume(id) }
            }
            #expect(Support.listing(dir).isEmpty)
        }
    }

    /// Bad requests are refused before anything is queued or written.
    @Test func validation() async throws {
        let temporary = try TemporaryDirectory()
        defer { temporary.remove() }
        let dir = temporary.url
        let manager = DownloadManager(configuration: Support.fastConfiguration())
        func code(_ request: DownloadRequest) async -> HaulError.Code? {
            do { _ = try await manager.enqueue(request); return nil } catch { return error.code }
        }
        let url = URL(string: "http://127.0.0.1:1/x")!
        #expect(await code(DownloadRequest(url: URL(string: "ftp://h/x")!, directory: dir)) == .unsupportedScheme)
        #expect(await code(DownloadRequest(url: URL(string: "file:///etc/passwd")!, directory: dir)) == .unsupportedScheme)
        #expect(await code(DownloadRequest(url: URL(string: "http:///nohost")!, directory: dir)) == .invalidURL)
        #expect(await code(DownloadRequest(url: url, directory: dir.appendingPathComponent("missing"))) == .directoryNotFound)
        #expect(await code(DownloadRequest(url: url, directory: dir, fileName: "../x")) == .invalidFileName)
        #expect(await code(DownloadRequest(url: url, directory: dir, headers: [HeaderField(name: "Bad Name", value: "v")])) == .invalidRequest)
        #expect(await manager.downloads().isEmpty)
        await manager.shutdown()
        #expect(await code(DownloadRequest(url: url, directory: dir)) == .shutdown)
        #expect(Support.listing(dir).isEmpty)
    }

    /// A body of unknown length (chunked) downloads fine, with no expected total while it runs.
    @Test func unknownLength() async throws {
        try await withTestServer { server in
            let temporary = try TemporaryDirectory()
            defer { temporary.remove() }
            let dir = temporary.url
            let info = try await Support.downloadOne(Support.request(server, "/file/ch.bin", ["size": "70000", "seed": "2", "chunked": "1"], in: dir))
            #expect(info.state == .completed)
            #expect(Support.contents(dir.appendingPathComponent("ch.bin")) == TestContent.bytes(seed: 2, size: 70_000))
        }
    }
}

@Suite("Manager shutdown", .timeLimit(.minutes(3)))
struct ManagerShutdownTests {
    /// Shutdown answers everyone awaiting a group or a download, listing what did not finish, and keeps the part files.
    @Test func shutdownReleasesWaiters() async throws {
        try await withTestServer { server in
            let temporary = try TemporaryDirectory()
            defer { temporary.remove() }
            let dir = temporary.url
            let manager = DownloadManager(configuration: Support.fastConfiguration())
            let events = manager.managerEvents()
            let group = try await manager.add([Support.request(server, "/file/slow.bin", ["size": "2000000", "rate": "200000"], in: dir)], toGroup: "g")
            let id = try #require(await group.downloads().first?.id)
            async let summary = manager.groupCompletion(group.name)
            async let single = manager.finished(id)
            _ = try await firstMatch(in: events, "the first bytes") { event -> Bool? in
                if case .progress(id, let progress) = event, progress.completedBytes > 0 { return true }
                return nil
            }
            await manager.shutdown()
            let (groupResult, info) = try await (summary, single)
            #expect(groupResult.unfinished == [id])
            #expect(!groupResult.succeeded)
            #expect(info.state == .paused)
            #expect(Support.leftovers(dir).contains { $0.hasSuffix(".part") })
        }
    }

    /// A refused connection fails at once (no long connect wait) when retries are off.
    @Test func refusedConnectionFailsFast() async throws {
        let temporary = try TemporaryDirectory()
        defer { temporary.remove() }
        let dir = temporary.url
        // Port 9 (discard) is not served on this machine's loopback.
        let request = DownloadRequest(url: URL(string: "http://127.0.0.1:9/x")!, directory: dir)
        let clock = ContinuousClock()
        let start = clock.now
        var configuration = Support.fastConfiguration(retries: 0)
        configuration.connectTimeout = .seconds(60)
        let info = try await Support.downloadOne(request, configuration: configuration)
        #expect(info.error?.code == .connectionFailed)
        // Waiting out the connect timeout would take 60 s; the margin below it is for a loaded
        // machine, where this test took 34 s in a full run.
        #expect(clock.now - start < .seconds(55), "the 60 s connect timeout must not be waited out")
    }
}
