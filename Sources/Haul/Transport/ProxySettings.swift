import Foundation

/// Which HTTP proxy each request goes through, as curl decides it: one proxy for http URLs,
/// one for https URLs (each falling back to an all-protocols proxy), and hosts that go direct.
///
/// Haul reaches every origin through a proxy with `CONNECT` (a tunnel), https and http alike,
/// so the proxy never sees an https request's contents. Only `http://` proxies are supported,
/// with credentials as `http://user:password@host:port` (sent as Basic `Proxy-Authorization`).
public struct ProxySettings: Sendable, Hashable {
    /// An HTTP proxy: where it is, and the credentials it wants, if any.
    public struct Proxy: Sendable, Hashable {
        public var host: String
        public var port: Int
        public var username: String?
        public var password: String?

        /// Parses `http://[user[:password]@]host[:port]` (port 1080 when absent, as curl);
        /// a bare `host:port` is taken as http. Nil for anything else (a SOCKS proxy, say).
        public init?(url text: String) {
            let trimmed = text.trimmingCharacters(in: .whitespaces)
            guard !trimmed.isEmpty else { return nil }
            let withScheme = trimmed.contains("://") ? trimmed : "http://" + trimmed
            guard let components = URLComponents(string: withScheme), components.scheme?.lowercased() == "http",
                  let host = components.host, !host.isEmpty
            else { return nil }
            self.host = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
            self.port = components.port ?? 1080
            self.username = components.percentEncodedUser.flatMap { $0.removingPercentEncoding }
            self.password = components.percentEncodedPassword.flatMap { $0.removingPercentEncoding }
        }

        public init(host: String, port: Int, username: String? = nil, password: String? = nil) {
            self.host = host
            self.port = port
            self.username = username
            self.password = password
        }
    }

    /// The proxy for http URLs. Default nil: direct.
    public var http: Proxy?
    /// The proxy for https URLs. Default nil: direct.
    public var https: Proxy?
    /// Hosts reached directly: a name matches itself and its subdomains (`example.com` and a
    /// leading-dot `.example.com` both match `a.example.com`), an IP address matches itself,
    /// and `*` matches every host. As curl's `no_proxy`.
    public var noProxy: [String]

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
    /// `NO_PROXY`. A value that is not an http proxy URL is reported in `unusable`.
    public static func fromEnvironment(_ environment: [String: String]) -> (settings: ProxySettings, unusable: [String]) {
        var unusable: [String] = []
        func proxy(_ names: [String]) -> Proxy?? {
            for name in names {
                guard let value = environment[name], !value.isEmpty else { continue }
                guard let proxy = Proxy(url: value) else {
                    unusable.append("\(name)=\(value)")
                    return .some(nil)
                }
                return .some(proxy)
            }
            return nil
        }
        let all = proxy(["all_proxy", "ALL_PROXY"]) ?? nil
        let http = proxy(["http_proxy"]) ?? all
        let https = proxy(["https_proxy", "HTTPS_PROXY"]) ?? all
        let noProxy = (environment["no_proxy"] ?? environment["NO_PROXY"]).map(Self.hostList) ?? []
        return (ProxySettings(http: http, https: https, noProxy: noProxy), unusable)
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
