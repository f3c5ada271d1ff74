import Foundation
import HaulTestServer
import HaulTestSupport
import Testing

/// `haul get` through a real HTTP proxy (tinyproxy on 127.0.0.1): chosen from curl's
/// environment variables or aria2's options, http and https (both tunnelled with CONNECT),
/// with credentials, and bypassed for `no_proxy` hosts.
@Suite(.serialized, .timeLimit(.minutes(2))) struct GetProxyTests {
    /// `http_proxy` from the environment carries an http download through the proxy.
    @Test func httpProxyFromTheEnvironment() async throws {
        try await TinyProxy.with { proxy in
            try await withTestServer { server in
                try await withTemporaryDirectory { directory in
                    let url = server.url("/file/p.bin", ["size": "50000", "seed": "4"])
                    let result = try await HaulProcess.run(["get", url], in: directory.url, environment: ["http_proxy": proxy.url()])
                    #expect(result.status == 0, "stderr: \(result.stderr)")
                    #expect(directory.contents(of: "p.bin") == Checksums.content(seed: 4, size: 50_000))
                    #expect(proxy.requests() == ["CONNECT 127.0.0.1:\(server.port) HTTP/1.1"])
                }
            }
        }
    }

    /// An https download goes through `--https-proxy` with CONNECT, and TLS is end to end
    /// (the private CA still has to be trusted).
    @Test func httpsThroughTheProxy() async throws {
        try await TinyProxy.with { proxy in
            try await NginxTLS.with { nginx in
                try await withTemporaryDirectory { directory in
                    let content = Checksums.content(seed: 8, size: 70_000)
                    try nginx.serve(content, as: "s.bin")
                    let result = try await HaulProcess.run([
                        "get", "--https-proxy", proxy.url(), "--ca-certificate", nginx.caFile, nginx.url("s.bin"),
                    ], in: directory.url)
                    #expect(result.status == 0, "stderr: \(result.stderr)")
                    #expect(directory.contents(of: "s.bin") == content)
                    #expect(proxy.requests() == ["CONNECT 127.0.0.1:\(nginx.port) HTTP/1.1"])
                }
            }
        }
    }

    /// A proxy that wants credentials refuses a client without them (exit 5, 407, not
    /// retried) and serves one that gives them in the proxy URL (`all_proxy`).
    @Test func proxyCredentials() async throws {
        try await TinyProxy.with(credentials: ("haul", "s3cret")) { proxy in
            try await withTestServer { server in
                try await withTemporaryDirectory { directory in
                    let url = server.url("/file/c.bin", ["size": "3000"])
                    let refused = try await HaulProcess.run(["get", "--json", "--all-proxy", proxy.url(), url], in: directory.url)
                    #expect(refused.status == 5, "stderr: \(refused.stderr)")
                    let events = try JSONEventLine.decodeAll(refused.stdoutLines)
                    #expect(!events.contains { $0.event == "retrying" })
                    #expect(events.first { $0.event == "failed" }?.error?.message.contains("407") == true)
                    #expect(server.requests(forKey: "/file/c.bin").isEmpty)

                    let result = try await HaulProcess.run(
                        ["get", url], in: directory.url, environment: ["all_proxy": proxy.url(user: "haul", password: "s3cret")])
                    #expect(result.status == 0, "stderr: \(result.stderr)")
                    #expect(directory.size(of: "c.bin") == 3000)
                    #expect(server.requests(forKey: "/file/c.bin").count == 1)
                }
            }
        }
    }

    /// A host in `no_proxy` (or `--no-proxy`) is reached directly.
    @Test func noProxyGoesDirect() async throws {
        try await TinyProxy.with { proxy in
            try await withTestServer { server in
                try await withTemporaryDirectory { directory in
                    let url = server.url("/file/d.bin", ["size": "2000"])
                    let fromEnvironment = try await HaulProcess.run(
                        ["get", "-o", "env.bin", url], in: directory.url,
                        environment: ["http_proxy": proxy.url(), "no_proxy": "example.com, 127.0.0.1"])
                    #expect(fromEnvironment.status == 0, "stderr: \(fromEnvironment.stderr)")
                    let fromOption = try await HaulProcess.run(
                        ["get", "-o", "option.bin", "--http-proxy", proxy.url(), "--no-proxy", "*", url], in: directory.url)
                    #expect(fromOption.status == 0, "stderr: \(fromOption.stderr)")
                    #expect(directory.size(of: "env.bin") == 2000)
                    #expect(directory.size(of: "option.bin") == 2000)
                    #expect(proxy.requests().isEmpty)
                }
            }
        }
    }

    /// A proxy option that is not a proxy URL Haul can use is a usage error (SOCKS proxies have
    /// their own tests: GetSocksProxyTests).
    @Test func badProxyOptionIsUsageError() async throws {
        try await withTemporaryDirectory { directory in
            for proxy in ["ftp://127.0.0.1:1080", "https://127.0.0.1:3128", "http://"] {
                let result = try await HaulProcess.run(["get", "--all-proxy", proxy, "http://127.0.0.1:9/a"], in: directory.url)
                #expect(result.status == 2, "\(proxy): \(result.stderr)")
                #expect(result.stderr.contains("--all-proxy"), "\(proxy): \(result.stderr)")
            }
        }
    }
}
