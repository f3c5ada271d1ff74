import HaulTestServer
import Testing

@Suite("Range and If-Range", .timeLimit(.minutes(2)))
struct RangeTests {
    /// `Range: bytes=a-` gets 206 with the tail of the content and `Content-Range: bytes a-(size-1)/size`.
    @Test func openEndedRange() async throws {
        try await withServerAndClient { server, client in
            let response = try await client.fetch(server.url("/file/r", ["size": "10000"]), headers: [("Range", "bytes=4000-")])
            #expect(response.status == 206)
            #expect(response.header("Content-Range") == "bytes 4000-9999/10000")
            #expect(response.header("Content-Length") == "6000")
            #expect(response.body.isContent(seed: 0, range: 4000..<10_000))
        }
    }

    /// `Range: bytes=a-b` gets exactly bytes a through b; an end past the size is clamped.
    @Test func closedRange() async throws {
        try await withServerAndClient { server, client in
            let url = server.url("/file/r", ["size": "10000", "seed": "9"])
            let middle = try await client.fetch(url, headers: [("Range", "bytes=10-19")])
            #expect(middle.status == 206)
            #expect(middle.header("Content-Range") == "bytes 10-19/10000")
            #expect(middle.body.isContent(seed: 9, range: 10..<20))
            let clamped = try await client.fetch(url, headers: [("Range", "bytes=9990-20000")])
            #expect(clamped.header("Content-Range") == "bytes 9990-9999/10000")
            #expect(clamped.body.count == 10)
        }
    }

    /// A range starting at or past the end is 416 with `Content-Range: bytes */size`.
    @Test func unsatisfiableRange() async throws {
        try await withServerAndClient { server, client in
            let response = try await client.fetch(server.url("/file/r", ["size": "100"]), headers: [("Range", "bytes=100-")])
            #expect(response.status == 416)
            #expect(response.header("Content-Range") == "bytes */100")
        }
    }

    /// If-Range with the current strong ETag or Last-Modified gives 206; a stale or weak one gives a full 200.
    @Test func ifRangeMatchesOnlyTheCurrentValidator() async throws {
        try await withServerAndClient { server, client in
            let url = server.url("/file/ir", ["size": "5000"])
            let first = try await client.fetch(url)
            let etag = try #require(first.header("ETag"))
            let date = try #require(first.header("Last-Modified"))

            let byETag = try await client.fetch(url, headers: [("Range", "bytes=1000-"), ("If-Range", etag)])
            #expect(byETag.status == 206)
            let byDate = try await client.fetch(url, headers: [("Range", "bytes=1000-"), ("If-Range", date)])
            #expect(byDate.status == 206)
            let weak = try await client.fetch(url, headers: [("Range", "bytes=1000-"), ("If-Range", "W/" + etag)])
            #expect(weak.status == 200)

            server.changeContent(forKey: "/file/ir")
            let stale = try await client.fetch(url, headers: [("Range", "bytes=1000-"), ("If-Range", etag)])
            #expect(stale.status == 200)
            #expect(stale.header("Content-Range") == nil)
            #expect(stale.body.isContent(seed: 1, size: 5000))
            let staleDate = try await client.fetch(url, headers: [("Range", "bytes=1000-"), ("If-Range", date)])
            #expect(staleDate.status == 200)
        }
    }

    /// With a weak ETag configured, even the server's own tag never satisfies If-Range.
    @Test func weakETagNeverSatisfiesIfRange() async throws {
        try await withServerAndClient { server, client in
            let url = server.url("/file/wk", ["etag": "weak", "lm": "0"])
            let tag = try #require(try await client.fetch(url).header("ETag"))
            let response = try await client.fetch(url, headers: [("Range", "bytes=1-"), ("If-Range", tag)])
            #expect(response.status == 200)
            #expect(response.body.count == 1024)
        }
    }

    /// With `ranges=0` the Range header is ignored (full 200) and no Accept-Ranges is sent.
    @Test func rangesCanBeDisabled() async throws {
        try await withServerAndClient { server, client in
            let response = try await client.fetch(server.url("/file/nr", ["ranges": "0", "size": "300"]), headers: [("Range", "bytes=100-")])
            #expect(response.status == 200)
            #expect(response.header("Accept-Ranges") == nil)
            #expect(response.body.isContent(seed: 0, size: 300))
        }
    }

    /// With `rangesFor=1` only the key's first request is served its range; later ones get the whole file.
    @Test func rangesForTheFirstRequestsOnly() async throws {
        try await withServerAndClient { server, client in
            let url = server.url("/file/rf", ["rangesFor": "1", "size": "300"])
            let first = try await client.fetch(url, headers: [("Range", "bytes=100-")])
            #expect(first.status == 206)
            #expect(first.body.count == 200)
            let second = try await client.fetch(url, headers: [("Range", "bytes=100-")])
            #expect(second.status == 200)
            #expect(second.header("Accept-Ranges") == nil)
            #expect(second.body.isContent(seed: 0, size: 300))
        }
    }

    /// Malformed or multi-range headers are ignored and the whole file is sent.
    @Test func malformedRangesAreIgnored() async throws {
        try await withServerAndClient { server, client in
            let url = server.url("/file/m", ["size": "300"])
            for header in ["bytes=5-1", "bytes=0-1,5-6", "items=0-1", "bytes=x-"] {
                let response = try await client.fetch(url, headers: [("Range", header)])
                #expect(response.status == 200, "\(header)")
                #expect(response.body.count == 300)
            }
            let suffix = try await client.fetch(url, headers: [("Range", "bytes=-100")])
            #expect(suffix.status == 206)
            #expect(suffix.header("Content-Range") == "bytes 200-299/300")
        }
    }
}
