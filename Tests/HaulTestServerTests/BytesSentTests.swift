import AsyncHTTPClient
import HaulTestServer
import Testing

@Suite("Bytes sent per key", .timeLimit(.minutes(2)))
struct BytesSentTests {
    /// Every `/file` body byte handed to a connection is counted under the key, ranges and dropped bodies included, while heads and error bodies count nothing.
    @Test func bodyBytesAreCountedPerKey() async throws {
        try await withServerAndClient { server, client in
            let url = server.url("/file/a.bin", ["key": "k", "size": "100000", "status": "200,200,503,200,200"])
            #expect(server.bytesSent(forKey: "k") == 0)

            let whole = try await client.fetch(url)
            #expect(whole.body.count == 100_000)
            #expect(server.bytesSent(forKey: "k") == 100_000)

            let tail = try await client.fetch(url, headers: [("Range", "bytes=60000-")])
            #expect(tail.status == 206)
            #expect(server.bytesSent(forKey: "k") == 140_000)

            let failed = try await client.fetch(url)
            #expect(failed.status == 503)
            _ = try await client.fetch(url, method: "HEAD")
            #expect(server.bytesSent(forKey: "k") == 140_000)

            let dropped = server.url("/file/d.bin", ["key": "k", "size": "100000", "drop": "30000", "chunkSize": "4096"])
            let reply = try await RawHTTP.get(port: server.port, target: String(dropped.dropFirst(server.baseURL.count)))
            #expect(reply.body.count == 30_000)
            #expect(server.bytesSent(forKey: "k") == 170_000)
            #expect(server.bytesSent(forKey: "other") == 0)
        }
    }
}
