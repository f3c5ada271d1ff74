import Foundation
import Testing
@testable import Haul

/// Proxy choice as curl makes it, without I/O: the variables and their precedence, proxy
/// URLs with credentials, and `no_proxy` matching.
@Suite("Proxy settings")
struct ProxySettingsTests {
    /// Credentials are percent-decoded; the port defaults to 1080; only http proxies are taken.
    @Test func proxyURLs() throws {
        let proxy = try #require(ProxySettings.Proxy(url: "http://us%40er:p%3Ass@proxy.example:3128"))
        #expect(proxy == ProxySettings.Proxy(host: "proxy.example", port: 3128, username: "us@er", password: "p:ss"))
        #expect(ProxySettings.Proxy(url: "proxy.example")?.port == 1080)
        #expect(ProxySettings.Proxy(url: "proxy.example:8080")?.host == "proxy.example")
        #expect(ProxySettings.Proxy(url: "socks5://proxy.example:1080") == nil)
        #expect(ProxySettings.Proxy(url: "https://proxy.example") == nil)
        #expect(ProxySettings.Proxy(url: "") == nil)
    }

    /// `http_proxy` only in lower case; `https_proxy` either way; `all_proxy` fills in for
    /// whichever is unset; an unusable value is reported, not used.
    @Test func environmentPrecedence() {
        let (settings, ignored) = ProxySettings.fromEnvironment([
            "HTTP_PROXY": "http://cgi-injected:1", "all_proxy": "http://all:2", "HTTPS_PROXY": "http://secure:3",
            "NO_PROXY": "internal.example,.corp",
        ])
        #expect(settings.http?.host == "all")
        #expect(settings.https?.host == "secure")
        #expect(settings.noProxy == ["internal.example", ".corp"])
        #expect(ignored.isEmpty)
        let socks = ProxySettings.fromEnvironment(["https_proxy": "socks5h://s:1", "all_proxy": "http://all:2"])
        #expect(socks.settings.https == nil)
        #expect(socks.unusable == ["https_proxy=socks5h://s:1"])
    }

    /// A name matches itself and its subdomains, an address only itself, `*` everything;
    /// the URL's scheme picks the proxy.
    @Test func noProxyMatching() throws {
        let proxy = ProxySettings.Proxy(host: "p", port: 1)
        let settings = ProxySettings(http: proxy, https: nil, noProxy: ["example.com", ".corp", "10.0.0.1"])
        #expect(settings.proxy(for: URL(string: "http://example.com/a")!) == nil)
        #expect(settings.proxy(for: URL(string: "http://a.b.example.com/a")!) == nil)
        #expect(settings.proxy(for: URL(string: "http://x.corp/a")!) == nil)
        #expect(settings.proxy(for: URL(string: "http://notexample.com/a")!) == proxy)
        #expect(settings.proxy(for: URL(string: "http://10.0.0.1/a")!) == nil)
        #expect(settings.proxy(for: URL(string: "http://110.0.0.1/a")!) == proxy)
        #expect(settings.proxy(for: URL(string: "https://elsewhere.org/a")!) == nil)
        #expect(ProxySettings(http: proxy, noProxy: ["*"]).proxy(for: URL(string: "http://any.where/")!) == nil)
    }
}
