import Foundation
import HaulTestServer
import HaulTestSupport
import Testing

/// Credentials in `haul get`: user info in the URL and `--http-user`/`--http-passwd` become
/// Basic `Authorization` for the URL's server; neither they nor `Authorization` and `Cookie`
/// headers are sent to another server after a redirect (127.0.0.1 → localhost here).
@Suite(.timeLimit(.minutes(2))) struct GetCredentialTests {
    static func basic(_ user: String, _ password: String) -> String {
        "Basic " + Data("\(user):\(password)".utf8).base64EncodedString()
    }

    /// Authorization and Cookie headers reach the first server, not the one a redirect leads to;
    /// a redirect on the same server keeps them.
    @Test func headersStayWithTheirServer() async throws {
        try await withTestServer { server in
            try await withTemporaryDirectory { directory in
                let elsewhere = "http://localhost:\(server.port)/file/far.bin?size=1000"
                let sameServer = server.url("/file/near.bin", ["size": "1000"])
                for (key, target) in [("far", elsewhere), ("near", sameServer)] {
                    let result = try await HaulProcess.run([
                        "get", "-o", "\(key).bin", "--header", "Authorization: Bearer secret-token", "--header", "Cookie: session=42",
                        server.url("/redirect-to", ["location": target, "key": key]),
                    ], in: directory.url)
                    #expect(result.status == 0, "stderr: \(result.stderr)")
                }
                for hop in server.requests(forKey: "far") + server.requests(forKey: "near") {
                    #expect(hop.header("authorization") == "Bearer secret-token")
                    #expect(hop.header("cookie") == "session=42")
                }
                let far = try #require(server.requests(forKey: "/file/far.bin").first)
                #expect(far.header("authorization") == nil)
                #expect(far.header("cookie") == nil)
                let near = try #require(server.requests(forKey: "/file/near.bin").first)
                #expect(near.header("authorization") == "Bearer secret-token")
                #expect(near.header("cookie") == "session=42")
                #expect(directory.size(of: "far.bin") == 1000)
                #expect(directory.size(of: "near.bin") == 1000)
            }
        }
    }

    /// User info in the URL is sent as Basic authorization (percent-decoded) to that server
    /// only, and never appears in the final URL reported.
    @Test func userInfoInTheURL() async throws {
        try await withTestServer { server in
            try await withTemporaryDirectory { directory in
                let direct = "http://ann:p%40ss@127.0.0.1:\(server.port)/file/mine.bin?size=2000"
                let result = try await HaulProcess.run(["get", "--json", direct], in: directory.url)
                #expect(result.status == 0, "stderr: \(result.stderr)")
                #expect(server.requests(forKey: "/file/mine.bin").first?.header("authorization") == Self.basic("ann", "p@ss"))
                let started = try #require(try JSONEventLine.decodeAll(result.stdoutLines).first { $0.event == "started" })
                #expect(started.finalURL == "http://127.0.0.1:\(server.port)/file/mine.bin?size=2000")

                let redirected = "http://ann:pw@127.0.0.1:\(server.port)/redirect-to?key=hop&location="
                    + "http%3A%2F%2Flocalhost%3A\(server.port)%2Ffile%2Fother.bin%3Fsize%3D2000"
                let away = try await HaulProcess.run(["get", redirected], in: directory.url)
                #expect(away.status == 0, "stderr: \(away.stderr)")
                #expect(server.requests(forKey: "hop").first?.header("authorization") == Self.basic("ann", "pw"))
                #expect(server.requests(forKey: "/file/other.bin").first?.header("authorization") == nil)
            }
        }
    }

    /// `--netrc-optional` sends the host's ~/.netrc entry, and not past a redirect to another server.
    @Test func netrcOptional() async throws {
        try await withTestServer { server in
            try await withTemporaryDirectory { directory in
                try directory.write("machine 127.0.0.1 login carol password n3trc\n", to: ".netrc")
                let url = server.url("/redirect-to", ["location": "http://localhost:\(server.port)/file/n.bin?size=300", "key": "netrc"])
                let result = try await HaulProcess.run(["get", "--netrc-optional", url], in: directory.url, environment: ["HOME": directory.path])
                #expect(result.status == 0, "stderr: \(result.stderr)")
                #expect(server.requests(forKey: "netrc").first?.header("authorization") == Self.basic("carol", "n3trc"))
                #expect(server.requests(forKey: "/file/n.bin").first?.header("authorization") == nil)
                let without = try await HaulProcess.run(["get", "-o", "plain.bin", server.url("/file/plain.bin", ["size": "10"])], in: directory.url, environment: ["HOME": directory.path])
                #expect(without.status == 0)
                #expect(server.requests(forKey: "/file/plain.bin").first?.header("authorization") == nil)
            }
        }
    }

    /// `--http-user`/`--http-passwd` go to the URL's server and not past a redirect to another.
    @Test func httpUserAndPassword() async throws {
        try await withTestServer { server in
            try await withTemporaryDirectory { directory in
                let result = try await HaulProcess.run([
                    "get", "--http-user", "bob", "--http-passwd", "s3cret",
                    server.url("/redirect-to", ["location": "http://localhost:\(server.port)/file/b.bin?size=500", "key": "first"]),
                ], in: directory.url)
                #expect(result.status == 0, "stderr: \(result.stderr)")
                #expect(server.requests(forKey: "first").first?.header("authorization") == Self.basic("bob", "s3cret"))
                #expect(server.requests(forKey: "/file/b.bin").first?.header("authorization") == nil)
                let lonely = try await HaulProcess.run(["get", "--http-passwd", "x", server.url("/file/c.bin")], in: directory.url)
                #expect(lonely.status == 2)
            }
        }
    }
}
