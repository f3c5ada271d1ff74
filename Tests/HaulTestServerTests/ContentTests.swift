import HaulTestServer
import Testing

@Suite("Deterministic content", .timeLimit(.minutes(2)))
struct ContentTests {
    /// A `/file` body has the requested size and is exactly `TestContent.bytes(seed:size:)`.
    @Test func bodyMatchesSizeAndSeed() async throws {
        try await withServerAndClient { server, client in
            let response = try await client.fetch(server.url("/file/a.bin", ["size": "100003", "seed": "7"]))
            #expect(response.status == 200)
            #expect(response.bodyError == nil)
            #expect(response.header("Content-Length") == "100003")
            #expect(response.header("Content-Type") == "application/octet-stream")
            #expect(response.body.isContent(seed: 7, size: 100_003))
        }
    }

    /// Without parameters the body is 1024 bytes of seed 0, the same on every request.
    @Test func defaultsAreStable() async throws {
        try await withServerAndClient { server, client in
            let first = try await client.fetch(server.url("/file/default"))
            let second = try await client.fetch(server.url("/file/default"))
            #expect(first.body.count == 1024)
            #expect(first.body.isContent(seed: 0, size: 1024))
            #expect(second.body == first.body)
        }
    }

    /// `fill` at any offset and into any buffer shape yields the same bytes as `bytes`.
    @Test func fillAgreesWithBytesAtEveryAlignment() {
        let reference = TestContent.bytes(seed: 42, size: 4096)
        for offset in [0, 1, 3, 7, 8, 9, 1000, 4000] {
            for length in [0, 1, 5, 8, 17, 96] where offset + length <= reference.count {
                var array = [UInt8](repeating: 0, count: length)
                TestContent.fill(&array, seed: 42, offset: offset)
                #expect(array == Array(reference[offset..<offset + length]), "offset \(offset) length \(length)")
                var slice = ArraySlice([UInt8](repeating: 0, count: length + 2))[1..<length + 1]
                TestContent.fill(&slice, seed: 42, offset: offset)
                #expect(Array(slice) == Array(reference[offset..<offset + length]))
                #expect(TestContent.bytes(seed: 42, range: offset..<offset + length) == Array(reference[offset..<offset + length]))
            }
            #expect(TestContent.byte(at: offset, seed: 42) == reference[offset])
        }
    }

    /// Different seeds give different bytes, and content does not repeat at chunk multiples.
    @Test func contentIsNotPeriodic() {
        let content = TestContent.bytes(seed: 1, size: 3 * 65_536)
        let sameAsOtherSeed = content == TestContent.bytes(seed: 2, size: 3 * 65_536)
        let repeatsAtChunk = content[0..<4096] == content[65_536..<69_632]
        let repeatsAtPage = content[0..<4096] == content[4096..<8192]
        #expect(!sameAsOtherSeed)
        #expect(!repeatsAtChunk)
        #expect(!repeatsAtPage)
    }

    /// HEAD answers with the GET headers and no body.
    @Test func headHasHeadersButNoBody() async throws {
        try await withServerAndClient { server, client in
            let response = try await client.fetch(server.url("/file/h", ["size": "5000"]), method: "HEAD")
            #expect(response.status == 200)
            #expect(response.header("Content-Length") == "5000")
            #expect(response.header("ETag") == "\"s0-v0-5000\"")
            #expect(response.body.isEmpty)
            #expect(server.requests(forKey: "/file/h").map(\.method) == ["HEAD"])
        }
    }
}
