import Foundation
import Haul
import HaulTestServer
import HaulTestSupport
import Testing

/// The library never sends a request meant for a proxy directly: a proxy that is set but
/// cannot be used fails the download at once (`.unsupportedProxy`), and one that cannot be
/// reached is a transient connection failure that names the proxy. In both cases the origin
/// server sees no request. (Downloads that do go through a SOCKS proxy: GetSocksProxyTests.)
@Suite("Proxy refusal", .timeLimit(.minutes(3)))
struct ProxyRefusalTests {
    /// A SOCKS proxy with credentials (which AsyncHTTPClient cannot send) set in the
    /// configuration, bypassing `Proxy.parse`: the download fails without retries.
    @Test func socksWithCredentialsFailsWithoutGoingDirect() async throws {
        try await withTestServer { server in
            let temporary = try TemporaryDirectory()
            defer { temporary.remove() }
            let dir = temporary.url
            var configuration = Support.fastConfiguration(retries: 3)
            let proxy = ProxySettings.Proxy(host: "127.0.0.1", port: 1080, username: "u", password: "p", kind: .socks5h)
            configuration.proxy = ProxySettings(http: proxy, https: proxy)
            let info = try await Support.downloadOne(Support.request(server, "/file/u.bin", ["size": "1000"], in: dir), configuration: configuration)
            #expect(info.state == .failed)
            #expect(info.error?.code == .unsupportedProxy)
            #expect(info.error?.isTransient == false)
            #expect(info.error?.message.contains("user name and password") == true)
            #expect(server.requests(forKey: "/file/u.bin").isEmpty)
            #expect(Support.listing(dir).isEmpty)
        }
    }

    /// A SOCKS proxy nothing listens for: retried as a connection failure that names the
    /// proxy, then failed; never fetched directly.
    @Test func unreachableSocksProxyIsAConnectionFailure() async throws {
        try await withTestServer { server in
            let temporary = try TemporaryDirectory()
            defer { temporary.remove() }
            let dir = temporary.url
            var configuration = Support.fastConfiguration(retries: 2)
            // Held bound (connections refused) so that no other server of the run takes it.
            let reserved = try ReservedPort()
            defer { reserved.release() }
            let port = reserved.port
            configuration.proxy = ProxySettings(http: ProxySettings.Proxy(host: "127.0.0.1", port: port, kind: .socks5))
            let info = try await Support.downloadOne(Support.request(server, "/file/x.bin", ["size": "1000"], in: dir), configuration: configuration)
            #expect(info.state == .failed)
            #expect(info.error?.code == .connectionFailed)
            #expect(info.error?.message.contains("cannot reach the proxy socks5://127.0.0.1:\(port): connection refused") == true,
                    "\(info.error?.message ?? "")")
            #expect(server.requests(forKey: "/file/x.bin").isEmpty)
        }
    }
}
