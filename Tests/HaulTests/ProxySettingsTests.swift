import Foundation
import Testing
@testable import Haul

/// Proxy choice as curl makes it, without I/O: the variables and their precedence, proxy
/// URLs with credentials, and `no_proxy` matching.
@Suite("Proxy settings")
struct ProxySettingsTests {
    /// Credentials are percent-decoded; the port defaults to 1080; http and SOCKS5 proxies are
    /// taken, everything else refused.
    @Test func proxyURLs() throws {
        let proxy = try #require(ProxySettings.Proxy(url: "http://us%40er:p%3Ass@proxy.example:3128"))
        #expect(proxy == ProxySettings.Proxy(host: "proxy.example", port: 3128, username: "us@er", password: "p:ss"))
        #expect(ProxySettings.Proxy(url: "proxy.example")?.port == 1080)
        #expect(ProxySettings.Proxy(url: "proxy.example:8080")?.host == "proxy.example")
        #expect(ProxySettings.Proxy(url: "proxy.example:8080")?.kind == .http)
        #expect(ProxySettings.Proxy(url: "socks5h://proxy.example") == ProxySettings.Proxy(host: "proxy.example", port: 1080, kind: .socks5h))
        #expect(ProxySettings.Proxy(url: "SOCKS5://[::1]:9050") == ProxySettings.Proxy(host: "::1", port: 9050, kind: .socks5))
        #expect(ProxySettings.Proxy(url: "https://proxy.example") == nil)
        #expect(ProxySettings.Proxy(url: "") == nil)
        #expect(ProxySettings.Proxy(host: "::1", port: 9050, kind: .socks5h).description == "socks5h://[::1]:9050")
    }

    /// What Haul cannot speak is an `.unsupportedProxy` error that says why, without the
    /// password: SOCKS with credentials, SOCKS4 (and `socks://`, SOCKS4 in curl), TLS proxies,
    /// other schemes, text that is not a URL.
    @Test func unusableProxiesAreRefusedWithTheReason() {
        let cases = [
            ("socks5h://user:secret@proxy.example:1080", "user name and password"),
            ("socks5://user@proxy.example:1080", "user name and password"),
            ("socks4://proxy.example:1080", "SOCKS4"), ("socks4a://proxy.example:1080", "SOCKS4"),
            ("socks://proxy.example:1080", "socks:// means SOCKS4"), ("https://user:secret@proxy.example", "over TLS"),
            ("ftp://proxy.example", "unsupported proxy scheme 'ftp'"), ("http://", "not a proxy URL"), ("  ", "empty"),
        ]
        for (text, reason) in cases {
            #expect("\(text)") { try ProxySettings.Proxy.parse(text) } throws: { error in
                guard let error = error as? HaulError else { return false }
                return error.code == .unsupportedProxy && error.message.contains(reason) && !error.message.contains("secret")
            }
        }
        let made = ProxySettings(http: ProxySettings.Proxy(host: "s", port: 1, username: "u", password: "p", kind: .socks5h))
        #expect(made.problem?.code == .unsupportedProxy)
        #expect(ProxySettings(http: ProxySettings.Proxy(host: "h", port: 1, username: "u", password: "p")).problem == nil)
    }

    /// `http_proxy` only in lower case; `https_proxy` either way; `all_proxy` fills in for
    /// whichever is unset; a value that cannot be used is an error naming its variable.
    @Test func environmentPrecedence() throws {
        let settings = try ProxySettings.fromEnvironment([
            "HTTP_PROXY": "http://cgi-injected:1", "all_proxy": "http://all:2", "HTTPS_PROXY": "http://secure:3",
            "NO_PROXY": "internal.example,.corp",
        ])
        #expect(settings.http?.host == "all")
        #expect(settings.https?.host == "secure")
        #expect(settings.noProxy == ["internal.example", ".corp"])
        let socks = try ProxySettings.fromEnvironment(["https_proxy": "socks5h://s:1", "all_proxy": "http://all:2"])
        #expect(socks.https == ProxySettings.Proxy(host: "s", port: 1, kind: .socks5h))
        #expect(socks.http?.host == "all")
        #expect { try ProxySettings.fromEnvironment(["ALL_PROXY": "socks4://s:1"]) } throws: { error in
            (error as? HaulError)?.message.hasPrefix("$ALL_PROXY: ") == true
        }
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
