import Foundation
import Haul
import HaulTestServer
import HaulTestSupport
import Testing

@Suite("Downloads end to end", .timeLimit(.minutes(3)))
struct DownloadEndToEndTests {
    /// A file arrives with exactly the served bytes, and no part or resume file is left behind.
    @Test func downloadsExactBytes() async throws {
        try await withTestServer { server in
            let temporary = try TemporaryDirectory()
            defer { temporary.remove() }
            let dir = temporary.url
            let info = try await Support.downloadOne(Support.request(server, "/file/a.bin", ["size": "300000", "seed": "7"], in: dir))
            #expect(info.state == .completed)
            #expect(info.fileURL?.lastPathComponent == "a.bin")
            #expect(Support.contents(dir.appendingPathComponent("a.bin")) == TestContent.bytes(seed: 7, size: 300_000))
            #expect(Support.leftovers(dir).isEmpty)
            #expect(info.finalURL?.absoluteString == server.url("/file/a.bin", ["size": "300000", "seed": "7"]))
        }
    }

    /// Expected checksums are verified while streaming and reported; every supported algorithm works.
    @Test func verifiesChecksums() async throws {
        try await withTestServer { server in
            let temporary = try TemporaryDirectory()
            defer { temporary.remove() }
            let dir = temporary.url
            let bytes = TestContent.bytes(seed: 3, size: 100_000)
            let sha = try Checksum(.sha256, hex: Support.sha256(bytes))
            let info = try await Support.downloadOne(Support.request(server, "/file/c.bin", ["size": "100000", "seed": "3"], in: dir, checksums: [sha]))
            #expect(info.state == .completed)
            #expect(info.verifiedChecksums.contains(sha))
        }
    }

    /// A checksum mismatch fails the download, leaves no file under the final name and no part file.
    @Test func checksumMismatchLeavesNothing() async throws {
        try await withTestServer { server in
            let temporary = try TemporaryDirectory()
            defer { temporary.remove() }
            let dir = temporary.url
            let wrong = try Checksum(.sha256, hex: String(repeating: "0", count: 64))
            let info = try await Support.downloadOne(Support.request(server, "/file/c.bin", ["size": "100000"], in: dir, checksums: [wrong]))
            #expect(info.state == .failed)
            #expect(info.error?.code == .checksumMismatch)
            #expect(Support.listing(dir).isEmpty)
        }
    }

    /// An HTTP error status fails without retrying a permanent error, and its body is never saved.
    @Test func errorStatusIsNotSaved() async throws {
        try await withTestServer { server in
            let temporary = try TemporaryDirectory()
            defer { temporary.remove() }
            let dir = temporary.url
            let info = try await Support.downloadOne(Support.request(server, "/file/missing", ["status": "404"], in: dir))
            #expect(info.state == .failed)
            #expect(info.error?.code == .httpStatus)
            #expect(info.error?.httpStatus == 404)
            #expect(server.requests(forKey: "/file/missing").count == 1)
            #expect(Support.listing(dir).isEmpty)
        }
    }

    /// 503 twice then 200: the download retries and completes; Retry-After sets the retry delay.
    @Test func retriesTransientStatusesHonouringRetryAfter() async throws {
        try await withTestServer { server in
            let temporary = try TemporaryDirectory()
            defer { temporary.remove() }
            let dir = temporary.url
            try await withDownloadManager(configuration: Support.fastConfiguration()) { manager in
                let events = manager.managerEvents()
                let request = Support.request(server, "/file/r.bin", ["status": "503,503,200", "retryAfter": "0", "size": "5000"], in: dir)
                let id = try await manager.enqueue(request)
                let delay = try await firstMatch(in: events, "a retry after the 503") { event -> Duration? in
                    if case .retrying(let retried, _, let delay, let error) = event, retried == id, error.httpStatus == 503 { return delay }
                    return nil
                }
                #expect(delay == .zero, "Retry-After: 0 must win over the backoff")
                let info = try await manager.finished(id)
                #expect(info.state == .completed)
                #expect(info.attempts == 3)
                #expect(server.requests(forKey: "/file/r.bin").map(\.status) == [503, 503, 200])
                #expect(Support.listing(dir) == ["r.bin"])
            }
        }
    }
}
