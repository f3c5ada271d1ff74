import Foundation

/// Which proxy each request goes through, as curl decides it: one proxy for http URLs, one
/// for https URLs (each falling back to an all-protocols proxy), and hosts that go direct.
///
/// Haul reaches every origin through a proxy as a tunnel, https and http alike, so the proxy
/// never sees an https request's contents: `CONNECT` through an `http://` proxy (credentials
/// as `http://user:password@host:port`, sent as Basic `Proxy-Authorization`), or a SOCKS5
/// connection through a `socks5://`/`socks5h://` proxy (no credentials: see `Proxy.parse`).
/// A proxy that is set but cannot be used fails the requests it was meant for; Haul never
/// falls back to a direct connection.
public struct ProxySettings: Sendable, Hashable {
    /// The proxy for http URLs. Default nil: direct.
    public var http: Proxy?
    /// The proxy for https URLs. Default nil: direct.
    public var https: Proxy?
    /// Hosts reached directly: a name matches itself and its subdomains (`example.com` and a
    /// leading-dot `.example.com` both match `a.example.com`), an IP address matches itself,
    /// and `*` matches every host. As curl's `no_proxy`.
    public var noProxy: [String]

    /// Proxies for http and https URLs, and the hosts reached directly.
    public init(http: Proxy? = nil, https: Proxy? = nil, noProxy: [String] = []) {
        self.http = http
        self.https = https
        self.noProxy = noProxy
    }

    /// No proxy at all.
    public static let direct = ProxySettings()

    /// The settings curl would take from `environment`: `http_proxy` (lower case only: a web
    /// server's CGI sets `HTTP_PROXY` from a request header), `https_proxy` or `HTTPS_PROXY`,
    /// `all_proxy` or `ALL_PROXY` for whichever of the two is not set, `no_proxy` or
    /// `NO_PROXY`. A set value that cannot be used (see `Proxy.parse`) is an error naming the
    /// variable: ignoring it would connect directly where the user asked for a proxy.
    public static func fromEnvironment(_ environment: [String: String]) throws(HaulError) -> ProxySettings {
        func proxy(_ names: [String]) throws(HaulError) -> Proxy? {
            for name in names {
                guard let value = environment[name], !value.trimmingCharacters(in: .whitespaces).isEmpty else { continue }
                do {
                    return try Proxy.parse(value)
                } catch {
                    throw HaulError(.unsupportedProxy, "$\(name): \(error.message)")
                }
            }
            return nil
        }
        let all = try proxy(["all_proxy", "ALL_PROXY"])
        let http = try proxy(["http_proxy"]) ?? all
        let https = try proxy(["https_proxy", "HTTPS_PROXY"]) ?? all
        let noProxy = (environment["no_proxy"] ?? environment["NO_PROXY"]).map(Self.hostList) ?? []
        return ProxySettings(http: http, https: https, noProxy: noProxy)
    }

    /// The first reason one of the proxies cannot be used, or nil when both can.
    public var problem: HaulError? {
        http?.problem ?? https?.problem
    }

    /// `a.com, .b.org ,*` as a list of host patterns.
    public static func hostList(_ text: String) -> [String] {
        text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    /// The proxy for `url`, or nil to go direct.
    func proxy(for url: URL) -> Proxy? {
        let chosen = url.scheme?.lowercased() == "https" ? https : http
        guard let chosen, let host = url.host?.lowercased() else { return nil }
        return bypasses(host) ? nil : chosen
    }

    /// Whether `host` is in `noProxy`.
    func bypasses(_ host: String) -> Bool {
        let host = host.trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        // An address matches only itself; names match their subdomains too.
        let isAddress = host.contains(":") || host.allSatisfy { $0.isNumber || $0 == "." }
        for pattern in noProxy {
            var pattern = pattern.lowercased().trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
            if pattern == "*" { return true }
            if pattern.hasPrefix(".") { pattern.removeFirst() }
            if pattern.isEmpty { continue }
            if host == pattern || (!isAddress && host.hasSuffix("." + pattern)) { return true }
        }
        return false
    }
}
