import Foundation
import HaulTestServer
import HaulTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `haul get` and `haul daemon` through a real SOCKS5 proxy (microsocks on 127.0.0.1): from
/// `all_proxy` or the options, http and https, bypassed for `no_proxy` hosts; what Haul cannot do with SOCKS
/// (credentials, SOCKS4) refused with exit 2; a proxy that is down is waited for like a server
/// that is down. Every check that a download went through the proxy reads microsocks' log of
/// the connections it made, which a direct connection never adds to.
@Suite(.serialized, .timeLimit(.minutes(2))) struct GetSocksProxyTests {
    /// `all_proxy=socks5h://…` carries a download through the proxy, and the host name goes
    /// to the proxy unresolved (microsocks logs `localhost`, not an address).
    @Test func allProxyFromTheEnvironment() async throws {
        try await MicroSocks.with { proxy in
            try await withTestServer { server in
                try await withTemporaryDirectory { directory in
                    let url = server.url("/file/s.bin", ["size": "60000", "seed": "3"]).replacingOccurrences(of: "127.0.0.1", with: "localhost")
                    let result = try await HaulProcess.run(["get", url], in: directory.url, environment: ["all_proxy": proxy.url()])
                    #expect(result.status == 0, "stderr: \(result.stderr)")
                    #expect(directory.contents(of: "s.bin") == Checksums.content(seed: 3, size: 60_000))
                    #expect(proxy.connections() == ["localhost:\(server.port)"])
                    #expect(server.requests(forKey: "/file/s.bin").count == 1)
                }
            }
        }
    }

    /// A download split over several connections opens every one of them through the proxy.
    @Test func splitDownloadThroughTheProxy() async throws {
        try await MicroSocks.with { proxy in
            try await withTestServer { server in
                try await withTemporaryDirectory { directory in
                    let size = 1 << 20
                    let content = Checksums.content(seed: 33, size: size)
                    let url = server.url("/file/split.bin", ["size": "\(size)", "seed": "33", "rate": "\(2 << 20)"])
                    let result = try await HaulProcess.run([
                        "get", "-s", "4", "-x", "4", "--min-split-size", "64K", "--all-proxy", proxy.url(), url,
                    ], in: directory.url)
                    #expect(result.status == 0, "stderr: \(result.stderr)")
                    #expect(directory.contents(of: "split.bin") == content)
                    #expect(server.requests(forKey: "/file/split.bin").count >= 4)
                    let connections = proxy.connections()
                    #expect(connections.count >= 2)
                    #expect(connections.allSatisfy { $0 == "127.0.0.1:\(server.port)" }, "\(connections)")
                }
            }
        }
    }

    /// An https download goes through `--https-proxy socks5://…` with TLS end to end (the
    /// private CA still has to be trusted); `socks5://` sends the name to the proxy as well.
    @Test func httpsThroughTheProxy() async throws {
        try await MicroSocks.with { proxy in
            try await NginxTLS.with { nginx in
                try await withTemporaryDirectory { directory in
                    let content = Checksums.content(seed: 9, size: 80_000)
                    try nginx.serve(content, as: "t.bin")
                    let result = try await HaulProcess.run([
                        "get", "--https-proxy", proxy.url(scheme: "socks5"), "--ca-certificate", nginx.caFile, nginx.url("t.bin"),
                    ], in: directory.url)
                    #expect(result.status == 0, "stderr: \(result.stderr)")
                    #expect(directory.contents(of: "t.bin") == content)
                    #expect(proxy.connections() == ["127.0.0.1:\(nginx.port)"])
                }
            }
        }
    }

    /// A host in `no_proxy` (or `--no-proxy`) is reached directly, past the SOCKS proxy.
    @Test func noProxyGoesDirect() async throws {
        try await MicroSocks.with { proxy in
            try await withTestServer { server in
                try await withTemporaryDirectory { directory in
                    let url = server.url("/file/n.bin", ["size": "2000"])
                    let fromEnvironment = try await HaulProcess.run(
                        ["get", "-o", "env.bin", url], in: directory.url,
                        environment: ["all_proxy": proxy.url(), "no_proxy": "example.com, 127.0.0.1"])
                    #expect(fromEnvironment.status == 0, "stderr: \(fromEnvironment.stderr)")
                    let fromOption = try await HaulProcess.run(
                        ["get", "-o", "option.bin", "--all-proxy", proxy.url(), "--no-proxy", "*", url], in: directory.url)
                    #expect(fromOption.status == 0, "stderr: \(fromOption.stderr)")
                    #expect(directory.size(of: "env.bin") == 2000)
                    #expect(directory.size(of: "option.bin") == 2000)
                    #expect(proxy.connections().isEmpty)
                }
            }
        }
    }

    /// `haul daemon --all-proxy socks5h://…` carries the downloads it is given through the proxy.
    @Test func daemonDownloadsThroughTheProxy() async throws {
        try await MicroSocks.with { proxy in
            try await withTestServer { server in
                try await withTemporaryDirectory { directory in
                    let socket = directory.path + "/d.sock"
                    try FileManager.default.createDirectory(at: directory.file("files"), withIntermediateDirectories: true)
                    let daemon = try HaulProcess([
                        "daemon", "--socket", socket, "--state-dir", directory.path + "/state", "--no-tcp",
                        "--dir", directory.file("files").path, "--all-proxy", proxy.url(),
                    ], in: directory.url)
                    defer { daemon.send(SIGKILL) }
                    #expect(await daemon.stderr.firstLine { $0.hasPrefix("haul daemon: ready") } != nil)
                    let url = server.url("/file/d.bin", ["size": "30000", "seed": "2"])
                    let added = try await HaulProcess.run(["add", "--socket", socket, "--out", "d.bin", url], in: directory.url)
                    #expect(added.status == 0, "stderr: \(added.stderr)")
                    let watched = try await HaulProcess.run(["watch", "--socket", socket, "--until-done"], in: directory.url)
                    #expect(watched.status == 0, "stderr: \(watched.stderr)")
                    #expect(directory.contents(of: "files/d.bin") == Checksums.content(seed: 2, size: 30_000))
                    #expect(proxy.connections() == ["127.0.0.1:\(server.port)"])
                }
            }
        }
    }

    /// What Haul cannot do with SOCKS is refused with exit 2 before anything is fetched, from
    /// an option or a variable: credentials (AsyncHTTPClient has no SOCKS authentication),
    /// SOCKS4 (`socks4`, `socks4a`, and `socks`, which curl takes as SOCKS4). `haul daemon`
    /// refuses to start with them too.
    @Test func whatHaulCannotDoIsRefused() async throws {
        try await withTestServer { server in
            try await withTemporaryDirectory { directory in
                let url = server.url("/file/r.bin", ["size": "100"])
                let withCredentials = "socks5h://user:secret@127.0.0.1:1080"
                let option = try await HaulProcess.run(["get", "--all-proxy", withCredentials, url], in: directory.url)
                #expect(option.status == 2, "stderr: \(option.stderr)")
                #expect(option.stderr.contains("user name and password"))
                #expect(!option.stderr.contains("secret"))
                let variable = try await HaulProcess.run(["get", url], in: directory.url, environment: ["all_proxy": withCredentials])
                #expect(variable.status == 2, "stderr: \(variable.stderr)")
                #expect(variable.stderr.contains("$all_proxy"))
                for socks4 in ["socks4://127.0.0.1:1080", "socks4a://127.0.0.1:1080", "socks://127.0.0.1:1080"] {
                    let refused = try await HaulProcess.run(["get", url], in: directory.url, environment: ["https_proxy": "", "http_proxy": socks4])
                    #expect(refused.status == 2, "\(socks4): \(refused.stderr)")
                    #expect(refused.stderr.contains("SOCKS4"), "\(socks4): \(refused.stderr)")
                }
                let daemon = try await HaulProcess.run(
                    ["daemon", "--no-tcp", "--socket", directory.url.path + "/d.sock", "--state-dir", directory.url.path + "/state"],
                    in: directory.url, environment: ["all_proxy": withCredentials])
                #expect(daemon.status == 2, "stderr: \(daemon.stderr)")
                #expect(daemon.stderr.contains("user name and password"))
                #expect(server.requests(forKey: "/file/r.bin").isEmpty)
                #expect(!FileManager.default.fileExists(atPath: directory.url.appendingPathComponent("r.bin").path))
            }
        }
    }

    /// A SOCKS proxy that wants a user name and password gets none (Haul has none to give):
    /// the download fails at once with exit 2, saying why, and never goes direct.
    @Test func proxyThatWantsCredentialsIsNotBypassed() async throws {
        try await MicroSocks.with(credentials: ("haul", "s3cret")) { proxy in
            try await withTestServer { server in
                try await withTemporaryDirectory { directory in
                    let url = server.url("/file/w.bin", ["size": "1000"])
                    let result = try await HaulProcess.run(["get", "--json", "--all-proxy", proxy.url(), url], in: directory.url)
                    #expect(result.status == 2, "stderr: \(result.stderr)")
                    let events = try JSONEventLine.decodeAll(result.stdoutLines)
                    #expect(!events.contains { $0.event == "retrying" })
                    let failure = try #require(events.first { $0.event == "failed" }?.error)
                    #expect(failure.code == "unsupportedProxy")
                    #expect(failure.message.contains("wants"), "\(failure.message)")
                    #expect(server.requests(forKey: "/file/w.bin").isEmpty)
                }
            }
        }
    }

    /// A server that does not speak SOCKS5 (here an HTTP server) given as a SOCKS proxy fails
    /// the download at once with exit 2, saying so, and never sends the request directly.
    @Test func proxyThatIsNotSOCKSIsRefused() async throws {
        try await withTestServer { server in
            try await withTemporaryDirectory { directory in
                let url = server.url("/file/h.bin", ["size": "100"])
                let result = try await HaulProcess.run(
                    ["get", "--json", "--all-proxy", "socks5h://127.0.0.1:\(server.port)", url], in: directory.url)
                #expect(result.status == 2, "stderr: \(result.stderr)")
                let events = try JSONEventLine.decodeAll(result.stdoutLines)
                #expect(!events.contains { $0.event == "retrying" })
                let failure = try #require(events.first { $0.event == "failed" }?.error)
                #expect(failure.message.contains("does not answer as a SOCKS5 proxy"), "\(failure.message)")
                #expect(server.requests(forKey: "/file/h.bin").isEmpty)
            }
        }
    }

    /// A SOCKS proxy that is down is a connection failure, retried and then waited for like a
    /// server that is down, never a reason to go direct: nothing reaches the server until the
    /// proxy is started on its port, and then the download arrives through it.
    @Test func proxyThatIsDownIsWaitedFor() async throws {
        let port = try LoopbackPort.free()
        try await withTestServer { server in
            try await withTemporaryDirectory { directory in
                let url = server.url("/file/late.bin", ["size": "5000", "seed": "6"])
                let run = try HaulProcess([
                    "get", "--json", "--max-tries", "0", "--retries", "1", "--retry-wait", "0.1",
                    "--all-proxy", "socks5h://127.0.0.1:\(port)", url,
                ], in: directory.url)
                let waited = await run.stdout.firstLine { line in
                    guard let event = try? JSONEventLine.decode(line), event.event == "retrying" else { return false }
                    return event.waiting == true
                }
                #expect(waited != nil)
                let retry = try JSONEventLine.decode(try #require(waited))
                #expect(retry.error?.code == "connectionFailed")
                #expect(retry.error?.message.contains("cannot reach the proxy socks5h://127.0.0.1:\(port)") == true, "\(retry.error?.message ?? "")")
                #expect(server.requests(forKey: "/file/late.bin").isEmpty)

                try await MicroSocks.with(port: port) { proxy in
                    let result = await run.result()
                    #expect(result.status == 0, "stderr: \(result.stderr)")
                    #expect(directory.contents(of: "late.bin") == Checksums.content(seed: 6, size: 5000))
                    #expect(proxy.connections() == ["127.0.0.1:\(server.port)"])
                }
            }
        }
    }

    /// Without `--max-tries 0`, a proxy that stays down fails the download with exit 4 (network)
    /// after the quick retries, and the server never sees a request.
    @Test func proxyThatStaysDownFails() async throws {
        let port = try LoopbackPort.free()
        try await withTestServer { server in
            try await withTemporaryDirectory { directory in
                let url = server.url("/file/down.bin", ["size": "100"])
                let result = try await HaulProcess.run(
                    ["get", "--retries", "1", "--retry-wait", "0.1", url], in: directory.url,
                    environment: ["all_proxy": "socks5h://127.0.0.1:\(port)"])
                #expect(result.status == 4, "stderr: \(result.stderr)")
                #expect(result.stderr.contains("cannot reach the proxy"), "stderr: \(result.stderr)")
                #expect(server.requests(forKey: "/file/down.bin").isEmpty)
            }
        }
    }
}
