import Foundation
@testable import Haul
import HaulTestServer
import HaulTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// kill -9 in the middle of segmented downloads: `HaulCrashWorker` (see CrashRecoveryTests)
/// downloads two large files split over four connections, and a few small ones, and is killed
/// at random moments. Between runs the test reads the store the killed run left; every later
/// request for a file must start at or past the durable offset recorded for the segment it
/// falls in, and the last run must end with every file exact. `HAUL_CRASH_SEED=N` replays.
@Suite(.timeLimit(.minutes(3)))
struct SegmentCrashTests {
    static let connections = 4
    static let checkpointBytes: Int64 = 64 << 10
    static let checkpointInterval: Duration = .milliseconds(100)
    static let plannedKills = 6
    static let killAfterLines = 1...20
    static let runTimeout: Duration = .seconds(40)
    /// Per kill and file: the checkpoint window (all connections together: 64 KiB or 100 ms
    /// at about 800 KiB/s) plus what each connection had in flight (its socket buffers, and the
    /// server's writes during a slow checkpoint), as in `CrashRecoveryTests.inFlightSlack`.
    static let perKillLimit = 128 << 10 + connections * (96 << 10)

    struct File {
        let name: String
        let size: Int
        let seed: UInt64
        let rate: Int
        let url: String
        var sha256: String { Support.sha256(TestContent.bytes(seed: seed, size: size)) }
        var isLarge: Bool { size >= 1 << 20 }
    }

    /// Two files that take seconds to fetch over four connections, and small ones beside them.
    static func files(_ server: TestServer) -> [File] {
        var files: [(String, Int, Int)] = [("split-a.bin", 1_536 << 10, 192 << 10), ("split-b.bin", 1_280 << 10, 160 << 10)]
        for index in 1...6 { files.append(("small-\(index).dat", 4_000 * index, 96 << 10)) }
        return files.enumerated().map { offset, file in
            let (name, size, rate) = file
            let seed = UInt64(2_000 + offset)
            let url = server.url("/file/\(name)", ["key": name, "size": "\(size)", "seed": "\(seed)", "rate": "\(rate)"])
            return File(name: name, size: size, seed: seed, rate: rate, url: url)
        }
    }

    /// Killed -9 again and again while files are fetched over four connections each, the worker ends with every file exact and placed once, each run continues every segment from its recorded durable offset, and the bytes fetched twice stay within the checkpoint window per kill.
    @Test func killedSegmentedDownloadsContinueEverySegment() async throws {
        let workspace = try CrashWorkspace()
        defer { workspace.remove() }
        let (replay, downloads, state, specURL) = (workspace.replay, workspace.downloads, workspace.state, workspace.specURL)
        var generator = SeededGenerator(seed: workspace.seed)

        try await withTestServer { server in
            let files = Self.files(server)
            let spec = CrashBatchSpec(
                stateDirectory: state.path, downloadDirectory: downloads.path, checkpointBytes: Self.checkpointBytes,
                checkpointIntervalMilliseconds: 100, maxConcurrentDownloads: 4,
                groups: [CrashBatchSpec.Group(name: "segments", files: files.map {
                    CrashBatchSpec.File(url: $0.url, name: $0.name, sha256: $0.sha256, priority: $0.isLarge ? 1 : 0)
                })],
                split: Self.connections, minSegmentSize: 64 << 10)
            try JSONEncoder().encode(spec).write(to: specURL)

            var kills = 0
            var recorded: [String: [DurableSegment]] = [:]
            var problems: [String] = []
            for run in 1...(Self.plannedKills + 1) {
                let before = Dictionary(uniqueKeysWithValues: files.map { ($0.name, server.requests(forKey: $0.name).count) })
                let worker = try CrashWorker(spec: specURL, timeout: Self.runTimeout)
                let isLast = run == Self.plannedKills + 1
                if !isLast, await worker.stdout.waitForLines(Int.random(in: Self.killAfterLines, using: &generator), where: CrashRecoveryTests.isNewWork) {
                    worker.kill()
                }
                let result = await worker.result()
                try #require(!result.timedOut, "run \(run) hung; \(replay)\n\(result.stderr)")
                // Requests of this run against what the store said before it.
                for file in files {
                    let requests = server.requests(forKey: file.name).dropFirst(before[file.name] ?? 0)
                    guard let segments = recorded[file.name] else { continue }
                    for request in requests {
                        let start = SegmentedDownloadTests.rangeStart(request) ?? 0
                        guard let segment = segments.first(where: { $0.start <= start && start < $0.end }) else { continue }
                        // The last byte of a whole part is asked again to revalidate it (see CrashHistory).
                        let lowest = segment.durableOffset == Int64(file.size) ? Int64(file.size) - 1 : segment.durableOffset
                        if Int64(start) < lowest {
                            problems.append("run \(run): \(file.name) asked for \(request.header("range") ?? "everything"), below the durable \(segment)")
                        }
                    }
                }
                if result.signal == SIGKILL {
                    kills += 1
                    recorded = try await Self.segmentsInStore(state)
                    continue
                }
                try #require(result.exitCode == 0, "run \(run) failed; \(replay)\n\(result.stderr)")
                #expect(result.lines.last == "done \(files.count) 0", "\(replay)")
                break
            }
            #expect(problems == [], "\(replay)")
            #expect(kills >= 2, "the batch finished too soon to be killed often; \(replay)")
            #expect(Support.listing(downloads) == files.map(\.name).sorted(), "\(replay)")
            for file in files {
                let bytes = Support.contents(downloads.appendingPathComponent(file.name))
                #expect(bytes.map(Support.sha256) == file.sha256, "\(file.name) is missing or wrong; \(replay)")
                let sent = server.bytesSent(forKey: file.name)
                #expect(sent <= file.size + kills * min(file.size, Self.perKillLimit),
                        "\(file.name): the server sent \(sent) bytes for \(file.size) after \(kills) kills; \(replay)")
            }
            for file in files where file.isLarge {
                let ranged = server.requests(forKey: file.name).compactMap { $0.header("range") }
                #expect(ranged.contains { !$0.hasSuffix("-") }, "\(file.name) was fetched in closed ranges (split)")
                if ProcessInfo.processInfo.environment["HAUL_CRASH_VERBOSE"] != nil {
                    print("SegmentCrashTests: \(kills) kills; \(file.name): \(file.size) bytes, sent \(server.bytesSent(forKey: file.name)), "
                        + "ranges \(ranged)")
                }
            }
        }
    }

    /// What the store of a killed worker says about each file's segments, by file name.
    static func segmentsInStore(_ state: URL) async throws -> [String: [DurableSegment]] {
        let store = try DownloadStore.open(directory: state)
        var result: [String: [DurableSegment]] = [:]
        for download in try await store.loadAll(session: "default") {
            if let name = download.request.fileName, let segments = download.segments { result[name] = segments }
        }
        return result
    }
}
