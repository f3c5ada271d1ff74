import Foundation
import Haul
import HaulTestServer

/// Measures what 100,000 queued downloads cost the manager: the time to enqueue them in one
/// group (one store transaction), the resident memory they add, and the time to open the
/// store again and find them all. One slow download holds the only slot, so every other one
/// stays queued, as in a real backlog.
@main
struct QueueScale {
    static func main() async throws {
        let count = CommandLine.arguments.dropFirst().first.flatMap(Int.init) ?? 100_000
        // In calls of this many, as a daemon's clients add a backlog (default: one call).
        let batch = CommandLine.arguments.dropFirst(2).first.flatMap(Int.init) ?? count
        let root = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("haul-queue-scale-\(UUID().uuidString)")
        let state = root.appendingPathComponent("state")
        let output = root.appendingPathComponent("out")
        try FileManager.default.createDirectory(at: output, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: root) }
        let server = try await TestServer.start()

        let configuration = DownloadManager.Configuration(maxConcurrentDownloads: 1)
        let manager = try await DownloadManager.open(stateDirectory: state, configuration: configuration)
        let slow = DownloadRequest(url: URL(string: server.url("/file/slow.bin", ["size": "100000000", "rate": "1000"]))!, directory: output)
        _ = try await manager.enqueue(slow)
        var requests = (0..<count).map { n in
            DownloadRequest(url: URL(string: server.url("/file/f\(n).bin", ["size": "16384"]))!, directory: output)
        }
        let clock = ContinuousClock()
        let residentBefore = residentBytes()
        let enqueueStart = clock.now
        for first in stride(from: 0, to: count, by: batch) {
            _ = try await manager.add(Array(requests[first..<min(count, first + batch)]), toGroup: "bulk")
        }
        let enqueue = enqueueStart.duration(to: clock.now)
        requests = []
        let residentAfter = residentBytes()
        // What the manager keeps, without the freed transient peak of the store write that
        // glibc keeps mapped.
        #if os(Linux)
        _ = malloc_trim(0)
        #endif
        let residentTrimmed = residentBytes()
        let queued = await manager.downloads().filter { $0.state == .queued }.count
        await manager.shutdown()

        let reopenStart = clock.now
        let reopened = try await DownloadManager.open(stateDirectory: state, configuration: configuration, continueInterrupted: false)
        let found = await reopened.downloads().count
        let reopen = reopenStart.duration(to: clock.now)
        await reopened.shutdown()
        try await server.shutdown()

        let perDownload = Double(residentAfter - residentBefore) / Double(count)
        print("| measure | value |")
        print("|---|---|")
        print("| downloads enqueued in one group | \(count) (\(queued) queued), in calls of \(batch) |")
        print("| enqueue time (validate, one store transaction, schedule) | \(format(enqueue)) s |")
        print("| resident memory before enqueueing | \(mib(residentBefore)) MiB |")
        print("| resident memory with them queued | \(mib(residentAfter)) MiB |")
        print("| added resident memory per queued download | \(Int(perDownload)) bytes |")
        print("| the same after malloc_trim (what stays allocated) | \(Int(Double(residentTrimmed - residentBefore) / Double(count))) bytes (\(mib(residentTrimmed)) MiB in all) |")
        print("| reopen the store and find them all | \(format(reopen)) s (\(found) found) |")
    }

    #if os(Linux)
    /// glibc's malloc_trim, which Swift's Glibc module does not export.
    @_silgen_name("malloc_trim")
    static func malloc_trim(_ pad: Int) -> Int32
    #endif

    /// VmRSS from /proc (Linux); 0 where there is none.
    static func residentBytes() -> Int64 {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
        for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            let kilobytes = line.split(separator: " ").compactMap { Int64($0) }.first ?? 0
            return kilobytes * 1024
        }
        return 0
    }

    static func format(_ duration: Duration) -> String {
        let seconds = Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
        return String(format: "%.2f", seconds)
    }

    static func mib(_ bytes: Int64) -> String { String(format: "%.1f", Double(bytes) / 1_048_576) }
}
