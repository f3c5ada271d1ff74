import HaulTestServer
import Testing

@Suite("Validators and content versions", .timeLimit(.minutes(2)))
struct ValidatorTests {
    /// By default a file has a strong ETag naming seed, version and size, and a fixed Last-Modified.
    @Test func defaultValidators() async throws {
        try await withServerAndClient { server, client in
            let response = try await client.fetch(server.url("/file/v", ["size": "10", "seed": "3"]))
            #expect(response.header("ETag") == "\"s3-v0-10\"")
            #expect(response.header("Last-Modified") == "Mon, 01 Jan 2024 00:00:00 GMT")
            #expect(response.header("Accept-Ranges") == "bytes")
        }
    }

    /// `etag=weak` adds `W/`, `etag=none` and `lm=0` leave the headers out.
    @Test func validatorsCanBeWeakOrAbsent() async throws {
        try await withServerAndClient { server, client in
            let weak = try await client.fetch(server.url("/file/w", ["etag": "weak"]))
            #expect(weak.header("ETag") == "W/\"s0-v0-1024\"")
            let bare = try await client.fetch(server.url("/file/n", ["etag": "none", "lm": "0"]))
            #expect(bare.status == 200)
            #expect(bare.header("ETag") == nil)
            #expect(bare.header("Last-Modified") == nil)
        }
    }

    /// `changeContent(forKey:)` serves seed+1 bytes with a new ETag and a Last-Modified one hour later.
    @Test func changeContentBumpsVersion() async throws {
        try await withServerAndClient { server, client in
            let url = server.url("/file/c.bin", ["size": "2048", "seed": "5"])
            let before = try await client.fetch(url)
            server.changeContent(forKey: "/file/c.bin")
            #expect(server.contentVersion(forKey: "/file/c.bin") == 1)
            let after = try await client.fetch(url)
            #expect(before.body.isContent(seed: 5, size: 2048))
            #expect(after.body.isContent(seed: 6, size: 2048))
            #expect(after.header("ETag") == "\"s5-v1-2048\"")
            #expect(after.header("Last-Modified") == "Mon, 01 Jan 2024 01:00:00 GMT")
        }
    }

    /// With `changeAfter=2` the first two requests get version 0 and every later one version 1.
    @Test func changeAfterBumpsOnceAfterNRequests() async throws {
        try await withServerAndClient { server, client in
            let url = server.url("/file/x", ["changeAfter": "2", "size": "64"])
            var etags: [String?] = []
            for _ in 0..<4 {
                etags.append(try await client.fetch(url).header("ETag"))
            }
            #expect(etags == ["\"s0-v0-64\"", "\"s0-v0-64\"", "\"s0-v1-64\"", "\"s0-v1-64\""])
            #expect(try await client.fetch(url).body.isContent(seed: 1, size: 64))
        }
    }

    /// `POST /control/change?key=K` answers 204 and bumps K's version, for shell-driven tests.
    @Test func controlEndpointChangesContent() async throws {
        try await withServerAndClient { server, client in
            let control = try await client.fetch(server.url("/control/change", ["key": "shared"]), method: "POST")
            #expect(control.status == 204)
            #expect(server.contentVersion(forKey: "shared") == 1)
            let file = try await client.fetch(server.url("/file/any", ["key": "shared", "size": "8"]))
            #expect(file.header("ETag") == "\"s0-v1-8\"")
            #expect(file.body.isContent(seed: 1, size: 8))
            let missing = try await client.fetch(server.url("/control/change"), method: "POST")
            #expect(missing.status == 400)
        }
    }
}
