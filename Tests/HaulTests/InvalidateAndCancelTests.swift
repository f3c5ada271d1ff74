import Foundation
@testable import Haul
import HaulTestServer
import HaulTestSupport
import Testing

/// The client's deliberate cancel (DESIGN.md's table): what happens to each kind of download.
@Suite("invalidateAndCancel", .timeLimit(.minutes(3)))
struct InvalidateAndCancelTests {
    /// Running downloads stop with their bytes kept (paused), queued ones are canceled, paused
    /// ones stay paused; the running one continues from its bytes when resumed.
    @Test func stopsRunningCancelsQueuedKeepsPaused() async throws {
        try await withTestServer { server in
            let temporary = try TemporaryDirectory()
            defer { temporary.remove() }
            let dir = temporary.url
            try await withDownloadManager(configuration: Support.fastConfiguration(maxConcurrent: 1)) { manager in
                let events = manager.managerEvents()
                // Held at half the file until released: the cancel always finds it running.
                let runQuery = ["size": "600000", "rate": "1000000", "seed": "5", "hold": "300000"]
                let running = try await manager.enqueue(Support.request(server, "/file/run.bin", runQuery, in: dir))
                let paused = try await manager.enqueue(Support.request(server, "/file/paused.bin", ["size": "1000"], in: dir))
                let queued = try await manager.enqueue(Support.request(server, "/file/queued.bin", ["size": "1000"], in: dir))
                try await manager.pause(paused)
                // Wait until the running one has bytes.
                for await event in events {
                    if case .progress(running, let progress) = event, progress.completedBytes > 100_000 { break }
                }
                await manager.invalidateAndCancel()
                #expect(await manager.snapshot(running)?.state == .paused)
                #expect(await manager.snapshot(paused)?.state == .paused)
                #expect(await manager.snapshot(queued)?.state == .canceled)
                let kept = await manager.snapshot(running)?.progress.completedBytes ?? 0
                #expect(kept > 0)
                server.release(key: "/file/run.bin")
                try await manager.resume(running)
                let done = try await manager.finished(running)
                #expect(done.state == .completed)
                #expect(Support.contents(done.fileURL!) == TestContent.bytes(seed: 5, size: 600_000))
                #expect(server.requests(forKey: "/file/run.bin").last?.header("Range") != nil, "it continued from its bytes")
            }
        }
    }
}
