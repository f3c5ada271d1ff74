import AsyncHTTPClient
import HaulTestServer
import HaulTestSupport
import Testing

@Suite("Held bodies", .timeLimit(.minutes(1)))
struct HoldTests {
    /// `hold=N` stops a body at offset N with the connection open until the test releases the
    /// key; then the rest arrives and the body is whole.
    @Test func bodyStopsAtTheOffsetUntilReleased() async throws {
        try await withServerAndClient { server, client in
            let url = server.url("/file/held.bin", ["size": "200000", "hold": "70000", "chunkSize": "16384"])
            let fetch = Task { try await client.fetch(url) }
            try await waitUntil("the body reached the hold", explaining: { "sent \(server.bytesSent(forKey: "/file/held.bin"))" }) {
                server.bytesSent(forKey: "/file/held.bin") == 70_000
            }
            #expect(server.responsesInProgress(forKey: "/file/held.bin") == 1, "held open, not ended")
            server.release(key: "/file/held.bin")
            let response = try await fetch.value
            #expect(response.bodyError == nil)
            #expect(response.body.isContent(seed: 0, size: 200_000))
            #expect(server.bytesSent(forKey: "/file/held.bin") == 200_000)
        }
    }

    /// A range that starts past the hold offset waits before its first byte; once released,
    /// the key's later bodies pass the offset without stopping.
    @Test func rangesPastTheOffsetWaitAndReleasedKeysAreNotHeld() async throws {
        try await withServerAndClient { server, client in
            let url = server.url("/file/past.bin", ["size": "50000", "hold": "10000"])
            let tail = Task { try await client.fetch(url, headers: [("Range", "bytes=20000-")]) }
            try await waitUntil("the range to be held") { server.responsesInProgress(forKey: "/file/past.bin") == 1 }
            #expect(server.bytesSent(forKey: "/file/past.bin") == 0)
            server.release(key: "/file/past.bin")
            let range = try await tail.value
            #expect(range.status == 206)
            #expect(range.body.isContent(seed: 0, range: 20_000..<50_000))
            let whole = try await client.fetch(url)
            #expect(whole.body.isContent(seed: 0, size: 50_000))
        }
    }
}
