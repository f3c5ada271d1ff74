import Foundation
@testable import Haul
import HaulTestServer
import HaulTestSupport
import Testing

@Suite("Segmented downloads across restarts", .timeLimit(.minutes(2)))
struct SegmentResumeTests {
    static let size = 2 << 20
    /// Per connection: four connections take about a second for the file.
    static let rate = 512 << 10

    /// Runs a first manager on `state` until the download has `bytes` on disk, then shuts it
    /// down (which stops the transfer with a last checkpoint). Returns the download's ID.
    static func runUntil(_ bytes: Int64, request: DownloadRequest, state: URL) async throws -> DownloadID {
        try await withDownloadManager(stateDirectory: state, configuration: SegmentedDownloadTests.configuration()) { manager in
            let events = manager.managerEvents()
            let id = try await manager.enqueue(request)
            _ = try await firstMatch(in: events, "\(bytes) bytes") { event -> Bool? in
                if case .progress(id, let progress) = event, progress.completedBytes >= bytes { return true }
                return nil
            }
            return id
        }
    }

    /// A request for a throttled file of `size` bytes with its sha256 to verify, its bytes and that checksum.
    static func throttledFile(
        _ server: TestServer, _ key: String, seed: UInt64, in dir: URL, extra: [String: String] = [:]
    ) throws -> (request: DownloadRequest, bytes: [UInt8], sha: Checksum) {
        let bytes = TestContent.bytes(seed: seed, size: size)
        let sha = try Checksum(.sha256, hex: Support.sha256(bytes))
        let query = ["size": "\(size)", "seed": "\(seed)", "rate": "\(rate)"].merging(extra) { $1 }
        let request = Support.request(server, key, query, in: dir, checksums: [sha])
        return (request, bytes, sha)
    }

    /// Runs `request` with one connection until 500 KiB are here, then asks for four and waits
    /// for the end; the download completes with its checksum verified. When the first 500 KiB
    /// do not come, the failure says what the download and the server did meanwhile.
    static func widenWhileRunning(_ request: DownloadRequest, sha: Checksum, server: TestServer, key: String) async throws {
        var request = request
        request.split = 1
        try await withDownloadManager(configuration: SegmentedDownloadTests.configuration()) { manager in
            let events = manager.managerEvents()
            let id = try await manager.enqueue(request)
            let trail = EventTrail()
            do {
                _ = try await firstMatch(in: events, "500 KiB") { event -> Bool? in
                    switch event {
                    case .progress(id, let progress):
                        if progress.completedBytes >= 500 << 10 { return true }
                        await trail.add("\(progress.completedBytes) bytes")
                    case .checkpointed(id, let durableOffset):
                        await trail.add("durable \(durableOffset)")
                    case .failed(let info) where info.id == id:
                        throw WaitFailure("500 KiB", .ended, details: "the download failed: \(info.error?.message ?? "no error")")
                    case .retrying(id, let attempt, _, let error):
                        await trail.add("attempt \(attempt) after \(error.message)")
                    case .started(id, let resumedFrom, _):
                        await trail.add("started from \(resumedFrom)")
                    case .paused(id, let reason):
                        await trail.add("paused: \(reason?.message ?? "by request")")
                    default: break
                    }
                    return nil
                }
            } catch {
                let log = server.requests(forKey: key).map { "\($0.header("range") ?? "whole") → \($0.status)" }
                Issue.record("the download: \(await trail.lines); the server: \(log); sent \(server.bytesSent(forKey: key))")
                throw error
            }
            var wider = request
            wider.split = 4
            try await manager.replaceRequest(id, with: wider)
            let info = try await manager.finished(id)
            #expect(info.state == .completed)
            #expect(info.verifiedChecksums.contains(sha))
        }
    }

    /// What a download did, kept for a failure's message.
    actor EventTrail {
        private(set) var lines: [String] = []
        private let start = ContinuousClock.now
        func add(_ line: String) {
            let elapsed = start.duration(to: .now).formatted(.units(allowed: [.milliseconds]))
            if lines.last?.hasSuffix(" bytes") == true, line.hasSuffix(" bytes") { lines.removeLast() }
            lines.append("\(elapsed): \(line)")
        }
    }

    /// Waits until the server has stopped sending `key`'s bodies: after a client hangs up, a
    /// loaded server may go on writing into the dead connection for a while, and those bytes
    /// count as sent though nobody received them.
    static func serverQuiet(_ server: TestServer, key: String) async throws {
        try await waitUntil("the server to stop sending \(key)", within: .seconds(10)) { server.responsesInProgress(forKey: key) == 0 }
    }

    /// A manager opened again on the same state continues every segment from its recorded durable offset: no byte recorded as durable is fetched again, and little else is.
    @Test func reopenedManagerContinuesEachSegment() async throws {
        try await withTestServer { server in
            let temporary = try TemporaryDirectory()
            defer { temporary.remove() }
            let dir = try temporary.subdirectory("dir")
            let state = try temporary.subdirectory("state")
            let key = "/file/resume.bin"
            let (request, bytes, sha) = try Self.throttledFile(server, key, seed: 120, in: dir)
            let id = try await Self.runUntil(700 << 10, request: request, state: state)

            let recorded = try #require(try await DownloadStore.open(directory: state).load(id)?.segments)
            #expect(recorded.count >= 2)
            #expect(recorded.dropFirst().contains { $0.durableOffset > $0.start }, "segments after the first made durable progress: \(recorded)")
            let firstRun = server.requests(forKey: key).count
            try await Self.serverQuiet(server, key: key)
            let sentInFirstRun = server.bytesSent(forKey: key)
            let durable = recorded.reduce(0) { $0 + Int($1.durableOffset - $1.start) }

            try await withDownloadManager(stateDirectory: state, configuration: SegmentedDownloadTests.configuration()) { manager in
                let found = await manager.downloads()
                #expect(found.map(\.state) == [.paused])
                try await manager.resume(id)
                let info = try await manager.finished(id)
                #expect(info.state == .completed)
                #expect(info.verifiedChecksums.contains(sha))
            }
            #expect(Support.contents(dir.appendingPathComponent("resume.bin")) == bytes)
            #expect(Support.leftovers(dir).isEmpty)

            let secondRun = server.requests(forKey: key).dropFirst(firstRun)
            #expect(!secondRun.isEmpty)
            #expect(secondRun.allSatisfy { $0.status == 206 }, "nothing was fetched from the start again")
            for request in secondRun {
                let start = try #require(SegmentedDownloadTests.rangeStart(request))
                let segment = try #require(recorded.first { $0.start <= start && start < $0.end })
                #expect(start >= segment.durableOffset, "\(request.header("range") ?? "") asks again for durable bytes of \(segment)")
            }
            // What the second run fetched is what the first had not made durable (at a stop,
            // every written byte is), and little more. The first run's own count is not
            // checked: after a client hangs up, a loaded test server goes on writing into the
            // dead connections for a while, and counts those bytes as sent.
            try await Self.serverQuiet(server, key: key)
            let log = server.requests(forKey: key).map { "\($0.header("range") ?? "whole") → \($0.status)" }
            let sentInSecondRun = server.bytesSent(forKey: key) - sentInFirstRun
            #expect(sentInSecondRun <= Self.size - durable + 4 * (256 << 10),
                    "\(sentInSecondRun) sent for \(Self.size - durable) missing; requests (\(firstRun) in the first run): \(log)")
        }
    }

    /// When the file changed on the server while a segmented download was stopped, it is fetched again from the start, never spliced with the old segments.
    @Test func fileChangedWhileStoppedStartsOver() async throws {
        try await withTestServer { server in
            let temporary = try TemporaryDirectory()
            defer { temporary.remove() }
            let dir = try temporary.subdirectory("dir")
            let state = try temporary.subdirectory("state")
            let key = "/file/changed.bin"
            let request = Support.request(server, key, ["size": "\(Self.size)", "seed": "130", "rate": "\(Self.rate)"], in: dir)
            let id = try await Self.runUntil(500 << 10, request: request, state: state)
            server.changeContent(forKey: key)
            let firstRun = server.requests(forKey: key).count

            try await withDownloadManager(stateDirectory: state, configuration: SegmentedDownloadTests.configuration()) { manager in
                try await manager.resume(id)
                #expect(try await manager.finished(id).state == .completed)
            }
            #expect(Support.contents(dir.appendingPathComponent("changed.bin")) == TestContent.bytes(seed: 131, size: Self.size))
            let secondRun = Array(server.requests(forKey: key).dropFirst(firstRun))
            #expect(secondRun.first?.header("if-range") != nil && secondRun.first?.status == 200)
        }
    }
    /// A download begun with one connection and then asked for more continues from its bytes with the rest split: every later request is a range after those bytes, several run, and the file arrives exact with its checksum verified.
    @Test func oneConnectionDownloadSplitsTheRestWhenAskedForMore() async throws {
        try await withTestServer { server in
            let temporary = try TemporaryDirectory()
            defer { temporary.remove() }
            let dir = temporary.url
            let key = "/file/widened.bin"
            let (request, bytes, sha) = try Self.throttledFile(server, key, seed: 140, in: dir)
            try await Self.widenWhileRunning(request, sha: sha, server: server, key: key)
            #expect(Support.contents(dir.appendingPathComponent("widened.bin")) == bytes)
            #expect(Support.leftovers(dir).isEmpty)

            let requests = server.requests(forKey: key)
            let log = requests.map { "\($0.header("range") ?? "whole") → \($0.status)" }
            #expect(requests.first?.header("range") == nil && requests.first?.status == 200, "\(log)")
            let later = Array(requests.dropFirst())
            #expect(later.allSatisfy { $0.status == 206 }, "\(log)")
            let starts = later.compactMap(SegmentedDownloadTests.rangeStart)
            #expect(starts.count == later.count && later.count >= 4, "the rest went over several connections: \(log)")
            let resumedAt = try #require(starts.first)
            #expect(resumedAt >= 500 << 10, "the first request continues from the bytes on disk: \(log)")
            #expect(starts.dropFirst().allSatisfy { $0 > resumedAt }, "no byte before the resume point is asked for again: \(log)")
        }
    }
    /// A resumed download whose rest was split goes on with one connection when the segments'
    /// ranges turn out unusable (answered whole); the file arrives exact with its checksum
    /// verified, never a splice of the bytes it had and a whole answer.
    @Test func splitOfTheRestFallsBackWhenRangesTurnUnusable() async throws {
        try await withTestServer { server in
            let temporary = try TemporaryDirectory()
            defer { temporary.remove() }
            let dir = temporary.url
            let key = "/file/turned.bin"
            // The first request and the resumed one get ranges; the segments' requests do not.
            let (request, bytes, sha) = try Self.throttledFile(server, key, seed: 150, in: dir, extra: ["rangesFor": "2"])
            try await Self.widenWhileRunning(request, sha: sha, server: server, key: key)
            #expect(Support.contents(dir.appendingPathComponent("turned.bin")) == bytes)
            let requests = server.requests(forKey: key)
            let log = requests.map { "\($0.header("range") ?? "whole") → \($0.status)" }
            let resumed = try #require(requests.dropFirst().first.flatMap(SegmentedDownloadTests.rangeStart), "\(log)")
            #expect(resumed >= 500 << 10, "\(log)")
            #expect(requests.dropFirst(2).contains { $0.header("range") != nil && $0.status == 200 }, "the segments' ranges were ignored: \(log)")
        }
    }
}
