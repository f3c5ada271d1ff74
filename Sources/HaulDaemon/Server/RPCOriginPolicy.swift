/// Which web pages may call the daemon from a browser: aria2's `--rpc-allow-origin-all`, or
/// Haul's list form `--rpc-allow-origin ORIGIN`.
///
/// A browser names the page that makes a request in its `Origin` header. A page of the daemon
/// itself (the dashboard) is always allowed; another page only when allowed here. A request
/// from a page that is not allowed is refused outright, WebSocket upgrades included: a browser
/// would not let the page read an answer without the CORS header anyway, but it would still
/// let the call run, and a WebSocket is not covered by CORS at all. The secret is still needed
/// on TCP either way; this only decides whether a browser page may try.
package struct RPCOriginPolicy: Sendable, Hashable {
    /// Every origin is allowed (`--rpc-allow-origin-all`); answers carry
    /// `Access-Control-Allow-Origin: *` as aria2's do.
    package var allowsAll: Bool
    /// Origins allowed one by one (`scheme://host[:port]`, as browsers send them).
    package var origins: Set<String>

    package init(allowsAll: Bool = false, origins: Set<String> = []) {
        self.allowsAll = allowsAll
        self.origins = Set(origins.map(Self.normalized))
    }

    /// What to do with a request.
    package enum Decision: Sendable, Hashable {
        /// No `Origin` header (not a browser page) or the daemon's own page: served as is.
        case plain
        /// Another page that is allowed: served, with this `Access-Control-Allow-Origin`.
        case crossOrigin(allowOrigin: String)
        /// Another page that is not allowed: refused.
        case refused
    }

    /// The decision for a request with this `Origin` header, arriving with this `Host` header.
    package func decide(origin: String?, host: String?) -> Decision {
        guard let origin, !origin.isEmpty else { return .plain }
        let normalized = Self.normalized(origin)
        if let host, Self.isSameOrigin(normalized, host: host) { return .plain }
        if allowsAll { return .crossOrigin(allowOrigin: "*") }
        if origins.contains(normalized) { return .crossOrigin(allowOrigin: origin) }
        return .refused
    }

    /// The daemon's own page: `http://HOST` or `https://HOST` where HOST is what the browser
    /// put in the `Host` header (host and port of the daemon it connected to).
    static func isSameOrigin(_ origin: String, host: String) -> Bool {
        let host = host.lowercased()
        return origin == "http://\(host)" || origin == "https://\(host)"
    }

    /// Lowercased, without a trailing slash: browsers send origins that way, people type
    /// them otherwise.
    static func normalized(_ origin: String) -> String {
        var value = origin.lowercased()
        while value.hasSuffix("/") { value.removeLast() }
        return value
    }
}
