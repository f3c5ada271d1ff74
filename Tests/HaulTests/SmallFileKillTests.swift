import Foundation
import GRDB
@testable import Haul
import HaulTestServer
import HaulTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Issue 26: a kill -9 in the middle of a batch of small files fetches again at most the files
/// that were being transferred at that moment (`maxConcurrentDownloads`), however many files
/// were verified and still waiting for the store. Counted at the server, per kill.
///
/// The store is made slower than the transfers (a trigger that does needless work on every
/// write of a placement), as a busy disk makes it: verified files then pile up behind their
/// placement writes while the slots go on to the next files. A file verified but not yet
/// placed is a `.haul-KEY.done` file, which the next run puts in place without fetching it.
@Suite(.timeLimit(.minutes(3)))
struct SmallFileKillTests {
    static let fileCount = 240
    static let maxConcurrentDownloads = 4
    static let kills = 3
    /// A run is killed after this many transfers started in it.
    static let killAfterStarts = 40...90
    static let runTimeout: Duration = .seconds(60)

    /// Killed -9 three times in the middle of 240 small files (each its own key at the server), a worker ends after one more run with every file exact and placed once, and each kill made at most 4 files (its `-j`) be requested again.
    @Test func killRefetchesAtMostTheTransfersUnderWay() async throws {
        let workspace = try CrashWorkspace()
        defer { workspace.remove() }
        var generator = SeededGenerator(seed: workspace.seed)
        try await withTestServer { server in
            var files: [CrashBatchSpec.File] = []
            var expected: [String: [UInt8]] = [:]
            for index in 0..<Self.fileCount {
                let name = "s\(index).dat"
                let size = Int.random(in: 1_000...8_000, using: &generator)
                let seed = UInt64(7_000 + index)
                let bytes = TestContent.bytes(seed: seed, size: size)
                expected[name] = bytes
                let url = server.url("/file/\(name)", ["key": name, "size": "\(size)", "seed": "\(seed)"])
                files.append(CrashBatchSpec.File(url: url, name: name, sha256: Support.sha256(bytes), priority: 0))
            }
            let spec = CrashBatchSpec(
                stateDirectory: workspace.state.path, downloadDirectory: workspace.downloads.path,
                checkpointBytes: 1 << 20, checkpointIntervalMilliseconds: 1_000,
                maxConcurrentDownloads: Self.maxConcurrentDownloads, groups: [CrashBatchSpec.Group(name: "shards", files: files)])
            try JSONEncoder().encode(spec).write(to: workspace.specURL)
            try await Self.slowDownPlacementWrites(in: workspace.state)

            // Requests per file after each run, and which runs were killed.
            var snapshots: [[String: Int]] = [Self.requestCounts(server, files)]
            var killedRuns: [Int] = []
            for _ in 1...Self.kills {
                let worker = try CrashWorker(spec: workspace.specURL, timeout: Self.runTimeout)
                let killAfter = Int.random(in: Self.killAfterStarts, using: &generator)
                if await worker.stdout.waitForLines(killAfter, where: { $0.hasPrefix("started ") }) { worker.kill() }
                let run = await worker.result()
                try #require(!run.timedOut, "a run hung; \(workspace.replay)\n\(run.stderr)")
                snapshots.append(Self.requestCounts(server, files))
                guard run.signal == SIGKILL else {
                    try #require(run.exitCode == 0, "a run failed; \(workspace.replay)\n\(run.stderr)")
                    break
                }
                killedRuns.append(snapshots.count - 1)
            }
            let last = try await CrashWorker(spec: workspace.specURL, timeout: Self.runTimeout).result()
            try #require(!last.timedOut, "the last run hung; \(workspace.replay)")
            #expect(last.exitCode == 0, "the last run failed; \(workspace.replay)\n\(last.stderr)")
            snapshots.append(Self.requestCounts(server, files))
            #expect(!killedRuns.isEmpty, "the batch finished before the first kill; \(workspace.replay)")

            // Nothing lost, nothing spliced, nothing placed twice.
            #expect(Support.listing(workspace.downloads) == files.map(\.name).sorted(), "\(workspace.replay)")
            for (name, bytes) in expected {
                #expect(Support.contents(workspace.downloads.appendingPathComponent(name)) == bytes, "\(name); \(workspace.replay)")
            }
            // At most the transfers under way at each kill were fetched again: the files a killed
            // run asked for that the run after it asked for again.
            for run in killedRuns {
                let refetched = files.filter { file in
                    snapshots[run][file.name]! > snapshots[run - 1][file.name]! && snapshots[run + 1][file.name]! > snapshots[run][file.name]!
                }
                #expect(refetched.count <= Self.maxConcurrentDownloads,
                        "the kill of run \(run) made \(refetched.count) files be fetched again (at most \(Self.maxConcurrentDownloads)): \(refetched.map(\.name)); \(workspace.replay)")
            }
            let repeated = files.reduce(0) { $0 + max(0, server.requests(forKey: $1.name).count - 1) }
            #expect(repeated <= killedRuns.count * Self.maxConcurrentDownloads,
                    "\(repeated) requests repeated after \(killedRuns.count) kills; \(workspace.replay)")
        }
    }

    /// Requests the server has seen so far, per file.
    static func requestCounts(_ server: TestServer, _ files: [CrashBatchSpec.File]) -> [String: Int] {
        Dictionary(uniqueKeysWithValues: files.map { ($0.name, server.requests(forKey: $0.name).count) })
    }

    /// Creates the store and a trigger that makes every write of a placement do needless
    /// work (a join of a thousand rows with themselves): a store slower than the transfers.
    static func slowDownPlacementWrites(in state: URL) async throws {
        let manager = try await DownloadManager.open(stateDirectory: state, configuration: Support.fastConfiguration())
        await manager.shutdown()
        let store = try DatabaseQueue(path: state.appendingPathComponent(DownloadStore.fileName).path)
        try await store.write { db in
            try db.execute(sql: "CREATE TABLE slowdown (n INTEGER)")
            for n in 0..<1_000 { try db.execute(sql: "INSERT INTO slowdown (n) VALUES (?)", arguments: [n]) }
            try db.execute(sql: """
                CREATE TRIGGER slow_placement BEFORE UPDATE OF placement ON download WHEN NEW.placement IS NOT NULL
                BEGIN SELECT count(*) FROM slowdown a, slowdown b; END
                """)
        }
    }
}
