import Foundation
import HaulTestSupport

/// What every kill -9 test starts from: a seed for its random kill points (printed, and
/// replayable with HAUL_CRASH_SEED), and a fresh directory with the downloads, the worker's
/// store and the batch spec the worker reads.
struct CrashWorkspace {
    let seed: UInt64
    let directory: TemporaryDirectory
    var root: URL { directory.url }
    let downloads: URL
    let state: URL
    let specURL: URL

    init() throws {
        seed = ProcessInfo.processInfo.environment["HAUL_CRASH_SEED"].flatMap { UInt64($0) }
            ?? UInt64.random(in: 0...UInt64.max)
        directory = try TemporaryDirectory()
        let root = directory.url
        downloads = root.appendingPathComponent("downloads", isDirectory: true)
        state = root.appendingPathComponent("state", isDirectory: true)
        specURL = root.appendingPathComponent("batch.json")
        try FileManager.default.createDirectory(at: downloads, withIntermediateDirectories: true)
    }

    /// Said with every expectation, so that a failure can be replayed.
    var replay: String { "seed \(seed) (HAUL_CRASH_SEED=\(seed) replays these kill points)" }

    func remove() { directory.remove() }
}
