import Foundation
import HaulTestSupport
import HaulTestServer

/// The mixed batch the crash test downloads: several groups, each with one large throttled
/// file and many small ones, every file with its own server key (so that the server counts
/// requests and bytes per file) and the sha256 it must end with.
struct CrashBatch {
    struct File {
        let group: String
        let name: String
        let size: Int
        let seed: UInt64
        /// Server throttle in bytes per second.
        let rate: Int
        let url: String
        let sha256: String
        /// The server key its requests and bytes are counted under.
        var key: String { name }
    }

    struct Group {
        let name: String
        let files: [File]
    }

    let groups: [Group]
    var files: [File] { groups.flatMap(\.files) }

    /// Files at least this large are "large": queued ahead of the small ones, and reported on
    /// one by one with `HAUL_CRASH_VERBOSE`.
    static let largeThreshold = 256 << 10

    /// Three groups: 40 small files of 1–30 KB in all, and one large file per group (1–1.5 MiB).
    ///
    /// Every file is throttled, so that a run lasts long enough to be killed in the middle of
    /// things: the large ones at 192–320 KiB/s take about 5 s of transfer each, spread over
    /// the runs; the small ones at 96 KiB/s take 10–300 ms, so kills also land in the middle
    /// of small files, before and after their first checkpoint. The large files go first in the
    /// queue (priority 1), so all three are under way in every run and every kill hits them;
    /// the small ones share the other slots. Sizes come from `generator`, contents from fixed seeds.
    static func make(server: TestServer, using generator: inout some RandomNumberGenerator) -> CrashBatch {
        let plan: [(group: String, smallCount: Int, largeSize: Int, largeRate: Int)] = [
            ("alpha", 14, 1_536 << 10, 320 << 10),
            ("beta", 13, 1_280 << 10, 256 << 10),
            ("gamma", 13, 1_024 << 10, 192 << 10),
        ]
        var seed: UInt64 = 1_000
        var groups: [Group] = []
        for entry in plan {
            var files: [File] = []
            seed += 1
            files.append(file(server, group: entry.group, name: "\(entry.group)-large.bin", size: entry.largeSize, seed: seed, rate: entry.largeRate))
            for index in 1...entry.smallCount {
                seed += 1
                let size = Int.random(in: 1_000...30_000, using: &generator)
                files.append(file(server, group: entry.group, name: "\(entry.group)-\(index).dat", size: size, seed: seed, rate: 96 << 10))
            }
            groups.append(Group(name: entry.group, files: files))
        }
        return CrashBatch(groups: groups)
    }

    private static func file(_ server: TestServer, group: String, name: String, size: Int, seed: UInt64, rate: Int) -> File {
        let url = server.url("/file/\(name)", ["key": name, "size": "\(size)", "seed": "\(seed)", "rate": "\(rate)"])
        return File(
            group: group, name: name, size: size, seed: seed, rate: rate, url: url,
            sha256: Support.sha256(TestContent.bytes(seed: seed, size: size)))
    }

    /// Writes the worker's spec (see Tests/HaulCrashWorker/main.swift) to `url`.
    func writeSpec(to url: URL, stateDirectory: URL, downloadDirectory: URL, checkpointBytes: Int64,
                   checkpointInterval: Duration, maxConcurrentDownloads: Int) throws {
        let spec = CrashBatchSpec(
            stateDirectory: stateDirectory.path, downloadDirectory: downloadDirectory.path,
            checkpointBytes: checkpointBytes,
            checkpointIntervalMilliseconds: Int(checkpointInterval.components.seconds * 1_000
                + checkpointInterval.components.attoseconds / 1_000_000_000_000_000),
            maxConcurrentDownloads: maxConcurrentDownloads,
            groups: groups.map { group in
                CrashBatchSpec.Group(name: group.name, files: group.files.map {
                    // Large files first, so that every run has all three under way and
                    // kills land in them, not only in whichever one the queue reached.
                    CrashBatchSpec.File(url: $0.url, name: $0.name, sha256: $0.sha256, priority: $0.size >= Self.largeThreshold ? 1 : 0)
                })
            })
        try JSONEncoder().encode(spec).write(to: url)
    }
}
