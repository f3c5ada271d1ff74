import HaulTestServer
import Testing

@Suite("Body faults", .timeLimit(.minutes(2)))
struct FaultTests {
    /// With `drop=N` the client sees an error before the declared length, never a clean response.
    @Test func dropIsAnErrorForTheClient() async throws {
        try await withServerAndClient { server, client in
            let response = try await client.fetch(server.url("/file/d.bin", ["size": "100000", "drop": "40000", "chunkSize": "4096"]))
            #expect(response.status == 200)
            #expect(response.header("Content-Length") == "100000")
            #expect(response.bodyError != nil)
            // AsyncHTTPClient may discard bytes it buffered when the connection fails, so only a prefix.
            #expect(response.body.count <= 40_000)
            #expect(response.body.isContent(seed: 0, size: response.body.count))
        }
    }

    /// `drop=N` puts exactly the first N body bytes on the wire and then closes, even to a slow client deep into a large body.
    @Test(arguments: [(100_000, 40_000, 4096, false), (16 * 1_048_576, 6 * 1_048_576 + 7, 65_536, false), (8 * 1_048_576, 3 * 1_048_576 + 1, 65_536, true)])
    func dropIsExactOnTheWire(size: Int, drop: Int, chunkSize: Int, slowReader: Bool) async throws {
        try await withTestServer { server in
            let target = "/file/raw?size=\(size)&drop=\(drop)&chunkSize=\(chunkSize)"
            let reply = try await RawHTTP.get(port: server.port, target: target, slowReader: slowReader)
            #expect(reply.status == 200)
            #expect(reply.header("content-length") == Array("\(size)".utf8))
            #expect(reply.body.count == drop)
            #expect(reply.body.isContent(seed: 0, size: drop))
        }
    }

    /// `dropTimes=1` drops only the first request; a resume with Range and If-Range completes the file.
    @Test func dropOnceThenResume() async throws {
        try await withServerAndClient { server, client in
            let url = server.url("/file/resume.bin", ["size": "10000", "drop": "3000", "dropTimes": "1"])
            let first = try await RawHTTP.get(port: server.port, target: String(url.dropFirst(server.baseURL.count)))
            #expect(first.body.count == 3000)
            let etag = String(decoding: try #require(first.header("etag")), as: UTF8.self)
            let rest = try await client.fetch(url, headers: [("Range", "bytes=3000-"), ("If-Range", etag)])
            #expect(rest.status == 206)
            #expect(rest.bodyError == nil)
            #expect((first.body + rest.body).isContent(seed: 0, size: 10_000))
        }
    }

    /// When the content changes between a drop and the resume, If-Range fails and the new file comes whole.
    @Test func resumeAfterChangeGetsFullNewContent() async throws {
        try await withServerAndClient { server, client in
            let url = server.url("/file/changing", ["size": "8000", "drop": "2000", "dropTimes": "1", "changeAfter": "1"])
            let first = try await client.fetch(url)
            #expect(first.bodyError != nil)
            let etag = try #require(first.header("ETag"))
            let second = try await client.fetch(url, headers: [("Range", "bytes=2000-"), ("If-Range", etag)])
            #expect(second.status == 200)
            #expect(second.header("ETag") != etag)
            #expect(second.body.isContent(seed: 1, size: 8000))
        }
    }

    /// A dropped 206 is cut after N bytes of the partial body.
    @Test func dropAppliesToPartialResponses() async throws {
        try await withTestServer { server in
            let reply = try await RawHTTP.get(port: server.port, target: "/file/p?size=10000&drop=100", headers: [("Range", "bytes=5000-")])
            #expect(reply.status == 206)
            #expect(reply.header("content-length") == Array("5000".utf8))
            #expect(reply.body.isContent(seed: 0, range: 5000..<5100))
        }
    }

    /// `lengthDelta=+D` declares D more bytes than exist, sends the real ones, and closes: an error, not a hang.
    @Test func positiveLengthDeltaClosesAfterShortBody() async throws {
        try await withServerAndClient { server, client in
            let response = try await client.fetch(server.url("/file/long", ["size": "5000", "lengthDelta": "100"]))
            #expect(response.header("Content-Length") == "5100")
            #expect(response.bodyError != nil)
            let reply = try await RawHTTP.get(port: server.port, target: "/file/long?size=5000&lengthDelta=100")
            #expect(reply.body.isContent(seed: 0, size: 5000))
        }
    }

    /// `lengthDelta=-D` declares and sends D fewer bytes: a clean response truncated against the true file.
    @Test func negativeLengthDeltaTruncatesCleanly() async throws {
        try await withServerAndClient { server, client in
            let url = server.url("/file/short", ["size": "5000", "lengthDelta": "-100"])
            let response = try await client.fetch(url)
            #expect(response.status == 200)
            #expect(response.header("Content-Length") == "4900")
            #expect(response.bodyError == nil)
            #expect(response.body.isContent(seed: 0, size: 4900))
            // The connection stayed healthy: the next request on it succeeds.
            #expect(try await client.fetch(url).bodyError == nil)
        }
    }

    /// `rate=N` spreads the body over at least (size - last chunk) / N seconds.
    @Test func rateThrottlesTheBody() async throws {
        try await withServerAndClient { server, client in
            let clock = ContinuousClock()
            let start = clock.now
            // 40,000 bytes at 100,000 B/s in 5,000-byte chunks: the last chunk leaves at >= 0.35 s.
            let response = try await client.fetch(server.url("/file/slow", ["size": "40000", "rate": "100000"]))
            let elapsed = clock.now - start
            #expect(response.body.isContent(seed: 0, size: 40_000))
            #expect(elapsed >= .milliseconds(340))
        }
    }
}
