import HaulTestServer
import Testing

@Suite("Scripted statuses", .timeLimit(.minutes(2)))
struct StatusTests {
    /// `status=503,503,200` answers the k-th request with the k-th status, repeating the last, with Retry-After on errors.
    @Test func statusSequenceWithRetryAfter() async throws {
        try await withServerAndClient { server, client in
            let url = server.url("/file/s.bin", ["status": "503,503,200", "retryAfter": "2", "size": "100"])
            var statuses: [Int] = []
            for _ in 0..<4 {
                let response = try await client.fetch(url)
                statuses.append(response.status)
                if response.status == 503 {
                    #expect(response.header("Retry-After") == "2")
                    #expect(response.body == Array("error 503".utf8))
                    #expect(response.header("ETag") == nil)
                } else {
                    #expect(response.header("Retry-After") == nil)
                    #expect(response.body.isContent(seed: 0, size: 100))
                }
            }
            #expect(statuses == [503, 503, 200, 200])
            #expect(server.requests(forKey: "/file/s.bin").map(\.status) == [503, 503, 200, 200])
        }
    }

    /// `/status/<code>` answers with that code and a short body.
    @Test func statusEndpoint() async throws {
        try await withServerAndClient { server, client in
            let teapot = try await client.fetch(server.url("/status/418"))
            #expect(teapot.status == 418)
            #expect(teapot.body == Array("status 418".utf8))
            let unavailable = try await client.fetch(server.url("/status/503", ["retryAfter": "7"]))
            #expect(unavailable.status == 503)
            #expect(unavailable.header("Retry-After") == "7")
            #expect(try await client.fetch(server.url("/status/abc")).status == 400)
        }
    }

    /// Unparsable parameters are a 400 naming the parameter, not a silent default.
    @Test func invalidParametersAreRejected() async throws {
        try await withServerAndClient { server, client in
            let response = try await client.fetch(server.url("/file/bad", ["size": "-1"]))
            #expect(response.status == 400)
            #expect(String(decoding: response.body, as: UTF8.self).contains("size"))
            #expect(try await client.fetch(server.url("/nowhere")).status == 404)
        }
    }
}
