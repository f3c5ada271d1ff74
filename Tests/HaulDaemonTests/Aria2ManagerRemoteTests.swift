import Foundation
@testable import Haul
import HaulDaemon
import HaulTestServer
import HaulTestSupport
import NIOConcurrencyHelpers
import Testing

/// The manager functions the aria2 methods rely on (DownloadManager+Remote), each against its
/// contract, with a real manager and the test server.
@Suite(.timeLimit(.minutes(3))) struct Aria2ManagerRemoteTests {
    /// Collects a manager's events as they come, so that a test can wait for one.
    final class EventLog: Sendable {
        private let events = NIOLockedValueBox<[ManagerEvent]>([])
        private let task: Task<Void, Never>

        init(_ manager: DownloadManager) {
            let stream = manager.managerEvents()
            let events = self.events
            task = Task { for await event in stream { events.withLockedValue { $0.append(event) } } }
        }

        var all: [ManagerEvent] { events.withLockedValue { $0 } }

        func started() -> [DownloadID] {
            all.compactMap { if case .started(let id, _, _) = $0 { return id } else { return nil } }
        }
    }

    func request(_ server: TestServer, _ name: String, in directory: URL, size: Int = 2000, seed: Int = 0,
                 rate: Int? = nil, priority: Int = 0, extra: [String: String] = [:]) -> DownloadRequest {
        var query = ["size": "\(size)", "seed": "\(seed)"].merging(extra) { _, new in new }
        if let rate { query["rate"] = "\(rate)" }
        return DownloadRequest(url: URL(string: server.url("/file/\(name)", query))!, directory: directory, priority: priority)
    }

    /// A move keeps the scheduler's rule (priority, then first in, first out): the download
    /// takes its new neighbour's priority, and downloads start in the order shown.
    @Test func moveAcrossPriorities() async throws {
        try await withTestServer { server in
            let temporary = try TemporaryDirectory()
            defer { temporary.remove() }
            let directory = temporary.url
            try await withDownloadManager(configuration: RPCTest.fastConfiguration(maxConcurrent: 1)) { manager in
                let log = EventLog(manager)
                let blocker = try await manager.enqueue(request(server, "blocker.bin", in: directory, size: 2_000_000, rate: 100_000))
                try await waitUntil("the blocker to run") { await manager.snapshot(blocker)?.state == .running }
                let high1 = try await manager.enqueue(request(server, "h1.bin", in: directory, seed: 1, priority: 5))
                let low1 = try await manager.enqueue(request(server, "l1.bin", in: directory, seed: 2))
                let high2 = try await manager.enqueue(request(server, "h2.bin", in: directory, seed: 3, priority: 5))
                let low2 = try await manager.enqueue(request(server, "l2.bin", in: directory, seed: 4))
                #expect(await manager.queuedInStartOrder() == [high1, high2, low1, low2])
                #expect(try await manager.moveInQueue(low2, toIndex: 1) == 1)
                #expect(await manager.queuedInStartOrder() == [high1, low2, high2, low1])
                #expect(await manager.snapshot(low2)?.request.priority == 5)
                #expect(try await manager.moveInQueue(high1, toIndex: 99) == 3)
                #expect(await manager.queuedInStartOrder() == [low2, high2, low1, high1])
                #expect(try await manager.moveInQueue(low1, toIndex: 0) == 0)
                #expect(await manager.queuedInStartOrder() == [low1, low2, high2, high1])
                await #expect(throws: HaulError.self) { try await manager.moveInQueue(blocker, toIndex: 0) }
                try await manager.cancel(blocker)
                for id in [low1, low2, high2, high1] { _ = try await manager.finished(id) }
                #expect(log.started().filter { $0 != blocker } == [low1, low2, high2, high1])
            }
        }
    }

    /// Paused downloads keep their place in the one waiting queue: pausing a queued one leaves
    /// it where it was, it moves like a queued one and stays paused, a running one paused goes
    /// to the front of its priority, and resumed ones wait from the place they kept.
    @Test func pausedDownloadsKeepTheirPlace() async throws {
        try await withTestServer { server in
            let temporary = try TemporaryDirectory()
            defer { temporary.remove() }
            let directory = temporary.url
            try await withDownloadManager(configuration: RPCTest.fastConfiguration(maxConcurrent: 1)) { manager in
                let blocker = try await manager.enqueue(request(server, "blocker.bin", in: directory, size: 2_000_000, rate: 100_000))
                try await waitUntil("the blocker to run") { await manager.snapshot(blocker)?.state == .running }
                var ids: [DownloadID] = []
                for n in 1...3 {
                    ids.append(try await manager.enqueue(request(server, "q\(n).bin", in: directory, size: 2_000_000, seed: n, rate: 100_000)))
                }
                let (q1, q2, q3) = (ids[0], ids[1], ids[2])
                try await manager.pause(q2)
                #expect(await manager.waitingInQueueOrder() == [q1, q2, q3])
                #expect(await manager.queuedInStartOrder() == [q1, q3])
                #expect(try await manager.moveInQueue(q2, toIndex: 0) == 0)
                #expect(await manager.waitingInQueueOrder() == [q2, q1, q3])
                #expect(await manager.snapshot(q2)?.state == .paused)
                // The running one paused frees its slot for q1 and waits, paused, at the front of
                // its priority: behind q2, whose move to the front gave it a higher priority.
                try await manager.pause(blocker)
                #expect(await manager.waitingInQueueOrder() == [q2, blocker, q3])
                #expect(await manager.snapshot(q1)?.state == .running)
                try await manager.resume(q2)
                #expect(await manager.queuedInStartOrder() == [q2, q3])
                try await manager.resume(blocker)
                #expect(await manager.queuedInStartOrder() == [q2, blocker, q3])
                // A paused download cannot be moved once it has no place (canceled).
                try await manager.cancel(q3)
                await #expect(throws: HaulError.self) { try await manager.moveInQueue(q3, toIndex: 0) }
                #expect(await manager.waitingInQueueOrder() == [q2, blocker])
                for id in [q1, q2, blocker] { try await manager.cancel(id) }
            }
        }
    }

    /// Paused downloads have their places in the queue again when the store is opened once
    /// more, a move among them included (stored as the moved download's priority).
    @Test func pausedPlacesSurviveReopening() async throws {
        let temporary = try TemporaryDirectory()
        defer { temporary.remove() }
        let root = temporary.url
        let state = root.appendingPathComponent("state")
        let configuration = RPCTest.fastConfiguration(maxConcurrent: 1)
        let first = try await DownloadManager.open(stateDirectory: state, configuration: configuration)
        var ids: [DownloadID] = []
        for n in 1...3 {
            // Never fetched: paused downloads open no connection.
            let request = DownloadRequest(url: URL(string: "http://127.0.0.1:9/p\(n).bin")!, directory: root)
            ids.append(try await first.add(request, queueIndex: nil, paused: true))
        }
        #expect(try await first.moveInQueue(ids[2], toIndex: 0) == 0)
        #expect(await first.waitingInQueueOrder() == [ids[2], ids[0], ids[1]])
        await first.shutdown()
        let second = try await DownloadManager.open(stateDirectory: state, configuration: configuration)
        #expect(await second.waitingInQueueOrder() == [ids[2], ids[0], ids[1]])
        #expect(await second.queuedInStartOrder() == [])
        #expect(await second.downloadIDs(inStates: [.paused]).count == 3)
        #expect(try await second.moveInQueue(ids[1], toIndex: 1) == 1)
        #expect(await second.waitingInQueueOrder() == [ids[2], ids[1], ids[0]])
        await second.shutdown()
    }

    /// Added paused, a download is stored and announced (queued, then paused) and does not
    /// start until resumed; added at a queue index, it takes that place.
    @Test func addPausedOrAtAPosition() async throws {
        try await withTestServer { server in
            let temporary = try TemporaryDirectory()
            defer { temporary.remove() }
            let directory = temporary.url
            try await withDownloadManager(configuration: RPCTest.fastConfiguration(maxConcurrent: 1)) { manager in
                let log = EventLog(manager)
                let paused = try await manager.add(request(server, "p.bin", in: directory), queueIndex: nil, paused: true)
                #expect(await manager.snapshot(paused)?.state == .paused)
                let blocker = try await manager.enqueue(request(server, "b.bin", in: directory, size: 2_000_000, rate: 100_000))
                try await waitUntil("the blocker to run") { await manager.snapshot(blocker)?.state == .running }
                let first = try await manager.enqueue(request(server, "1.bin", in: directory, seed: 1))
                let second = try await manager.add(request(server, "2.bin", in: directory, seed: 2), queueIndex: 0, paused: false)
                #expect(await manager.queuedInStartOrder() == [second, first])
                try await manager.cancel(blocker)
                for id in [second, first] { _ = try await manager.finished(id) }
                #expect(await manager.snapshot(paused)?.state == .paused)
                #expect(!log.started().contains(paused))
                let kinds = log.all.compactMap { event -> String? in
                    switch event {
                    case .queued(paused): return "queued"
                    case .paused(paused, _): return "paused"
                    default: return nil
                    }
                }
                #expect(kinds == ["queued", "paused"])
                try await manager.resume(paused)
                #expect(try await manager.finished(paused).state == .completed)
            }
        }
    }

    /// pauseAll stops running and queued downloads without starting any queued one on the
    /// way; resumeAllPaused queues them again; a higher limit starts more at once.
    @Test func pauseAllResumeAllAndTheLimit() async throws {
        try await withTestServer { server in
            let temporary = try TemporaryDirectory()
            defer { temporary.remove() }
            let directory = temporary.url
            try await withDownloadManager(configuration: RPCTest.fastConfiguration(maxConcurrent: 1)) { manager in
                let log = EventLog(manager)
                let ids = try await (0..<3).asyncMap { n in
                    try await manager.enqueue(request(server, "s\(n).bin", in: directory, size: 2_000_000, seed: n, rate: 100_000))
                }
                try await waitUntil("the first to receive bytes") { await (manager.snapshot(ids[0])?.progress.completedBytes ?? 0) > 0 }
                await manager.pauseAll()
                #expect(await manager.infos(ids).map(\.state) == [.paused, .paused, .paused])
                #expect(log.started() == [ids[0]])
                #expect(await manager.resumeAllPaused() == ids)
                try await manager.setMaxConcurrentDownloads(3)
                #expect(await manager.maxConcurrentDownloads == 3)
                // Bytes, not just slots: no connection may still be opening when the test server
                // stops (see the report on the test server's shutdown race).
                try await waitUntil("all three to receive bytes") {
                    await manager.infos(ids).allSatisfy { $0.state == .running && $0.progress.completedBytes > 0 }
                }
                await #expect(throws: HaulError.self) { try await manager.setMaxConcurrentDownloads(0) }
            }
        }
    }

    /// A running download whose request changes is stopped and started again in its slot,
    /// ahead of the queued downloads: it continues from its bytes (a range request) and is
    /// placed under the new name, and the download queued behind it has not started meanwhile.
    @Test func replaceRequestOfARunningDownload() async throws {
        try await withTestServer { server in
            let temporary = try TemporaryDirectory()
            defer { temporary.remove() }
            let directory = temporary.url
            var configuration = RPCTest.fastConfiguration()
            configuration.maxConcurrentDownloads = 1
            try await withDownloadManager(configuration: configuration) { manager in
                let original = request(server, "run.bin", in: directory, size: 400_000, seed: 7, rate: 200_000, extra: ["key": "run"])
                let id = try await manager.enqueue(original)
                let behind = try await manager.enqueue(request(server, "behind.bin", in: directory, size: 1000, seed: 6, rate: 200_000))
                try await waitUntil("bytes to arrive") { await (manager.snapshot(id)?.progress.completedBytes ?? 0) > 0 }
                var changed = original
                changed.fileName = "renamed.bin"
                try await manager.replaceRequest(id, with: changed)
                #expect(await manager.snapshot(id)?.state == .running)
                #expect(await manager.snapshot(id)?.attempts == 1, "the new request has all its retries ahead")
                #expect(await manager.snapshot(behind)?.state == .queued, "the changed download kept its slot")
                #expect(try await manager.finished(id).state == .completed)
                #expect(try await manager.finished(behind).state == .completed)
                let data = FileManager.default.contents(atPath: directory.appendingPathComponent("renamed.bin").path)
                #expect(data == Data(TestContent.bytes(seed: 7, size: 400_000)))
                #expect(server.requests(forKey: "run").contains { $0.header("Range") != nil })
                await #expect(throws: HaulError.self) { try await manager.replaceRequest(id, with: original) }
                var invalid = changed
                invalid.fileName = "../up.bin"
                await #expect(throws: HaulError.self) { try await manager.replaceRequest(DownloadID(rawValue: 1), with: invalid) }
            }
        }
    }

    /// Two changes of a running download at once both succeed: the second joins the restart
    /// the first began (or starts another), and the download ends with the request that was
    /// put in place last, under that request's name.
    @Test func concurrentReplacementsOfARunningDownload() async throws {
        try await withTestServer { server in
            let temporary = try TemporaryDirectory()
            defer { temporary.remove() }
            let directory = temporary.url
            try await withDownloadManager(configuration: RPCTest.fastConfiguration()) { manager in
                let original = request(server, "twice.bin", in: directory, size: 400_000, seed: 5, rate: 200_000)
                let id = try await manager.enqueue(original)
                try await waitUntil("bytes to arrive") { await (manager.snapshot(id)?.progress.completedBytes ?? 0) > 0 }
                var first = original
                first.fileName = "first.bin"
                var second = original
                second.fileName = "second.bin"
                async let a: Void = manager.replaceRequest(id, with: first)
                async let b: Void = manager.replaceRequest(id, with: second)
                try await a
                try await b
                let info = try await manager.finished(id)
                #expect(info.state == .completed)
                let name = try #require(info.request.fileName)
                #expect(["first.bin", "second.bin"].contains(name))
                #expect(info.fileURL?.lastPathComponent == name, "placed under the request it has")
                #expect(FileManager.default.contents(atPath: directory.appendingPathComponent(name).path)
                    == Data(TestContent.bytes(seed: 5, size: 400_000)))
            }
        }
    }

    /// A new directory means the part file in the old one is deleted and the download starts
    /// over there; a refused request changes nothing.
    @Test func replaceRequestWithANewDirectory() async throws {
        try await withTestServer { server in
            let temporary = try TemporaryDirectory()
            defer { temporary.remove() }
            let directory = temporary.url
            let other = directory.appendingPathComponent("other")
            try FileManager.default.createDirectory(at: other, withIntermediateDirectories: true)
            try await withDownloadManager(configuration: RPCTest.fastConfiguration()) { manager in
                let original = request(server, "moved.bin", in: directory, size: 400_000, seed: 8, rate: 200_000)
                let id = try await manager.enqueue(original)
                try await waitUntil("bytes to arrive") { await (manager.snapshot(id)?.progress.completedBytes ?? 0) > 0 }
                try await manager.pause(id)
                #expect(Self.partFiles(directory).count == 1)
                var bad = original
                bad.directory = directory.appendingPathComponent("missing")
                await #expect(throws: HaulError.self) { try await manager.replaceRequest(id, with: bad) }
                #expect(await manager.snapshot(id)?.request.directory.path == directory.path)
                var moved = original
                moved.directory = other
                try await manager.replaceRequest(id, with: moved)
                #expect(Self.partFiles(directory).isEmpty)
                try await manager.resume(id)
                #expect(try await manager.finished(id).state == .completed)
                #expect(FileManager.default.contents(atPath: other.appendingPathComponent("moved.bin").path)
                    == Data(TestContent.bytes(seed: 8, size: 400_000)))
            }
        }
    }

    /// Forgetting a failed download deletes its part file, but not when a newer download of
    /// the same request writes that part file now.
    @Test func forgetFinishedSparesAPartFileInUse() async throws {
        try await withTestServer { server in
            let temporary = try TemporaryDirectory()
            defer { temporary.remove() }
            let directory = temporary.url
            try await withDownloadManager(configuration: RPCTest.fastConfiguration()) { manager in
                // The first attempt breaks after 100,000 bytes and is not retried: failed, bytes kept.
                let broken = request(server, "same.bin", in: directory, size: 300_000, seed: 9, rate: 300_000, extra: ["drop": "100000", "dropTimes": "1"])
                let failed = try await manager.enqueue(broken)
                #expect(try await manager.finished(failed).state == .failed)
                #expect(Self.partFiles(directory).count == 1)
                let again = try await manager.enqueue(broken)
                try await waitUntil("the new one to write") { await (manager.snapshot(again)?.progress.completedBytes ?? 0) > 0 }
                #expect(try await manager.forgetFinished([failed, again]) == [failed])
                #expect(await manager.snapshot(failed) == nil)
                #expect(try await manager.finished(again).state == .completed)
                #expect(FileManager.default.contents(atPath: directory.appendingPathComponent("same.bin").path)
                    == Data(TestContent.bytes(seed: 9, size: 300_000)))
                // Failed and alone, its part file goes with it.
                let lone = try await manager.enqueue(request(server, "lone.bin", in: directory, size: 300_000, rate: 300_000, extra: ["drop": "100000"]))
                #expect(try await manager.finished(lone).state == .failed)
                #expect(Self.partFiles(directory).count == 1)
                #expect(try await manager.forgetFinished() == [again, lone])
                #expect(Self.partFiles(directory).isEmpty)
                #expect(await manager.downloads().isEmpty)
            }
        }
    }

    static func partFiles(_ directory: URL) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).filter { $0.hasPrefix(".haul-") }
    }
}

extension Sequence where Element: Sendable {
    func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var results: [T] = []
        for element in self { results.append(try await transform(element)) }
        return results
    }
}
