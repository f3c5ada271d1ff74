import Foundation
@testable import Haul
import HaulTestServer
import HaulTestSupport
import Testing

/// Two downloads of the same request never share, or delete, one part file.
@Suite("Part key sharing", .timeLimit(.minutes(3)))
struct PartKeySharingTests {
    /// Adds `request` (whose first response fails), waits for it to fail, then adds it again
    /// and waits until the newer download has bytes in the part file they would share.
    static func failedThenNewerRunning(_ request: DownloadRequest, in manager: DownloadManager) async throws -> (failed: DownloadID, newer: DownloadID) {
        let failed = try await manager.enqueue(request)
        #expect(try await manager.finished(failed).state == .failed)
        let events = manager.managerEvents()
        let newer = try await manager.enqueue(request)
        for await event in events {
            if case .progress(newer, let progress) = event, progress.completedBytes > 0 { break }
        }
        return (failed, newer)
    }

    /// A failed download removed, or resumed, while a newer download of the same request runs
    /// leaves the newer one's part file alone; both end with the right bytes.
    @Test func failedThenNewerOfTheSameRequest() async throws {
        try await withTestServer { server in
            let temporary = try TemporaryDirectory()
            defer { temporary.remove() }
            let dir = temporary.url
            // The first request fails (404, no retries); later ones succeed, slowly.
            let request = Support.request(server, "/file/shared.bin", ["size": "300000", "rate": "600000", "seed": "3", "status": "404,200,200"], in: dir)
            try await withDownloadManager(configuration: Support.fastConfiguration(retries: 0)) { manager in
                let (failed, newer) = try await Self.failedThenNewerRunning(request, in: manager)
                try await manager.resume(failed)
                let first = try await manager.finished(failed)
                let second = try await manager.finished(newer)
                #expect(first.state == .completed)
                #expect(second.state == .completed)
                #expect(first.fileURL != second.fileURL)
                for info in [first, second] {
                    #expect(Support.contents(info.fileURL!) == TestContent.bytes(seed: 3, size: 300_000))
                }
                #expect(Support.leftovers(dir).isEmpty)
            }
        }
    }

    /// Removing a failed download does not delete the part file a newer download of the same
    /// request is writing.
    @Test func removingFailedKeepsNewerPart() async throws {
        try await withTestServer { server in
            let temporary = try TemporaryDirectory()
            defer { temporary.remove() }
            let dir = temporary.url
            let request = Support.request(server, "/file/kept.bin", ["size": "300000", "rate": "600000", "seed": "4", "status": "404,200"], in: dir)
            try await withDownloadManager(configuration: Support.fastConfiguration(retries: 0)) { manager in
                let (failed, newer) = try await Self.failedThenNewerRunning(request, in: manager)
                try await manager.remove(failed)
                let done = try await manager.finished(newer)
                #expect(done.state == .completed)
                #expect(Support.contents(done.fileURL!) == TestContent.bytes(seed: 4, size: 300_000))
                #expect(server.requests(forKey: "/file/kept.bin").count == 2, "the newer download was not restarted")
            }
        }
    }
}
