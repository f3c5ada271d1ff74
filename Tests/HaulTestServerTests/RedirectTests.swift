import HaulTestServer
import Testing

@Suite("Redirects", .timeLimit(.minutes(2)))
struct RedirectTests {
    /// `/redirect?n=3` takes exactly three hops with the requested code and ends at `/file/redirected`.
    @Test func chainOfRedirects() async throws {
        try await withServerAndClient { server, client in
            var url = server.url("/redirect", ["n": "3", "code": "307"])
            var hops: [Int] = []
            while true {
                let response = try await client.fetch(url)
                guard (300..<400).contains(response.status) else {
                    #expect(response.status == 200)
                    break
                }
                hops.append(response.status)
                url = try #require(response.header("Location"))
                #expect(url.hasPrefix(server.baseURL))
                #expect(hops.count <= 3)
            }
            #expect(hops == [307, 307, 307])
            #expect(url == server.baseURL + "/file/redirected")
            #expect(server.requests(forKey: "/redirect").count == 3)
            #expect(server.requests(forKey: "/file/redirected").count == 1)
        }
    }

    /// Every supported code is honoured, and `to=` sets the final target verbatim.
    @Test func codesAndTarget() async throws {
        try await withServerAndClient { server, client in
            for code in [301, 302, 303, 307, 308] {
                let response = try await client.fetch(server.url("/redirect", ["code": "\(code)", "to": "http://example.invalid/x?y=1"]))
                #expect(response.status == code)
                #expect(response.header("Location") == "http://example.invalid/x?y=1")
            }
            #expect(try await client.fetch(server.url("/redirect", ["code": "200"])).status == 400)
        }
    }

    /// `/loop` redirects to itself forever.
    @Test func loopRedirectsToItself() async throws {
        try await withServerAndClient { server, client in
            let response = try await client.fetch(server.url("/loop"))
            #expect(response.status == 302)
            #expect(response.header("Location") == server.baseURL + "/loop")
        }
    }

    /// `/redirect-to?location=RAW` sends that exact Location, hostile schemes included.
    @Test func rawLocation() async throws {
        try await withServerAndClient { server, client in
            for location in ["ftp://x/y", "file:///etc/passwd", "relative/path", "http://[::1"] {
                let response = try await client.fetch(server.url("/redirect-to", ["location": location]))
                #expect(response.status == 302)
                #expect(response.header("Location") == location)
            }
        }
    }
}
